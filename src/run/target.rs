//! The server under test and how to open a connection to it.

use std::time::{Duration, Instant};

use crate::session::{Connection, Era, SharedProcess};
use crate::transport::stdio::StartCounter;
use crate::transport::{HttpConnection, HttpSpec, StdioConnection, StdioSpec, TransportError};

#[derive(Clone)]
pub enum Target {
    /// A command launched once per session, spoken to over stdio.
    Stdio(StdioSpec),
    /// A Streamable HTTP endpoint; every session is a new HTTP session on it.
    /// `process` is the server the harness launched for the run, if any.
    Http {
        spec: HttpSpec,
        process: Option<SharedProcess>,
        command: Option<String>,
    },
    /// The reference server in the same process, spoken to with the stdio
    /// framing: a fresh server per session, as a stdio command would be
    /// (tests and library users; the command line always starts processes).
    InProcess(crate::reference::Config),
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display())
    }
}

impl Target {
    /// The target as a user would recognise it (a command line or a URL).
    pub fn display(&self) -> String {
        match self {
            Target::Stdio(spec) => spec.display(),
            Target::Http {
                spec,
                command: Some(c),
                ..
            } => format!("{} ({c})", spec.url),
            Target::Http { spec, .. } => spec.url.clone(),
            Target::InProcess(_) => "the in-process reference server".to_string(),
        }
    }

    pub fn transport(&self) -> &'static str {
        match self {
            Target::Stdio(_) => "stdio",
            Target::Http { .. } => "http",
            Target::InProcess(_) => "stdio",
        }
    }

    /// The target as the command line names it (`-- CMD`, `--url U`).
    pub fn as_argument(&self) -> String {
        match self {
            Target::Stdio(spec) => format!("-- {}", spec.display()),
            Target::Http { spec, .. } => format!("--url {}", spec.url),
            Target::InProcess(_) => "-- mcp-conform serve-reference".to_string(),
        }
    }

    /// How many server processes the run has started so far: one per
    /// stdio session, the one launched process of an HTTP target; None for
    /// the in-process reference server, which starts no process.
    pub fn server_starts(&self) -> Option<usize> {
        match self {
            Target::Stdio(spec) => Some(spec.starts.get()),
            Target::Http { process, .. } => Some(usize::from(process.is_some())),
            Target::InProcess(_) => None,
        }
    }

    /// The start counter of a target whose sessions each start a process
    /// (stdio): what a pool weighs a start against.
    pub fn start_counter(&self) -> Option<StartCounter> {
        match self {
            Target::Stdio(spec) => Some(spec.starts.clone()),
            _ => None,
        }
    }

    /// Opens a fresh connection: a new process on stdio, a new HTTP session on HTTP.
    pub async fn connect(&self, era: &Era) -> Result<Connection, TransportError> {
        match self {
            Target::Stdio(spec) => {
                StdioConnection::spawn(spec).map(|c| Connection::Stdio(Box::new(c)))
            }
            Target::Http { spec, process, .. } => {
                HttpConnection::new(spec, era.is_stateless(), &era.version)
                    .map(|c| Connection::Http(Box::new(c), process.clone()))
            }
            Target::InProcess(config) => {
                let (input, output) = crate::reference::in_process::spawn(config.clone());
                let pipe = crate::transport::PipeConnection::new(input, output);
                Ok(Connection::Pipe(Box::new(pipe)))
            }
        }
    }

    /// Launches `command` for an HTTP target and waits (bounded) until `url` answers.
    pub async fn launch_http(
        spec: HttpSpec,
        command: StdioSpec,
        startup: Duration,
    ) -> Result<Target, TransportError> {
        let mut command = command;
        command.stdout_is_log = true;
        let display = command.display();
        // Any answer, a redirect too, means the server is up; none is followed.
        let builder = reqwest::Client::builder()
            .connect_timeout(Duration::from_millis(500))
            .redirect(reqwest::redirect::Policy::none());
        let client = crate::transport::http::with_proxy(builder, spec.proxy.as_deref())
            .and_then(reqwest::ClientBuilder::build)
            .map_err(|e| TransportError::Closed(e.to_string()))?;
        let answers = |client: &reqwest::Client| {
            client
                .get(&spec.url)
                .timeout(Duration::from_millis(500))
                .send()
        };
        // Something already answering there would be tested instead of the
        // server about to be launched.
        if answers(&client).await.is_ok() {
            return Err(TransportError::Spawn {
                command: display,
                reason: format!(
                    "{} already answers before the server is started: the port is taken \
                     (by an earlier server still running?); stop it or choose another port",
                    spec.url
                ),
            });
        }
        let mut process = StdioConnection::spawn(&command)?;
        let deadline = Instant::now() + startup;
        loop {
            if answers(&client).await.is_ok() {
                break;
            }
            if let Some(status) = process.try_exit() {
                let tail = process.stderr_tail();
                process.shutdown(Duration::from_millis(100)).await;
                return Err(TransportError::Spawn {
                    command: display,
                    reason: format!(
                        "the server {} before {} answered{}",
                        crate::transport::stdio::describe_exit(&status),
                        spec.url,
                        output_tail(&tail)
                    ),
                });
            }
            if Instant::now() >= deadline {
                let exit = process.exit_state().await;
                let tail = process.stderr_tail();
                process.terminate(Duration::from_millis(300)).await;
                return Err(TransportError::Spawn {
                    command: display,
                    reason: format!(
                        "{} did not answer within {} ms (the server {exit}){}",
                        spec.url,
                        startup.as_millis(),
                        output_tail(&tail)
                    ),
                });
            }
            // A refused connection costs next to nothing: asking often
            // starts the run as soon as the server listens.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(Target::Http {
            spec,
            process: Some(std::sync::Arc::new(tokio::sync::Mutex::new(process))),
            command: Some(display),
        })
    }

    /// Stops a server the harness launched for the run: SIGTERM, and
    /// SIGKILL if it has not exited half a second later.
    pub async fn stop(&self) -> Option<String> {
        self.stop_within(Duration::from_millis(500)).await
    }

    /// [`Target::stop`], SIGKILL after `grace`; how the server ended.
    pub async fn stop_within(&self, grace: Duration) -> Option<String> {
        match self {
            Target::Http {
                process: Some(p), ..
            } => Some(p.lock().await.terminate(grace).await),
            _ => None,
        }
    }
}

/// The last lines a launched server wrote, for an error message.
fn output_tail(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("\n--- server output (tail) ---\n{}", tail.trim_end())
    }
}
