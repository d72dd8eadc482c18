//! Embeds every built-in scenario file (scenarios/**/*.yaml) in the binary, so
//! an installed mcp-conform works from any directory, with what selecting
//! among them reads (see `selection_fields`); links the binary at a fixed
//! address on Linux (see `link_without_pie`).

use std::fs;
use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, YamlOwned};

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

/// A scenario file's id, profile and requirement ids.
type SelectionFields = (String, String, Vec<String>);

/// What `-k`, `-p`, `--skip` and `--shard` read of a scenario file: its id,
/// profile and requirement ids, read here so that a run compiles only the
/// scenarios it selects. None when the file does not give them plainly.
fn selection_fields(text: &str) -> Option<SelectionFields> {
    let doc = YamlOwned::load_from_str(text).ok()?.into_iter().next()?;
    let field = |key: &str| {
        doc.as_mapping_get(key)
            .and_then(YamlOwned::as_str)
            .map(str::to_string)
    };
    let requirements = match doc.as_mapping_get("requirements") {
        None => Vec::new(),
        Some(list) => list
            .as_vec()?
            .iter()
            .map(|r| r.as_str().map(str::to_string))
            .collect::<Option<_>>()?,
    };
    Some((field("id")?, field("profile")?, requirements))
}

/// Files beside the scenarios that are not scenarios.
const NOT_SCENARIOS: [&str; 2] = ["requirements.yaml", "sources.yaml"];

/// The type of a row of `INDEX`.
const INDEX_ROW: &str = "/// (path, id, profile, requirement ids) of a built-in scenario.\n\
    pub type IndexRow = (&'static str, &'static str, &'static str, &'static [&'static str]);\n";

/// `INDEX`: (path, id, profile, requirements) of every scenario file, or
/// None when one of them does not give them plainly (a run then compiles
/// the whole catalog before it selects, and the loader says what is wrong).
fn index_code(entries: &[(String, Option<SelectionFields>)]) -> String {
    let mut rows = String::new();
    for (rel, fields) in entries {
        let Some((id, profile, requirements)) = fields else {
            return format!("{INDEX_ROW}pub static INDEX: Option<&[IndexRow]> = None;\n");
        };
        rows.push_str(&format!(
            "    ({rel:?}, {id:?}, {profile:?}, &{requirements:?}),\n"
        ));
    }
    format!("{INDEX_ROW}pub static INDEX: Option<&[IndexRow]> = Some(&[\n{rows}]);\n")
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
    let mut index = Vec::new();
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
        if !NOT_SCENARIOS.contains(&rel.as_str()) {
            let text = fs::read_to_string(f).unwrap_or_default();
            index.push((rel, selection_fields(&text)));
        }
    }
    code.push_str("];\n");
    code.push_str(&index_code(&index));
    let out =
        PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("builtin_scenarios.rs");
    if let Err(e) = fs::write(&out, code) {
        panic!("cannot write {}: {e}", out.display());
    }
}
