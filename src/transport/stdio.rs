//! A server launched as a child process speaking newline-delimited JSON-RPC on
//! its stdin/stdout. The child gets its own process group so that everything
//! it starts can be stopped together; stderr goes into a bounded ring buffer.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::process_group::{self, Stop};
use super::{Incoming, TransportError};
use crate::jsonrpc::{decode_line, Frame, LineReader};

/// How to launch a stdio server.
#[derive(Debug, Clone, PartialEq)]
pub struct StdioSpec {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// Longest accepted line on stdout.
    pub max_line: usize,
    /// How much of stderr to keep (the tail).
    pub stderr_keep: usize,
    /// stdout is a log, not the protocol (a server spoken to over HTTP):
    /// it is drained into the same tail as stderr.
    pub stdout_is_log: bool,
    /// How many processes this spec (and every clone of it) has started.
    pub starts: StartCounter,
}

/// A count of server starts shared by the clones of one [`StdioSpec`]: what
/// a run spends on starting its server (the JSON report's
/// `run.server_starts`), and how many of them have not written their first
/// line yet (still starting up: a run weighs one more start against the
/// others already under way). Not part of a spec's identity: two specs
/// compare equal whatever they have started.
#[derive(Debug, Clone, Default)]
pub struct StartCounter(Arc<Starts>);

#[derive(Debug, Default)]
struct Starts {
    total: AtomicUsize,
    starting: AtomicUsize,
}

impl StartCounter {
    pub fn get(&self) -> usize {
        self.0.total.load(Ordering::Relaxed)
    }

    /// Servers started that have not written a line yet (nor ended).
    pub fn starting(&self) -> usize {
        self.0.starting.load(Ordering::Relaxed)
    }

    fn add_one(&self) -> StartingUp {
        self.0.total.fetch_add(1, Ordering::Relaxed);
        self.0.starting.fetch_add(1, Ordering::Relaxed);
        StartingUp(Arc::clone(&self.0))
    }
}

/// One server counted as starting until its first line (or its end, or
/// the connection's drop).
#[derive(Debug)]
struct StartingUp(Arc<Starts>);

impl Drop for StartingUp {
    fn drop(&mut self) {
        self.0.starting.fetch_sub(1, Ordering::Relaxed);
    }
}

impl PartialEq for StartCounter {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl StdioSpec {
    pub fn new(program: impl Into<String>, args: Vec<String>) -> Self {
        Self {
            program: program.into(),
            args,
            env: Vec::new(),
            cwd: None,
            max_line: crate::jsonrpc::DEFAULT_MAX_LINE,
            stderr_keep: 64 * 1024,
            stdout_is_log: false,
            starts: StartCounter::default(),
        }
    }

    /// The command line as a user would type it.
    pub fn display(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .map(shell_quote)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The tail of a stream, bounded in size, plus how much was seen in total.
#[derive(Debug, Default)]
pub struct RingBuffer {
    keep: usize,
    data: VecDeque<u8>,
    total: u64,
}

impl RingBuffer {
    pub fn new(keep: usize) -> Self {
        Self {
            keep,
            data: VecDeque::new(),
            total: 0,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let bytes = &bytes[bytes.len().saturating_sub(self.keep)..];
        let overflow = (self.data.len() + bytes.len()).saturating_sub(self.keep);
        self.data.drain(..overflow.min(self.data.len()));
        self.data.extend(bytes);
    }

    /// Bytes seen in total (kept or not).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept tail as text (lossy), noting how much was dropped before it.
    pub fn tail(&self) -> String {
        let (a, b) = self.data.as_slices();
        let mut bytes = a.to_vec();
        bytes.extend_from_slice(b);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let dropped = self.total - self.data.len() as u64;
        if dropped > 0 {
            format!("[… {dropped} earlier bytes of stderr not kept]\n{text}")
        } else {
            text
        }
    }
}

/// Process groups of every live child, so an interrupt can stop them all.
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn register_group(pgid: i32) {
    if let Ok(mut groups) = LIVE_GROUPS.lock() {
        groups.push(pgid);
    }
}

fn unregister_group(pgid: i32) {
    if let Ok(mut groups) = LIVE_GROUPS.lock() {
        groups.retain(|g| *g != pgid);
    }
}

/// Kills every process group this harness started (used on Ctrl-C).
pub fn kill_all_groups() {
    if let Ok(groups) = LIVE_GROUPS.lock() {
        for pgid in groups.iter() {
            process_group::signal(*pgid, Stop::Kill);
        }
    }
}

pub use super::process_group::describe_exit;

/// How a server process stands when asked; shown after "the server".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitState {
    Running,
    /// Its shutdown has begun.
    Stopping,
    /// It ended: how (`exited with status 1`, `was killed by signal 9 (SIGKILL)`).
    Ended(String),
    /// An HTTP server the harness did not start: only its connection is seen.
    Disconnected,
}

impl std::fmt::Display for ExitState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitState::Running => f.write_str("is still running"),
            ExitState::Stopping => f.write_str("is being stopped"),
            ExitState::Ended(how) => f.write_str(how),
            ExitState::Disconnected => f.write_str("closed the connection"),
        }
    }
}

/// A running stdio server.
pub struct StdioConnection {
    /// None once handed to a background shutdown.
    child: Option<Child>,
    pgid: i32,
    stdin: Option<ChildStdin>,
    /// stdout is read in the caller's task (no hop through another task),
    /// which keeps a request's round trip to one wake-up.
    stdout: Option<LineReader<BufReader<ChildStdout>>>,
    stderr: Arc<Mutex<RingBuffer>>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    reaped: Option<ExitStatus>,
    /// Held until the server's first line: it is still starting up.
    starting_up: Option<StartingUp>,
    /// How long a write may block on a server that does not read.
    write_limit: Duration,
    /// A write that did not finish (it timed out, or the caller stopped
    /// waiting for it): the stream may end in part of a message, so
    /// nothing more is written.
    unfinished_write: bool,
}

/// Why a server could not be started. A bare program name is looked up
/// on PATH, so "No such file or directory" would send the user looking for
/// a file beside them.
pub fn spawn_reason(program: &str, e: &std::io::Error) -> String {
    let bare = !program.contains('/') && !program.contains(std::path::MAIN_SEPARATOR);
    if bare && e.kind() == std::io::ErrorKind::NotFound {
        format!("no program named `{program}` on PATH (give its path, or install it)")
    } else {
        e.to_string()
    }
}

/// How long a write may block unless the session sets its own limit.
const WRITE_LIMIT: Duration = Duration::from_secs(10);

impl StdioConnection {
    /// Launches the server.
    pub fn spawn(spec: &StdioSpec) -> Result<Self, TransportError> {
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        process_group::isolate(&mut cmd);
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().map_err(|e| TransportError::Spawn {
            command: spec.display(),
            reason: spawn_reason(&spec.program, &e),
        })?;
        let starting_up = Some(spec.starts.add_one());
        let pgid = child.id().map_or(0, |id| id as i32);
        register_group(pgid);
        let stdout = child.stdout.take();
        let stderr_pipe = child.stderr.take();
        let stdin = child.stdin.take();
        let stdout = stdout
            .map(|out| LineReader::new(BufReader::with_capacity(64 * 1024, out), spec.max_line));
        let stderr = Arc::new(Mutex::new(RingBuffer::new(spec.stderr_keep)));
        let stderr_task = stderr_pipe.map(|pipe| tokio::spawn(read_stderr(pipe, stderr.clone())));
        Ok(Self {
            child: Some(child),
            pgid,
            stdin,
            stdout,
            stderr,
            stderr_task,
            reaped: None,
            starting_up,
            write_limit: WRITE_LIMIT,
            unfinished_write: false,
        })
    }

    /// Writes to the server's stdin may block for at most `limit` (a
    /// session's request timeout): a server that stops reading gets its
    /// verdict within the time it was given.
    pub fn limit_writes(&mut self, limit: Duration) {
        self.write_limit = limit;
    }

    /// Writes bytes to the server's stdin.
    pub async fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        if self.unfinished_write {
            return Err(TransportError::Closed(
                "an earlier message could not be written in full (the server stopped reading \
                 its stdin), so nothing more is sent"
                    .into(),
            ));
        }
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(TransportError::Closed("stdin is already closed".into()));
        };
        let write = async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        };
        // Cleared when the write ends, well or with an error (a closed pipe
        // reaches nobody, and the next write says why again): a write that
        // timed out, or whose caller stopped waiting, leaves it set.
        self.unfinished_write = true;
        let limit = self.write_limit;
        let ended = tokio::time::timeout(limit, write).await;
        self.unfinished_write = ended.is_err();
        match ended {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(TransportError::Closed(format!(
                "cannot write to the server's stdin ({e}); the server {}",
                self.exit_state().await
            ))),
            Err(_) => Err(TransportError::Closed(format!(
                "the server stopped reading its stdin (a write blocked for {} ms)",
                limit.as_millis()
            ))),
        }
    }

    /// The next thing the server wrote: `Closed` once when stdout ends, then `None`.
    /// Cancellation-safe, so it can sit inside a timeout.
    pub async fn recv(&mut self) -> Option<Incoming> {
        let reader = self.stdout.as_mut()?;
        let incoming = next_incoming(reader).await;
        self.starting_up = None;
        if incoming == Incoming::Closed {
            self.stdout = None;
        }
        Some(incoming)
    }

    pub fn stderr_tail(&self) -> String {
        self.stderr.lock().map(|b| b.tail()).unwrap_or_default()
    }

    /// Bytes the server has written to stderr so far.
    pub fn stderr_total(&self) -> u64 {
        self.stderr.lock().map(|b| b.total()).unwrap_or_default()
    }

    /// Bytes of an unfinished line on stdout (a server that stopped mid-line).
    pub fn pending_bytes(&self) -> usize {
        self.stdout.as_ref().map_or(0, LineReader::pending)
    }

    /// How the process stands, waiting briefly for it to end.
    pub async fn exit_state(&mut self) -> ExitState {
        if let Some(status) = self.reaped {
            return ExitState::Ended(describe_exit(&status));
        }
        let Some(child) = self.child.as_mut() else {
            return ExitState::Stopping;
        };
        match tokio::time::timeout(Duration::from_millis(200), child.wait()).await {
            Ok(Ok(status)) => {
                self.reaped = Some(status);
                ExitState::Ended(describe_exit(&status))
            }
            _ => ExitState::Running,
        }
    }

    /// Whether the process has ended (without waiting).
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        if self.reaped.is_none() {
            self.reaped = self.child.as_mut()?.try_wait().ok()?;
        }
        self.reaped
    }

    /// Closes stdin and returns at once, saying how the process stands; a
    /// background task gives it `grace` to exit, then SIGTERM, then SIGKILL
    /// to the group. [`reap_all`] waits for every such task, so a run leaves
    /// no process behind without waiting for each server in turn.
    pub fn shutdown_in_background(&mut self, grace: Duration) -> String {
        self.stdin = None;
        if let Some(status) = self.try_exit() {
            process_group::signal(self.pgid, Stop::Kill);
            unregister_group(self.pgid);
            return describe_exit(&status);
        }
        let Some(child) = self.child.take() else {
            return "is being stopped".to_string();
        };
        let pgid = self.pgid;
        let task = tokio::spawn(async move {
            let mut child = child;
            stop_child(&mut child, pgid, grace).await;
        });
        if let Ok(mut tasks) = REAPERS.lock() {
            tasks.retain(|t| !t.is_finished());
            tasks.push(task);
        }
        "was running when the scenario ended (stopped in the background)".to_string()
    }

    /// Closes stdin, waits, then SIGTERM, then SIGKILL to the whole process group.
    pub async fn shutdown(&mut self, grace: Duration) -> String {
        self.stop(grace, grace).await
    }

    /// Stops a server that serves elsewhere than on its stdio (a Streamable
    /// HTTP server the run launched), as such a server is stopped: stdin
    /// closed and SIGTERM at once, SIGKILL after `grace`. Closing stdin
    /// alone ends none of them, and waiting for it held every run with a
    /// launched server half a second past its report.
    pub async fn terminate(&mut self, grace: Duration) -> String {
        self.stop(Duration::ZERO, grace).await
    }

    /// Closes stdin and gives the server `on_eof` to exit of itself (a
    /// server that has exited already is told as such), then SIGTERM, then
    /// SIGKILL after `grace`.
    async fn stop(&mut self, on_eof: Duration, grace: Duration) -> String {
        self.stdin = None;
        let how = match self.wait_for(on_eof).await {
            Some(status) => describe_exit(&status),
            None => self.terminate_then_kill(grace).await,
        };
        self.after_stop(how).await
    }

    /// SIGTERM to the process group, then SIGKILL if the server has not
    /// exited after `grace`; how it ended.
    async fn terminate_then_kill(&mut self, grace: Duration) -> String {
        process_group::signal(self.pgid, Stop::Terminate);
        match self.wait_for(grace).await {
            Some(status) => format!("{} after SIGTERM", describe_exit(&status)),
            None => {
                process_group::signal(self.pgid, Stop::Kill);
                let _ = self.wait_for(grace).await;
                "ignored SIGTERM and was killed".to_string()
            }
        }
    }

    /// What every stop ends with, once the leader has exited or been killed.
    async fn after_stop(&mut self, how: String) -> String {
        // Children that kept running after the leader exited are stopped too.
        process_group::signal(self.pgid, Stop::Kill);
        unregister_group(self.pgid);
        // Let the stderr reader drain what the server wrote before it ended.
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(Duration::from_millis(200), task).await;
        }
        how
    }

    async fn wait_for(&mut self, grace: Duration) -> Option<ExitStatus> {
        if let Some(status) = self.reaped {
            return Some(status);
        }
        let status = tokio::time::timeout(grace, self.child.as_mut()?.wait())
            .await
            .ok()?
            .ok()?;
        self.reaped = Some(status);
        Some(status)
    }
}

impl Drop for StdioConnection {
    fn drop(&mut self) {
        // A child handed to a background shutdown is that task's to stop.
        if self.child.is_some() {
            process_group::signal(self.pgid, Stop::Kill);
            unregister_group(self.pgid);
        }
    }
}

/// Background shutdowns still running.
static REAPERS: Mutex<Vec<tokio::task::JoinHandle<()>>> = Mutex::new(Vec::new());

/// The escalation of a background shutdown: grace, SIGTERM, grace, SIGKILL.
async fn stop_child(child: &mut Child, pgid: i32, grace: Duration) {
    let exited = |r: Result<std::io::Result<ExitStatus>, _>| matches!(r, Ok(Ok(_)));
    if !exited(tokio::time::timeout(grace, child.wait()).await) {
        process_group::signal(pgid, Stop::Terminate);
        if !exited(tokio::time::timeout(grace, child.wait()).await) {
            process_group::signal(pgid, Stop::Kill);
            let _ = child.wait().await;
        }
    }
    process_group::signal(pgid, Stop::Kill);
    unregister_group(pgid);
}

/// Waits for every background shutdown to finish (end of a run).
pub async fn reap_all() {
    let tasks: Vec<_> = REAPERS
        .lock()
        .map(|mut t| std::mem::take(&mut *t))
        .unwrap_or_default();
    for task in tasks {
        let _ = task.await;
    }
}

async fn read_stderr(mut pipe: impl tokio::io::AsyncRead + Unpin, buffer: Arc<Mutex<RingBuffer>>) {
    let mut chunk = vec![0u8; 16 * 1024];
    while let Ok(n) = pipe.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        if let Ok(mut b) = buffer.lock() {
            b.push(&chunk[..n]);
        }
    }
}

/// The next thing a newline-delimited JSON-RPC stream holds (blank lines
/// skipped); `Closed` when it ends. Cancellation-safe.
pub(super) async fn next_incoming<R: AsyncBufRead + Unpin>(reader: &mut LineReader<R>) -> Incoming {
    loop {
        return match reader.next_frame().await {
            Ok(Some(Frame::Line(line))) if line.iter().all(u8::is_ascii_whitespace) => continue,
            Ok(Some(Frame::Line(line))) => Incoming::Line(line),
            Ok(Some(Frame::Overlong { limit, seen })) => Incoming::Garbage {
                reason: format!("line exceeded {} ({} bytes seen)", human_size(limit), seen),
                excerpt: String::new(),
            },
            Ok(Some(Frame::Partial(line))) => Incoming::Garbage {
                reason: "stdout ended in the middle of a line (no newline)".into(),
                excerpt: excerpt(&line),
            },
            Ok(None) | Err(_) => Incoming::Closed,
        };
    }
}

/// A line decoded whole: the message, or why it is not one.
pub fn decode_incoming(line: &[u8]) -> Incoming {
    match decode_line(line) {
        Ok(value) => Incoming::Message(value),
        Err(e) => Incoming::Garbage {
            reason: e.to_string(),
            excerpt: excerpt(line),
        },
    }
}

/// The first bytes of a line, made printable.
pub fn excerpt(line: &[u8]) -> String {
    let cut = &line[..line.len().min(120)];
    let text = String::from_utf8_lossy(cut).into_owned();
    if line.len() > cut.len() {
        format!("{text}…")
    } else {
        text
    }
}

pub fn human_size(bytes: usize) -> String {
    if bytes >= 1024 * 1024 && bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_buffer_keeps_the_tail() {
        let mut b = RingBuffer::new(5);
        b.push(b"hello ");
        b.push(b"world");
        assert_eq!(b.tail(), "[… 6 earlier bytes of stderr not kept]\nworld");
        let mut small = RingBuffer::new(100);
        small.push(b"ok");
        assert_eq!(small.tail(), "ok");
    }

    #[test]
    fn a_bare_name_not_found_is_said_to_be_missing_from_path() {
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(
            spawn_reason("no-such-server", &missing),
            "no program named `no-such-server` on PATH (give its path, or install it)"
        );
        // A path names a file: the system's own words say what is wrong.
        assert_eq!(
            spawn_reason("./no/such/server", &missing),
            missing.to_string()
        );
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(spawn_reason("server", &denied), denied.to_string());
    }

    #[test]
    fn quotes_commands_for_display() {
        let spec = StdioSpec::new("python3", vec!["-c".into(), "print('x y')".into()]);
        assert_eq!(spec.display(), "python3 -c 'print('\\''x y'\\'')'");
    }

    #[tokio::test]
    async fn talks_to_a_child_and_reports_garbage_and_exit() {
        let spec = StdioSpec::new(
            "sh",
            vec![
                "-c".into(),
                "read line; echo \"$line\"; echo not-json; echo oops >&2; exit 3".into(),
            ],
        );
        let mut conn = StdioConnection::spawn(&spec).expect("spawn");
        conn.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
            .await
            .expect("send");
        let decoded = |item: Option<Incoming>| match item {
            Some(Incoming::Line(line)) => Some(decode_incoming(&line)),
            other => other,
        };
        assert!(matches!(
            decoded(conn.recv().await),
            Some(Incoming::Message(_))
        ));
        assert!(matches!(
            decoded(conn.recv().await),
            Some(Incoming::Garbage { .. })
        ));
        assert!(matches!(decoded(conn.recv().await), Some(Incoming::Closed)));
        assert_eq!(
            conn.shutdown(Duration::from_millis(500)).await,
            "exited with status 3"
        );
        assert!(conn.stderr_tail().contains("oops"));
    }

    #[tokio::test]
    async fn a_server_is_starting_until_its_first_line() {
        let spec = StdioSpec::new("sh", vec!["-c".into(), "read line; echo up; cat".into()]);
        let mut conn = StdioConnection::spawn(&spec).expect("spawn");
        assert_eq!((spec.starts.get(), spec.starts.starting()), (1, 1));
        conn.send(b"go\n").await.expect("send");
        assert!(conn.recv().await.is_some());
        assert_eq!((spec.starts.get(), spec.starts.starting()), (1, 0));
    }

    #[tokio::test]
    async fn terminate_signals_at_once_a_server_that_outlives_its_stdin() {
        // `sleep` never reads its stdin: closing it ends nothing, and a
        // stop that waited for that would wait out the whole grace.
        let spec = StdioSpec::new("sleep", vec!["30".into()]);
        let mut conn = StdioConnection::spawn(&spec).expect("spawn");
        let grace = Duration::from_secs(20);
        let asked = std::time::Instant::now();
        let how = conn.terminate(grace).await;
        assert_eq!(how, "was killed by signal 15 (SIGTERM) after SIGTERM");
        assert!(asked.elapsed() < grace / 2, "took {:?}", asked.elapsed());
    }

    #[tokio::test]
    async fn terminate_tells_a_server_that_had_already_exited() {
        let spec = StdioSpec::new("sh", vec!["-c".into(), "exit 4".into()]);
        let mut conn = StdioConnection::spawn(&spec).expect("spawn");
        while conn.try_exit().is_none() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            conn.terminate(Duration::from_millis(500)).await,
            "exited with status 4"
        );
    }

    #[tokio::test]
    async fn stops_a_server_that_ignores_sigterm() {
        let spec = StdioSpec::new(
            "sh",
            vec![
                "-c".into(),
                "trap '' TERM; while true; do sleep 0.05; done".into(),
            ],
        );
        let mut conn = StdioConnection::spawn(&spec).expect("spawn");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let how = conn.shutdown(Duration::from_millis(200)).await;
        assert_eq!(how, "ignored SIGTERM and was killed");
    }

    #[tokio::test]
    async fn a_write_to_a_server_that_stops_reading_ends_at_the_limit_and_nothing_follows_it() {
        let spec = StdioSpec::new("sh", vec!["-c".into(), "sleep 5".into()]);
        let mut conn = StdioConnection::spawn(&spec).expect("spawn");
        conn.limit_writes(Duration::from_millis(200));
        // More than a pipe holds, to a server that never reads.
        let big = vec![b'x'; 1 << 20];
        let blocked = conn.send(&big).await.expect_err("the write cannot finish");
        assert!(
            blocked.to_string().contains("a write blocked for 200 ms"),
            "{blocked}"
        );
        // The stream may end in part of that message: nothing more goes.
        nothing_follows(&mut conn).await;
        // So too after a caller that stopped waiting for its write.
        let mut other = StdioConnection::spawn(&spec).expect("spawn");
        let gave_up = tokio::time::timeout(Duration::from_millis(100), other.send(&big)).await;
        assert!(gave_up.is_err(), "the write was still blocked");
        nothing_follows(&mut other).await;
        conn.shutdown(Duration::from_millis(50)).await;
        other.shutdown(Duration::from_millis(50)).await;
    }

    /// A message after an unfinished write is refused, saying why.
    async fn nothing_follows(conn: &mut StdioConnection) {
        let after = conn
            .send(b"{}\n")
            .await
            .expect_err("nothing is sent after it");
        assert!(
            after.to_string().contains("could not be written in full"),
            "{after}"
        );
    }

    #[tokio::test]
    async fn a_write_to_a_server_that_exited_says_so_each_time() {
        let spec = StdioSpec::new("sh", vec!["-c".into(), "exit 3".into()]);
        let mut conn = StdioConnection::spawn(&spec).expect("spawn");
        // Wait for the exit, so that the pipe is closed.
        let _ = conn.wait_for(Duration::from_secs(5)).await;
        let big = vec![b'x'; 1 << 20];
        for attempt in 0..2 {
            let e = conn.send(&big).await.expect_err("nobody reads");
            let e = e.to_string();
            assert!(
                e.contains("cannot write to the server's stdin") && !e.contains("stopped reading"),
                "attempt {attempt}: {e}"
            );
        }
    }
}
