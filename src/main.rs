//! The `mcp-conform` command line. Library errors become one-line messages
//! and the exit codes of the README here, and nowhere else.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::dispatch(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(cli::EXIT_USAGE)
        }
    }
}
