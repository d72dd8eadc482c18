//! The server the arguments name: a stdio command (the built-in reference
//! server when none is given) or a Streamable HTTP URL, maybe with the
//! command that serves it; and the protocol versions to test it in.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::RunArgs;
use mcp_conform::run::probe::EraChoice;
use mcp_conform::run::Target;
use mcp_conform::session::era::KNOWN_VERSIONS;
use mcp_conform::transport::{HttpSpec, StdioSpec};

/// The built-in reference server: this binary, re-executed.
pub fn default_command() -> Result<Vec<String>> {
    let exe = std::env::current_exe()
        .context("cannot find the mcp-conform executable to start the reference server")?;
    Ok(vec![
        exe.display().to_string(),
        "serve-reference".into(),
        "--control".into(),
    ])
}

/// A stdio target from a command line (the reference server when empty).
pub fn stdio_target(
    command: &[String],
    env: &[(String, String)],
    cwd: Option<&Path>,
) -> Result<Target> {
    let command = if command.is_empty() {
        default_command()?
    } else {
        command.to_vec()
    };
    let (program, rest) = command.split_first().context("empty server command")?;
    let mut spec = StdioSpec::new(program.clone(), rest.to_vec());
    spec.env = env.to_vec();
    spec.cwd = cwd.map(Path::to_path_buf);
    Ok(Target::Stdio(spec))
}

/// `all` (default), `auto`, or one known version; anything else is a usage error.
pub fn era_choice(text: &str) -> Result<EraChoice> {
    match text {
        "all" => Ok(EraChoice::All),
        "auto" => Ok(EraChoice::Auto),
        v if KNOWN_VERSIONS.contains(&v) => Ok(EraChoice::Pinned(v.to_string())),
        v => bail!(
            "unknown protocol version {v:?} (known: {}, or all, or auto)",
            KNOWN_VERSIONS.join(", ")
        ),
    }
}

/// stdio (a command, or the reference server) or HTTP (`--url`, maybe launching the command).
pub async fn build_target(args: &RunArgs) -> Result<Target> {
    let Some(url) = &args.url else {
        let mut target = stdio_target(&args.command, &args.env, args.cwd.as_deref())?;
        if let Target::Stdio(spec) = &mut target {
            spec.max_line = args.max_message_bytes;
        }
        return Ok(target);
    };
    let mut spec = HttpSpec::new(url.clone());
    spec.headers = args.headers.clone();
    spec.timeout = Duration::from_millis(args.timeout_ms);
    spec.max_body = args.max_message_bytes;
    spec.proxy = args.proxy.clone();
    if args.command.is_empty() {
        return Ok(Target::Http {
            spec,
            process: None,
            command: None,
        });
    }
    let Target::Stdio(command) = stdio_target(&args.command, &args.env, args.cwd.as_deref())?
    else {
        bail!("internal: a command line must give a stdio target");
    };
    Ok(Target::launch_http(
        spec,
        command,
        Duration::from_millis(args.startup_timeout_ms),
    )
    .await?)
}
