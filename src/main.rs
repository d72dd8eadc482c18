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

fn main() -> ExitCode {
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
