//! Embeds every built-in scenario file (scenarios/**/*.yaml) in the binary, so
//! an installed mcp-conform works from any directory; links the binary at a
//! fixed address on Linux (see `link_without_pie`).

use std::fs;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// mcp-conform starts a fresh server process for every scenario, and with no
/// server given that server is mcp-conform itself. As a position-independent
/// executable each start spent most of its time applying ~60,000 relocations
/// (`--version`: 3.1 ms and 530 page faults); linked at a fixed address it
/// needs none (1.6 ms, 125 page faults). Only the binaries: proc-macros and
/// other shared objects must stay position-independent.
fn link_without_pie() {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

fn main() {
    link_without_pie();
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let scenarios = root.join("scenarios");
    println!("cargo:rerun-if-changed=scenarios");
    let mut files = Vec::new();
    collect(&scenarios, &mut files);
    files.sort();
    let mut code = String::from("/// (path under scenarios/, contents) of every built-in file.\npub static FILES: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f
            .strip_prefix(&scenarios)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        code.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            f.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out =
        PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("builtin_scenarios.rs");
    if let Err(e) = fs::write(&out, code) {
        panic!("cannot write {}: {e}", out.display());
    }
}
