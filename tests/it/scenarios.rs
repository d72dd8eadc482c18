//! Every built-in scenario against every test server, as `cargo test` trials
//! named `scenarios::<server>::<scenario-id>`: filter with
//! `cargo test --test it -- NAME`. A trial fails when a correct server
//! gets fail, warn or error; the Python servers' trials are ignored, with the
//! reason, where python3 is missing.

use std::sync::{Arc, OnceLock};

use libtest_mimic::{Failed, Trial};
use mcp_conform::run::{run_scenario, Outcome, RunConfig, Target};
use mcp_conform::scenario::model::Scenario;

use crate::common;
use crate::prereq::{self, Prereq};

struct Server {
    name: &'static str,
    make: fn() -> Target,
    version: Option<&'static str>,
    /// python3 for the tiny fixture server; the others need nothing.
    python: bool,
}

static SERVERS: [Server; 5] = [
    Server {
        name: "reference-stdio-auto",
        make: || common::reference_server(&[]),
        version: None,
        python: false,
    },
    Server {
        name: "reference-stdio-2025-11-25",
        make: || common::reference_server(&[]),
        version: Some("2025-11-25"),
        python: false,
    },
    Server {
        name: "reference-stdio-2025-06-18",
        make: || common::reference_server(&[]),
        version: Some("2025-06-18"),
        python: false,
    },
    Server {
        name: "tiny-stdio-auto",
        make: || common::tiny_server(&[]),
        version: None,
        python: true,
    },
    Server {
        name: "tiny-stdio-2025-06-18",
        make: || common::tiny_server(&[]),
        version: Some("2025-06-18"),
        python: true,
    },
];

fn trial(server: &'static Server, cfg: Arc<OnceLock<Arc<RunConfig>>>, s: Scenario) -> Trial {
    let name = format!("scenarios::{}::{}", server.name, s.id);
    let run = move || {
        let cfg = cfg
            .get_or_init(|| common::config((server.make)(), server.version))
            .clone();
        let result = common::runtime().block_on(run_scenario(&s, &cfg));
        match result.outcome {
            Outcome::Pass | Outcome::Skip | Outcome::Info => Ok(()),
            other => Err(format!(
                "{other}: {}\n{:#?}",
                result.message, result.findings
            )),
        }
    };
    if server.python {
        prereq::trial(name, Prereq::Python, prereq::python, move || {
            if let Err(e) = run() {
                panic!("{e}");
            }
        })
    } else {
        Trial::test(name, move || run().map_err(Failed::from))
    }
}

pub fn trials() -> Vec<Trial> {
    let scenarios = mcp_conform::builtin::scenarios()
        .unwrap_or_else(|e| panic!("built-in scenarios do not load:\n{e}"));
    let mut trials = Vec::new();
    for server in &SERVERS {
        let cfg = Arc::new(OnceLock::new());
        for s in &scenarios {
            trials.push(trial(server, cfg.clone(), s.clone()));
        }
    }
    trials
}
