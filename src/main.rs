//! The `mcp-conform` command line. For now it mounts only the reference
//! server; the harness commands are added beside it.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "mcp-conform",
    version,
    about = "Conformance harness for MCP servers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the built-in reference server over stdio.
    ServeReference(mcp_conform::reference::ServeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: anyhow::Result<()> = match cli.command {
        Command::ServeReference(args) => {
            mcp_conform::reference::run(args).map_err(anyhow::Error::from)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-conform: {e:#}");
            ExitCode::from(2)
        }
    }
}
