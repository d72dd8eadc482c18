//! The stdio relay: the host launches `mcp-conform watch -- SERVER…` in
//! place of the server. The server runs in a process group of its own; the
//! host's stdin goes to its stdin and its stdout to the host's stdout, byte
//! for byte, each chunk written on as soon as it is read. Copies of the
//! lines go to the [`Sink`] on a thread of its own, so checking never delays
//! the relay. Its stderr is forwarded to ours.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use super::trace::Side;
use super::{LineSplitter, Sink};
use crate::transport::process_group::{self, Stop};

/// How to launch the watched server.
#[derive(Debug, Clone, Default)]
pub struct StdioOptions {
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// How long the server may take to exit after its stdin closes before
    /// it is sent SIGTERM (then, a second later, SIGKILL).
    pub grace: Duration,
}

/// The server could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the server `{command}`: {reason}")]
pub struct SpawnError {
    pub command: String,
    pub reason: String,
}

/// How the watched connection ended.
pub struct Watched {
    pub sink: Sink,
    /// "the host closed stdin", "the server exited", "SIGTERM".
    pub ended: String,
    /// How the server process ended.
    pub server_exit: String,
}

/// What the relay threads tell the main loop.
enum Control {
    HostClosed,
    ServerClosed,
}

/// A copy of one line for the sink, or the end.
enum Wire {
    Line(Side, Instant, Vec<u8>),
    Done,
}

const CHUNK: usize = 64 * 1024;

/// Relays until the host closes stdin, the server exits, or SIGINT/SIGTERM
/// arrives; then stops the server's process group and returns the sink.
pub async fn run(opts: &StdioOptions, sink: Sink) -> Result<Watched, SpawnError> {
    let mut child = spawn(opts)?;
    let pgid = child.id() as i32;
    let (ctrl_tx, mut ctrl) = unbounded_channel();
    let (wire_tx, wire_rx) = mpsc::channel::<Wire>();
    let checker = std::thread::spawn(move || check_lines(sink, wire_rx));
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    if let Some(pipe) = stdin {
        let (c, w) = (ctrl_tx.clone(), wire_tx.clone());
        std::thread::spawn(move || relay_up(pipe, w, c));
    }
    if let Some(pipe) = stdout {
        let (c, w) = (ctrl_tx.clone(), wire_tx.clone());
        std::thread::spawn(move || relay_down(pipe, w, c));
    }
    if let Some(pipe) = stderr {
        std::thread::spawn(move || forward_stderr(pipe));
    }
    drop(ctrl_tx);
    let ended = wait_for_end(&mut ctrl).await;
    let server_exit = stop(&mut child, pgid, &ended, opts.grace).await;
    if !matches!(ended, End::ServerClosed) {
        // The rest of what the server wrote before it ended (a grandchild
        // holding its stdout open could keep it from ever ending).
        let drained =
            async { while !matches!(ctrl.recv().await, Some(Control::ServerClosed) | None) {} };
        let _ = tokio::time::timeout(Duration::from_millis(500), drained).await;
    }
    let _ = wire_tx.send(Wire::Done);
    let mut sink = tokio::task::spawn_blocking(move || checker.join())
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| SpawnError {
            command: opts.command.join(" "),
            reason: "the checking thread panicked".into(),
        })?;
    sink.close();
    Ok(Watched {
        sink,
        ended: ended.describe().to_string(),
        server_exit,
    })
}

fn spawn(opts: &StdioOptions) -> Result<Child, SpawnError> {
    let err = |reason: String| SpawnError {
        command: opts.command.join(" "),
        reason,
    };
    let (program, args) = opts
        .command
        .split_first()
        .ok_or_else(|| err("no server command given after `--`".into()))?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in &opts.env {
        cmd.env(k, v);
    }
    if let Some(dir) = &opts.cwd {
        cmd.current_dir(dir);
    }
    isolate(&mut cmd);
    cmd.spawn()
        .map_err(|e| err(crate::transport::stdio::spawn_reason(program, &e)))
}

/// The server leads a process group of its own (so it and everything it
/// starts are stopped together) and, on Linux, is killed if watch itself
/// dies without a chance to stop it (SIGKILL from the host).
#[cfg(unix)]
fn isolate(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches no
    // memory of the parent; it runs in the child between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

#[cfg(windows)]
fn isolate(cmd: &mut Command) {
    use std::os::windows::process::CommandExt;
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    cmd.creation_flags(CREATE_NEW_PROCESS_GROUP);
}

/// Host stdin → server stdin. On end of input the server's stdin is closed.
fn relay_up(mut server: ChildStdin, wire: mpsc::Sender<Wire>, ctrl: UnboundedSender<Control>) {
    let mut host = std::io::stdin().lock();
    let mut buf = vec![0u8; CHUNK];
    let mut lines = LineSplitter::default();
    loop {
        let n = match host.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let at = Instant::now();
        let chunk = &buf[..n];
        // The copy goes to the checker first, so that it sees a request
        // before the answer the server may write the moment it reads it.
        lines.push(chunk, |l| send_line(&wire, Side::Client, at, l));
        if server
            .write_all(chunk)
            .and_then(|_| server.flush())
            .is_err()
        {
            break;
        }
    }
    if let Some(rest) = lines.finish() {
        send_line(&wire, Side::Client, Instant::now(), &rest);
    }
    drop(server);
    let _ = ctrl.send(Control::HostClosed);
}

/// Server stdout → host stdout.
fn relay_down(mut server: ChildStdout, wire: mpsc::Sender<Wire>, ctrl: UnboundedSender<Control>) {
    let stdout = std::io::stdout();
    let mut buf = vec![0u8; CHUNK];
    let mut lines = LineSplitter::default();
    let mut host_gone = false;
    loop {
        let n = match server.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let at = Instant::now();
        let chunk = &buf[..n];
        lines.push(chunk, |l| send_line(&wire, Side::Server, at, l));
        if !host_gone {
            let mut out = stdout.lock();
            if out.write_all(chunk).and_then(|_| out.flush()).is_err() {
                // The host is gone: keep reading so the server is not blocked.
                host_gone = true;
                let _ = ctrl.send(Control::HostClosed);
            }
        }
    }
    if let Some(rest) = lines.finish() {
        send_line(&wire, Side::Server, Instant::now(), &rest);
    }
    let _ = ctrl.send(Control::ServerClosed);
}

fn send_line(wire: &mpsc::Sender<Wire>, from: Side, at: Instant, line: &[u8]) {
    // Blank lines carry no message; a stdio reader skips them.
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let _ = wire.send(Wire::Line(from, at, line.to_vec()));
}

fn forward_stderr(mut server: ChildStderr) {
    let mut buf = vec![0u8; 8 * 1024];
    while let Ok(n) = server.read(&mut buf) {
        if n == 0 {
            break;
        }
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(&buf[..n]).and_then(|_| err.flush());
    }
}

fn check_lines(mut sink: Sink, wire: mpsc::Receiver<Wire>) -> Sink {
    while let Ok(Wire::Line(from, at, bytes)) = wire.recv() {
        sink.message(from, at, &bytes, None);
    }
    sink
}

enum End {
    HostClosed,
    ServerClosed,
    Signal(&'static str),
}

impl End {
    fn describe(&self) -> &'static str {
        match self {
            End::HostClosed => "the host closed the connection",
            End::ServerClosed => "the server closed its stdout",
            End::Signal(name) => name,
        }
    }
}

#[cfg(unix)]
async fn wait_for_end(ctrl: &mut tokio::sync::mpsc::UnboundedReceiver<Control>) -> End {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return from_control(ctrl.recv().await);
    };
    tokio::select! {
        c = ctrl.recv() => from_control(c),
        _ = int.recv() => End::Signal("SIGINT"),
        _ = term.recv() => End::Signal("SIGTERM"),
    }
}

#[cfg(windows)]
async fn wait_for_end(ctrl: &mut tokio::sync::mpsc::UnboundedReceiver<Control>) -> End {
    tokio::select! {
        c = ctrl.recv() => from_control(c),
        _ = tokio::signal::ctrl_c() => End::Signal("Ctrl-C"),
    }
}

fn from_control(c: Option<Control>) -> End {
    match c {
        Some(Control::HostClosed) | None => End::HostClosed,
        Some(Control::ServerClosed) => End::ServerClosed,
    }
}

/// Stops the server: after a host's close it has `grace` to exit on its
/// own; then SIGTERM, a second, SIGKILL. Whatever is left of its process
/// group is killed. Returns how it ended.
async fn stop(child: &mut Child, pgid: i32, ended: &End, grace: Duration) -> String {
    let first_wait = match ended {
        End::Signal(_) => Duration::ZERO,
        _ => grace,
    };
    let mut status = wait_within(child, first_wait).await;
    if status.is_none() {
        process_group::signal(pgid, Stop::Terminate);
        status = wait_within(child, Duration::from_secs(1)).await;
    }
    process_group::signal(pgid, Stop::Kill);
    if status.is_none() {
        status = wait_within(child, Duration::from_secs(2)).await;
    }
    match status {
        Some(s) => process_group::describe_exit(&s),
        None => "did not exit after SIGKILL".to_string(),
    }
}

async fn wait_within(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
