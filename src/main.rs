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
    if matches!(args.command, Some(cli::Command::ServeReference(_))) || starts_no_user_server(&args)
    {
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

/// A run with no server command starts no process but the reference
/// server (which opts out of huge pages itself) or none at all (`--url`
/// alone): the harness can keep its memory in 4 KiB pages too, without
/// a server inheriting the setting (see `allocator::avoid_huge_pages`).
/// Where huge pages come only on request, mimalloc is built never to ask
/// (`allocator::tune_allocator` says why); this covers systems that grant
/// them always. On the built-in reference, when mimalloc still asked, it
/// spent 0.38-0.50 s in the kernel instead of 0.51-0.91 s, in five paired
/// runs.
#[cfg(target_os = "linux")]
fn starts_no_user_server(args: &cli::Cli) -> bool {
    args.command.is_none() && args.run.command.is_empty()
}
