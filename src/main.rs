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

fn main() -> ExitCode {
    #[cfg(unix)]
    return_freed_memory_promptly();
    let raw: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let args = cli::Cli::parse();
    match cli::dispatch(args, &raw) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(cli::EXIT_USAGE)
        }
    }
}
