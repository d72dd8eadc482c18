//! Shared helpers for the end-to-end tests: test servers and probing.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use mcp_conform::run::probe::probe;
use mcp_conform::run::{RunConfig, Target};
use mcp_conform::transport::StdioSpec;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn has_python() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The tiny fixture server with `--break` flags.
pub fn tiny_server(breaks: &[&str]) -> Target {
    let mut args = vec![root()
        .join("fixtures/servers/tiny_server.py")
        .display()
        .to_string()];
    for b in breaks {
        args.push("--break".into());
        args.push((*b).to_string());
    }
    Target::Stdio(StdioSpec::new("python3", args))
}

/// The reference server (this package's binary) with `--control` and faults.
pub fn reference_server(faults: &[&str]) -> Target {
    let mut args = vec!["serve-reference".to_string(), "--control".to_string()];
    for f in faults {
        args.push("--fault".into());
        args.push((*f).to_string());
    }
    Target::Stdio(StdioSpec::new(env!("CARGO_BIN_EXE_mcp-conform"), args))
}

/// Probes a target and builds the run configuration the CLI would build.
pub fn config(target: Target, version: Option<&str>) -> Arc<RunConfig> {
    let rt = runtime();
    let timeout = Duration::from_millis(3000);
    let probed = rt
        .block_on(probe(&target, version, timeout))
        .unwrap_or_else(|e| panic!("probe of {} failed: {e}", target.display()));
    let fixture_match = mcp_conform::fixture::serves_reference_catalog(&probed.tool_names);
    Arc::new(RunConfig {
        target,
        era: probed.era,
        server: probed.server,
        timeout,
        fixture_match,
    })
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"))
}
