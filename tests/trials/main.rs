//! The libtest-mimic trials, as one test binary: every built-in scenario
//! against every test server (`scenarios::<server>::<scenario-id>`), every
//! quote against its draft (`quotes::<source>`), every test that needs
//! something from outside the repository (python3, the peer servers,
//! Chromium, the official MCP schemas, xmllint, the drafts' texts), and the
//! fault matrix: the longest test, started first here, where the trials'
//! threads fill the cores around it (cargo runs test binaries one after
//! another, and the other binary's threads idled beside it).
//!
//! A trial whose prerequisite is missing is reported as *ignored* with the
//! reason, and a line per missing prerequisite follows the result line; set
//! `MCP_CONFORM_REQUIRE=python,peers,browser,schemas,xmllint,drafts` (or
//! `all`, or `MCP_CONFORM_REQUIRE_<NAME>=1`) to make a missing one a failure
//! instead (see prereq.rs). Filter as with any test binary:
//! `cargo test --test trials -- scenarios::tiny-stdio-auto::`.

/// The harness runs in this process here: the allocator the binary uses
/// (see src/main.rs), for the same reason.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../common/mod.rs"]
mod common;
#[path = "../reference_common/mod.rs"]
mod reference_common;

mod browser;
mod different_server;
mod fault_matrix;
mod hostile;
mod junit_xsd;
mod peers;
mod prereq;
mod quotes;
mod reference_schema;
mod scenarios;
mod schema_crosscheck;
mod sharing;
mod tiny_server;

use libtest_mimic::Arguments;

fn main() {
    let mut args = Arguments::from_args();
    // One thread more than cores: the hostile trial, started first, spends
    // most of its half minute waiting out timeouts (about 0.7 of a core),
    // and with a thread per core it held one of them idle meanwhile.
    if args.test_threads.is_none() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        args.test_threads = Some(cores + 1);
    }
    // The slowest first: the trials are taken in this order by the test
    // threads, so the long ones start while the short ones fill the gaps.
    let mut trials = Vec::new();
    trials.extend(fault_matrix::trials());
    trials.extend(hostile::trials());
    trials.extend(sharing::trials());
    trials.extend(different_server::trials());
    trials.extend(peers::trials());
    trials.extend(browser::trials());
    trials.extend(tiny_server::trials());
    trials.extend(reference_schema::trials());
    trials.extend(schema_crosscheck::trials());
    trials.extend(junit_xsd::trials());
    trials.extend(quotes::trials());
    trials.extend(scenarios::trials());
    let conclusion = libtest_mimic::run(&args, trials);
    prereq::print_summary();
    conclusion.exit();
}
