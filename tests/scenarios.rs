//! Every built-in scenario against every test server, as `cargo test` trials
//! named `<server>::<scenario-id>`: filter with `cargo test --test scenarios -- NAME`.
//! A trial fails when a correct server gets fail, warn or error.

mod common;

use std::sync::{Arc, OnceLock};

use libtest_mimic::{Arguments, Failed, Trial};
use mcp_conform::run::{run_scenario, Outcome, RunConfig, Target};
use mcp_conform::scenario::model::Scenario;

struct Server {
    name: &'static str,
    make: fn() -> Target,
    version: Option<&'static str>,
    available: fn() -> bool,
}

fn servers() -> Vec<Server> {
    vec![
        Server {
            name: "reference-stdio-auto",
            make: || common::reference_server(&[]),
            version: None,
            available: || true,
        },
        Server {
            name: "reference-stdio-2025-11-25",
            make: || common::reference_server(&[]),
            version: Some("2025-11-25"),
            available: || true,
        },
        Server {
            name: "reference-stdio-2025-06-18",
            make: || common::reference_server(&[]),
            version: Some("2025-06-18"),
            available: || true,
        },
        Server {
            name: "tiny-stdio-auto",
            make: || common::tiny_server(&[]),
            version: None,
            available: common::has_python,
        },
        Server {
            name: "tiny-stdio-2025-06-18",
            make: || common::tiny_server(&[]),
            version: Some("2025-06-18"),
            available: common::has_python,
        },
    ]
}

fn trial(
    server: &'static str,
    cfg: Arc<OnceLock<Arc<RunConfig>>>,
    make: fn() -> Target,
    version: Option<&'static str>,
    s: Scenario,
) -> Trial {
    let name = format!("{server}::{}", s.id);
    Trial::test(name, move || {
        let cfg = cfg.get_or_init(|| common::config(make(), version)).clone();
        let result = common::runtime().block_on(run_scenario(&s, &cfg));
        match result.outcome {
            Outcome::Pass | Outcome::Skip | Outcome::Info => Ok(()),
            other => Err(Failed::from(format!(
                "{other}: {}\n{:#?}",
                result.message, result.findings
            ))),
        }
    })
}

fn main() {
    let args = Arguments::from_args();
    let scenarios = mcp_conform::builtin::scenarios()
        .unwrap_or_else(|e| panic!("built-in scenarios do not load:\n{e}"));
    let mut trials = Vec::new();
    for server in servers() {
        let available = (server.available)();
        let cfg = Arc::new(OnceLock::new());
        for s in &scenarios {
            let t = trial(
                server.name,
                cfg.clone(),
                server.make,
                server.version,
                s.clone(),
            );
            trials.push(if available {
                t
            } else {
                t.with_ignored_flag(true)
            });
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
