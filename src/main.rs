//! The `mcp-conform` command line. Library errors become one-line messages
//! and the exit codes of the README here, and nowhere else.

mod cli;

use std::process::ExitCode;

use clap::Parser;

/// A run allocates and frees many small JSON values from several threads at
/// once; with glibc's allocator that was about 40% of the harness's CPU time
/// (arena locks, consolidation), measured with perf on the whole catalog.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A hostile server can make the harness fill a buffer up to the message cap
/// (16 MiB) in each of several sessions, one after another. mimalloc keeps
/// freed memory for a while and commits its arenas eagerly, so such a run
/// peaked at 123 to 172 MiB; purging freed memory at once and committing on
/// use keeps it at 64 to 88 MiB, at no measured cost in CPU on the whole
/// catalog (reports/hostile-http.md).
#[cfg(unix)]
fn return_freed_memory_promptly() {
    // The numbers of `mi_option_arena_eager_commit` and
    // `mi_option_purge_delay` in mimalloc v3's `mi_option_e`, the version
    // libmimalloc-sys 0.1.49 builds (it names only some options).
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: plain stores into mimalloc's option table; `mi_option_set` is
    // not thread safe, and this runs first in `main`, before any thread.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}

/// mimalloc asks the kernel for transparent huge pages for its arenas, and
/// where the system grants them (`madvise` mode, common on Linux) each first
/// touch of an arena's 2 MiB block is zeroed whole. A run starts one or two
/// hundred short-lived reference servers (this binary), each touching a few
/// such blocks: page zeroing was 13% of a whole-catalog run's CPU time
/// (perf). The reference server opts out, and keeps its memory in 4 KiB
/// pages; with it, and without the prompt purging above (meant for the
/// harness, which reads what hostile servers send), a whole-catalog run
/// spent 0.95-1.2 s in the kernel instead of 1.3-1.8 s, in paired runs. The harness does not: the setting would be inherited by every
/// server it starts, and restoring it in the child means forking instead of
/// spawning, whose page-table copies cost more than the zeroing saved.
#[cfg(target_os = "linux")]
fn avoid_huge_pages() {
    // SAFETY: PR_SET_THP_DISABLE takes plain integer arguments and changes
    // only this process's memory policy; a failure leaves the default.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    #[cfg(unix)]
    if raw.first().map(String::as_str) != Some("serve-reference") {
        return_freed_memory_promptly();
    }
    let args = cli::Cli::parse();
    #[cfg(target_os = "linux")]
    if matches!(args.command, Some(cli::Command::ServeReference(_))) {
        avoid_huge_pages();
    }
    match cli::dispatch(args, &raw) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(cli::EXIT_USAGE)
        }
    }
}
