//! The packages agree with Cargo.toml and with each other (docs/packaging.md):
//! the PyPI wheel takes its version from Cargo.toml (maturin, `dynamic`), the
//! npm launcher carries it and pins its platform packages to it, and the
//! release workflow, the npm launcher and the GitHub Action name the same
//! platforms. Reads files only; scripts/package-test.sh builds and runs the
//! packages for real.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn read(path: &str) -> String {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The `key = value` lines of one `[table]` of a TOML file (values raw).
fn toml_table(text: &str, table: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == format!("[{table}]");
        } else if inside && !line.starts_with('#') {
            if let Some((k, v)) = line.split_once('=') {
                out.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
    }
    out
}

fn launcher() -> Value {
    serde_json::from_str(&read("npm/mcp-conform-harness/package.json"))
        .unwrap_or_else(|e| panic!("npm/mcp-conform-harness/package.json: {e}"))
}

/// The npm platforms (`linux-x64`, …) the launcher depends on.
fn npm_platforms() -> BTreeSet<String> {
    launcher()["optionalDependencies"]
        .as_object()
        .expect("npm/mcp-conform-harness/package.json: optionalDependencies is an object")
        .keys()
        .map(|k| {
            k.strip_prefix("@mcp-conform-harness/")
                .unwrap_or_else(|| {
                    panic!("{k}: platform packages are @mcp-conform-harness/<os>-<cpu>")
                })
                .to_string()
        })
        .collect()
}

/// Values of `<key>: <value>` lines of the release workflow's build matrix.
fn matrix_values(key: &str) -> BTreeSet<String> {
    let prefix = format!("{key}: ");
    read(".github/workflows/release.yml")
        .lines()
        .map(|l| l.trim().trim_start_matches("- "))
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter(|v| !v.starts_with("${{"))
        .map(|v| v.trim_matches('"').to_string())
        .collect()
}

fn pyproject_takes_the_version_from_cargo_toml() {
    let text = read("pyproject.toml");
    let project = toml_table(&text, "project");
    assert!(
        project.iter().all(|(k, _)| k != "version"),
        "pyproject.toml: [project] sets a version; it must come from Cargo.toml (dynamic = [\"version\"])"
    );
    let dynamic = project
        .iter()
        .find(|(k, _)| k == "dynamic")
        .map(|(_, v)| v.as_str());
    assert!(
        dynamic.is_some_and(|v| v.contains("\"version\"")),
        "pyproject.toml: [project] dynamic must list \"version\" (got {dynamic:?})"
    );
    let maturin = toml_table(&text, "tool.maturin");
    assert!(
        maturin.contains(&("bindings".into(), "\"bin\"".into())),
        "pyproject.toml: [tool.maturin] bindings must be \"bin\" (got {maturin:?})"
    );
    let build = toml_table(&text, "build-system");
    assert!(
        build.contains(&("build-backend".into(), "\"maturin\"".into())),
        "pyproject.toml: the build backend must be maturin (got {build:?})"
    );
}

fn npm_launcher_has_the_cargo_version_and_pins_its_platform_packages() {
    let manifest = launcher();
    assert_eq!(
        manifest["version"], VERSION,
        "npm/mcp-conform-harness/package.json: version differs from Cargo.toml's (run `node npm/fill.js sync`)"
    );
    let deps = manifest["optionalDependencies"].as_object().cloned();
    let deps = deps.unwrap_or_default();
    assert!(!deps.is_empty(), "the launcher names no platform package");
    for (name, version) in &deps {
        assert_eq!(
            version, VERSION,
            "npm/mcp-conform-harness/package.json: {name} is pinned to {version}, Cargo.toml says {VERSION} (run `node npm/fill.js sync`)"
        );
    }
    assert_eq!(manifest["name"], "mcp-conform-harness");
    assert_eq!(manifest["bin"]["mcp-conform"], "bin/mcp-conform.js");
    assert!(
        !read("npm/mcp-conform-harness/bin/mcp-conform.js").is_empty(),
        "the launcher script is empty"
    );
}

fn release_workflow_builds_every_npm_platform() {
    assert_eq!(
        matrix_values("npm"),
        npm_platforms(),
        "the npm platforms of .github/workflows/release.yml (left) and of the launcher's optionalDependencies (right) differ"
    );
}

fn action_downloads_the_targets_the_release_builds() {
    let targets = matrix_values("target");
    assert!(
        targets.len() >= 5,
        "release.yml builds too few targets: {targets:?}"
    );
    let script = read("scripts/action-install.sh");
    let known: BTreeSet<String> = script
        .lines()
        .filter_map(|l| l.trim().split_once(") echo "))
        .map(|(_, t)| t.trim_end_matches(" ;;").trim().to_string())
        .filter(|t| t.contains('-'))
        .collect();
    assert_eq!(
        known, targets,
        "the targets scripts/action-install.sh maps runners to (left) and those release.yml builds (right) differ"
    );
}

/// The distribution name is one, ours, on crates.io, PyPI and npm (the
/// platform packages in its scope), and every package installs the command
/// `mcp-conform`; the README's install lines use it.
fn every_package_has_the_one_distribution_name() {
    const NAME: &str = "mcp-conform-harness";
    let cargo = read("Cargo.toml");
    let package = toml_table(&cargo, "package");
    assert!(
        package.contains(&("name".into(), format!("\"{NAME}\""))),
        "Cargo.toml: [package] name must be {NAME} (got {package:?})"
    );
    let bin = toml_table(&cargo, "[bin]");
    assert!(
        bin.contains(&("name".into(), "\"mcp-conform\"".into())),
        "Cargo.toml: the binary must be mcp-conform (got {bin:?})"
    );
    let project = toml_table(&read("pyproject.toml"), "project");
    assert!(
        project.contains(&("name".into(), format!("\"{NAME}\""))),
        "pyproject.toml: [project] name must be {NAME} (got {project:?})"
    );
    assert_eq!(launcher()["name"], NAME);
    let readme = read("README.md");
    assert!(
        readme.contains(&format!("uvx --from {NAME} mcp-conform"))
            && readme.contains(&format!("npx {NAME} ")),
        "README.md: the install lines must name {NAME}"
    );
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        every_package_has_the_one_distribution_name,
        pyproject_takes_the_version_from_cargo_toml,
        npm_launcher_has_the_cargo_version_and_pins_its_platform_packages,
        release_workflow_builds_every_npm_platform,
        action_downloads_the_targets_the_release_builds
    ]
}
