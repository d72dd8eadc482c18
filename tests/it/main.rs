//! Every end-to-end test, as one test binary of libtest-mimic trials: every
//! built-in scenario against every test server
//! (`scenarios::<server>::<scenario-id>`), every quote against its draft
//! (`quotes::<source>`), the fault matrix, the command line, the reports, the
//! reference server, and the tests that need something from outside the
//! repository (python3, the peer servers, Chromium, the official MCP
//! schemas, xmllint, the drafts' texts). One binary is one link, and one
//! pool of test threads: cargo runs test binaries one after another, and
//! with two the first one's idle threads could not help the second.
//!
//! A trial whose prerequisite is missing is reported as *ignored* with the
//! reason, and a line per missing prerequisite follows the result line; set
//! `MCP_CONFORM_REQUIRE=python,peers,browser,schemas,xmllint,drafts` (or
//! `all`, or `MCP_CONFORM_REQUIRE_<NAME>=1`) to make a missing one a failure
//! instead (see prereq.rs). Filter as with any test binary:
//! `cargo test --test it -- gates::`, or
//! `cargo test --test it -- scenarios::tiny-stdio-auto::`.
//!
//! A test function is a trial only once a `trials![…]` list names it. One
//! that no list names is dead code, and dead code does not build here: a
//! forgotten registration stops `cargo test` instead of passing unseen.
#![deny(dead_code)]

/// The harness runs in this process here: the allocator the binary uses
/// (see src/main.rs), for the same reason.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A module's test functions as trials, each named `module::function`;
/// those after `async` run on a current-thread runtime.
macro_rules! trials {
    ($($test:ident),* $(,)? $(; async $($async_test:ident),* $(,)?)?) => {{
        let module = module_path!().trim_start_matches("it::");
        #[allow(unused_mut)]
        let mut trials = vec![$(
            libtest_mimic::Trial::test(format!("{module}::{}", stringify!($test)), || {
                $test();
                Ok(())
            })
        ),*];
        $($(
            trials.push(libtest_mimic::Trial::test(
                format!("{module}::{}", stringify!($async_test)),
                || {
                    crate::common::runtime().block_on($async_test());
                    Ok(())
                },
            ));
        )*)?
        trials
    }};
}

#[path = "../common/mod.rs"]
mod common;
#[path = "../reference_common/mod.rs"]
mod reference_common;

mod architecture;
mod bad_scenarios;
mod browser;
mod catalog_loading;
mod cli;
mod client;
mod concurrency;
mod different_server;
mod doc_commands;
mod fault_matrix;
mod fuzz_properties;
mod gates;
mod grouping_ext;
mod hostile;
mod huge_pages;
#[cfg(unix)]
mod inspector;
mod junit_xsd;
mod levels_shown;
mod mutations_restore;
mod packaging;
mod peers;
mod popular;
mod prereq;
#[cfg(unix)]
mod probe_waits;
mod properties;
mod quality;
mod quotes;
mod rate_limit;
mod reference_base;
mod reference_faults;
mod reference_http;
mod reference_profiles;
mod reference_proptest;
mod reference_schema;
mod reports;
mod reports_fresh;
mod requirements;
mod rmcp_client;
mod rmcp_peers;
mod scale;
mod scenarios;
mod schema_crosscheck;
mod sentinel;
mod server_rules;
mod server_starts;
mod sharing;
mod sources;
mod tiny_server;
mod transport_parity;
#[cfg(unix)]
mod warm_pool;
#[cfg(unix)]
mod watch;

use libtest_mimic::Arguments;

fn main() {
    let mut args = Arguments::from_args();
    // One thread more than cores: the hostile trial spends most of its half
    // minute waiting out timeouts (about 0.7 of a core), and with a thread
    // per core it held one of them idle meanwhile.
    if args.test_threads.is_none() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        args.test_threads = Some(cores + 1);
    }
    // The slowest first: the trials are taken in this order by the test
    // threads, so the long ones start while the short ones fill the gaps.
    let mut trials = Vec::new();
    trials.extend(fault_matrix::trials());
    #[cfg(unix)]
    trials.extend(watch::trials());
    #[cfg(unix)]
    trials.extend(inspector::trials());
    trials.extend(client::trials());
    trials.extend(hostile::trials());
    trials.extend(sharing::trials());
    trials.extend(concurrency::trials());
    trials.extend(scale::trials());
    trials.extend(transport_parity::trials());
    trials.extend(gates::trials());
    trials.extend(properties::trials());
    trials.extend(different_server::trials());
    trials.extend(grouping_ext::trials());
    trials.extend(reference_http::trials());
    trials.extend(peers::trials());
    trials.extend(popular::trials());
    trials.extend(rmcp_peers::trials());
    trials.extend(rate_limit::trials());
    trials.extend(tiny_server::trials());
    trials.extend(server_starts::trials());
    trials.extend(catalog_loading::trials());
    trials.extend(huge_pages::trials());
    trials.extend(browser::trials());
    trials.extend(rmcp_client::trials());
    trials.extend(reference_profiles::trials());
    trials.extend(reference_faults::trials());
    trials.extend(reference_base::trials());
    trials.extend(reports::trials());
    trials.extend(levels_shown::trials());
    trials.extend(doc_commands::trials());
    trials.extend(quality::trials());
    trials.extend(cli::trials());
    trials.extend(architecture::trials());
    trials.extend(mutations_restore::trials());
    #[cfg(unix)]
    trials.extend(probe_waits::trials());
    #[cfg(unix)]
    trials.extend(warm_pool::trials());
    trials.extend(sentinel::trials());
    trials.extend(fuzz_properties::trials());
    trials.extend(reference_proptest::trials());
    trials.extend(bad_scenarios::trials());
    trials.extend(packaging::trials());
    trials.extend(reports_fresh::trials());
    trials.extend(requirements::trials());
    trials.extend(sources::trials());
    trials.extend(reference_schema::trials());
    trials.extend(schema_crosscheck::trials());
    trials.extend(junit_xsd::trials());
    trials.extend(quotes::trials());
    trials.extend(server_rules::trials());
    trials.extend(scenarios::trials());
    let conclusion = libtest_mimic::run(&args, trials);
    prereq::print_summary();
    conclusion.exit();
}
