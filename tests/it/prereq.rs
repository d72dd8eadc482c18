//! What a trial needs from outside the repository, and what happens when it
//! is missing: the trial is reported as ignored with the reason (never as a
//! pass that ran nothing), one summary line per missing prerequisite follows
//! the result line, and a prerequisite that is *required* turns the trial
//! into a failure instead.
//!
//! A prerequisite is required when `MCP_CONFORM_REQUIRE_<NAME>` is set to
//! anything but `0` or an empty string, or when `MCP_CONFORM_REQUIRE` lists
//! its name (comma-separated) or says `all`. Names: python, peers, browser,
//! schemas, xmllint, drafts. CI (.ci/run) requires every one it installs.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use libtest_mimic::{Completion, Trial};

/// Something a trial needs that the repository does not hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Prereq {
    /// python3, for the tiny and hostile fixture servers.
    Python,
    /// The peer servers scripts/install-peers.sh installs under target/peers/.
    Peers,
    /// Chromium and chromedriver, for the HTML report in a real browser.
    Browser,
    /// The official MCP JSON schemas (see `official_schema_dir`).
    Schemas,
    /// xmllint, for the JUnit XSD check.
    Xmllint,
    /// The drafts' texts the quotes are checked against.
    Drafts,
}

impl Prereq {
    /// Its name in `MCP_CONFORM_REQUIRE` and in `MCP_CONFORM_REQUIRE_<NAME>`.
    pub fn name(self) -> &'static str {
        match self {
            Prereq::Python => "python",
            Prereq::Peers => "peers",
            Prereq::Browser => "browser",
            Prereq::Schemas => "schemas",
            Prereq::Xmllint => "xmllint",
            Prereq::Drafts => "drafts",
        }
    }

    fn switch(self) -> String {
        format!("MCP_CONFORM_REQUIRE_{}", self.name().to_uppercase())
    }

    /// The switch that makes a missing prerequisite a failure rather than an
    /// ignored trial, if one is set.
    pub fn required_by(self) -> Option<String> {
        let own = std::env::var_os(self.switch()).is_some_and(|v| !v.is_empty() && v != "0");
        let listed = std::env::var("MCP_CONFORM_REQUIRE").ok().filter(|list| {
            list.split(',')
                .map(str::trim)
                .any(|n| n == self.name() || n == "all")
        });
        match (own, listed) {
            (true, _) => Some(format!("{}=1", self.switch())),
            (false, Some(list)) => Some(format!("MCP_CONFORM_REQUIRE={list}")),
            (false, None) => None,
        }
    }
}

/// (prerequisite, reason) → trials ignored for it in this run.
static IGNORED: Mutex<BTreeMap<(Prereq, String), usize>> = Mutex::new(BTreeMap::new());

/// A trial that runs `body` when `check` finds what it needs; otherwise it
/// is ignored with the reason `check` gives, or fails when the
/// prerequisite is required. `body` fails the trial by panicking, as
/// every test function here does.
pub fn trial(
    name: impl Into<String>,
    prereq: Prereq,
    check: impl FnOnce() -> Result<(), String> + Send + 'static,
    body: impl FnOnce() + Send + 'static,
) -> Trial {
    Trial::ignorable_test(name, move || {
        if let Err(reason) = check() {
            if let Some(switch) = prereq.required_by() {
                return Err(format!("{reason}; {switch} requires it").into());
            }
            if let Ok(mut ignored) = IGNORED.lock() {
                *ignored.entry((prereq, reason.clone())).or_default() += 1;
            }
            return Ok(Completion::ignored_with(reason));
        }
        body();
        Ok(Completion::Completed)
    })
}

/// One line per missing prerequisite, after libtest-mimic's result line.
pub fn print_summary() {
    let ignored = IGNORED.lock().map(|m| m.clone()).unwrap_or_default();
    if ignored.is_empty() {
        return;
    }
    println!("not run for a missing prerequisite (ignored, not passed; MCP_CONFORM_REQUIRE_<NAME>=1 makes a missing one fail):");
    for ((prereq, reason), n) in ignored {
        let trials = if n == 1 { "trial" } else { "trials" };
        println!("  {} ({n} {trials}): {reason}", prereq.name());
    }
    println!();
}

/// Whether `cmd --version` runs and succeeds.
fn runs(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// python3 on PATH, asked once per run.
pub fn python() -> Result<(), String> {
    static FOUND: OnceLock<bool> = OnceLock::new();
    if *FOUND.get_or_init(|| runs(crate::common::python3())) {
        Ok(())
    } else {
        Err("python3 is not installed (the fixture servers are Python scripts)".into())
    }
}

/// chromium and chromedriver on PATH.
pub fn browser() -> Result<(), String> {
    if runs("chromium") && runs("chromedriver") {
        Ok(())
    } else {
        Err(
            "chromium/chromedriver are not installed (apt-get install chromium chromium-driver)"
                .into(),
        )
    }
}

/// xmllint on PATH.
pub fn xmllint() -> Result<(), String> {
    if runs("xmllint") {
        Ok(())
    } else {
        Err("xmllint is not installed (apt-get install libxml2-utils)".into())
    }
}

/// The eras whose official schemas the cross-checks read.
pub const SCHEMA_ERAS: [&str; 3] = ["2025-06-18", "2025-11-25", "2026-07-28"];

/// The directory holding `<era>/schema.json` for every era of `SCHEMA_ERAS`:
/// `MCP_CONFORM_SCHEMA_DIR`, else target/mcp-schema/ (where
/// scripts/fetch-mcp-schemas.sh puts them), else ../shared/mcp-schema/
/// beside the checkout. The schemas are never copied into the repository.
/// The SARIF 2.1.0 schema that scripts/fetch-sarif-schema.sh puts in
/// target/sarif-schema/ (a `schemas` prerequisite).
pub fn sarif_schema() -> Result<std::path::PathBuf, String> {
    let path = crate::common::root().join("target/sarif-schema/sarif-2.1.0.json");
    if path.is_file() {
        Ok(path)
    } else {
        Err("the SARIF 2.1.0 schema is not in target/sarif-schema/ (run scripts/fetch-sarif-schema.sh)".into())
    }
}

pub fn official_schema_dir() -> Result<std::path::PathBuf, String> {
    let root = crate::common::root();
    let candidates = match std::env::var_os("MCP_CONFORM_SCHEMA_DIR") {
        Some(dir) => vec![std::path::PathBuf::from(dir)],
        None => vec![
            root.join("target/mcp-schema"),
            root.join("../shared/mcp-schema"),
        ],
    };
    candidates
        .into_iter()
        .find(|dir| {
            SCHEMA_ERAS
                .iter()
                .all(|era| dir.join(era).join("schema.json").is_file())
        })
        .ok_or_else(|| {
            "the official MCP schemas are not here (run scripts/fetch-mcp-schemas.sh, \
             or set MCP_CONFORM_SCHEMA_DIR to a directory of <era>/schema.json)"
                .into()
        })
}

/// The Python SDK (`mcp`) in the peers' venv (scripts/install-peers.sh).
pub fn python_sdk() -> Result<(), String> {
    let python = crate::common::root().join("target/peers/python/bin/python");
    let ok = std::process::Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{} with the mcp package (scripts/install-peers.sh)",
            python.display()
        ))
    }
}
