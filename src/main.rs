//! The `mcp-conform` command line. Library errors become one-line messages
//! and the exit codes of the README here, and nowhere else.

mod allocator;
mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    #[cfg(unix)]
    if raw.first().map(String::as_str) != Some("serve-reference") {
        allocator::tune_allocator();
    }
    let args = cli::Cli::parse();
    #[cfg(target_os = "linux")]
    if matches!(args.command, Some(cli::Command::ServeReference(_))) {
        allocator::avoid_huge_pages();
    }
    match cli::dispatch(args, &raw) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(cli::EXIT_USAGE)
        }
    }
}
