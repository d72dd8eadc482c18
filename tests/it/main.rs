//! The end-to-end tests that need nothing but this repository and the Rust
//! toolchain, as one test binary (one link instead of one per file): each
//! module was a file of its own under tests/. Tests that need something from
//! outside (python3, Chromium, the peers, the official schemas, xmllint, the
//! drafts' texts) are trials of tests/trials/, where a missing prerequisite
//! shows as ignored with its reason.
//!
//! Run one module with `cargo test --test it MODULE::`, e.g.
//! `cargo test --test it gates:: -- --nocapture`.

/// The harness runs in this process here: the allocator the binary uses
/// (see src/main.rs), for the same reason.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../common/mod.rs"]
mod common;
#[path = "../reference_common/mod.rs"]
mod reference_common;

mod bad_scenarios;
mod cli;
mod fuzz_properties;
mod gates;
mod mutations_restore;
mod packaging;
#[cfg(unix)]
mod probe_waits;
mod properties;
mod rate_limit;
mod reference_base;
mod reference_faults;
mod reference_http;
mod reference_profiles;
mod reference_proptest;
mod reports;
mod reports_fresh;
mod requirements;
mod rmcp_client;
mod rmcp_peers;
mod sentinel;
mod sources;
mod transport_parity;
#[cfg(unix)]
mod warm_pool;
