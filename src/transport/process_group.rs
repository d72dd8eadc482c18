//! Everything a launched server starts is stopped together. On Unix the
//! server leads a process group of its own and the group is signalled; on
//! Windows it gets a process group of its own (so a Ctrl-C in the harness's
//! console is not delivered to it twice) and its process tree is ended with
//! `taskkill /T`.

use std::process::ExitStatus;

use tokio::process::Command;

/// How a group is asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A request the server may handle (SIGTERM; on Windows, `taskkill /T`).
    Terminate,
    /// Not refusable (SIGKILL; on Windows, `taskkill /T /F`).
    Kill,
}

/// Makes the command's process the leader of a new group.
#[cfg(unix)]
pub fn isolate(cmd: &mut Command) {
    cmd.process_group(0);
}

#[cfg(windows)]
pub fn isolate(cmd: &mut Command) {
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    cmd.creation_flags(CREATE_NEW_PROCESS_GROUP);
}

/// Signals the group whose leader is `pgid`; a group that is gone is fine.
#[cfg(unix)]
pub fn signal(pgid: i32, stop: Stop) {
    let sig = match stop {
        Stop::Terminate => libc::SIGTERM,
        Stop::Kill => libc::SIGKILL,
    };
    // SAFETY: kill(2) with a negative pid signals a process group; it has no
    // memory-safety preconditions. A group that no longer exists gives ESRCH.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

#[cfg(windows)]
pub fn signal(pgid: i32, stop: Stop) {
    let pid = pgid.to_string();
    let mut args = vec!["/PID", pid.as_str(), "/T"];
    if stop == Stop::Kill {
        args.push("/F");
    }
    // A tree that is already gone makes taskkill fail, which is fine.
    let _ = std::process::Command::new("taskkill")
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// Describes how a process ended, in the words a report uses.
#[cfg(unix)]
pub fn describe_exit(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig} ({})", signal_name(sig)),
        _ => "ended".to_string(),
    }
}

#[cfg(windows)]
pub fn describe_exit(status: &ExitStatus) -> String {
    match status.code() {
        // NTSTATUS codes of a crash, as Windows reports them.
        Some(code) if (code as u32) & 0xC000_0000 == 0xC000_0000 => {
            format!("crashed with status {:#010X}", code as u32)
        }
        Some(code) => format!("exited with status {code}"),
        None => "ended".to_string(),
    }
}

#[cfg(unix)]
fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGINT => "SIGINT",
        _ => "signal",
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn exits_are_described_by_code_or_signal() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            describe_exit(&ExitStatus::from_raw(3 << 8)),
            "exited with status 3"
        );
        assert_eq!(
            describe_exit(&ExitStatus::from_raw(libc::SIGSEGV)),
            "was killed by signal 11 (SIGSEGV)"
        );
    }
}
