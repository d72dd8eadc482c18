//! The startup allowance (`--startup-timeout-ms`) is for a server to start:
//! it covers the probe's handshake, not the lists the probe reads after it.
//! A server that answers the handshake and then nothing must cost the
//! request timeout per list, not the startup allowance. A connection a
//! scenario opens without the handshake gets the allowance for its first
//! answer, since its server has only just started.

use std::time::{Duration, Instant};

use crate::common;

/// A stdio server (sh) that answers the first line with an initialize
/// result and never answers anything else.
fn handshake_only_server(dir: &std::path::Path) -> String {
    let script = dir.join("handshake-only.sh");
    let body = r#"#!/bin/sh
read -r _first
echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"handshake-only","version":"1"}}}'
while read -r _line; do :; done
"#;
    common::write_script(&script, body);
    script.display().to_string()
}

fn the_startup_allowance_does_not_stretch_the_probes_lists() {
    let dir = common::output_dir("probe-waits");
    let server = handshake_only_server(&dir);
    let started = Instant::now();
    let out = common::run_cli(&[
        "-q",
        "-k",
        "base/handshake",
        "--protocol-version",
        "2025-11-25",
        "--timeout-ms",
        "300",
        "--startup-timeout-ms",
        "30000",
        "--",
        &server,
    ]);
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(15),
        "the probe's tools/list waited the 30 s startup allowance ({took:?}):\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A connection opened without the handshake starts a server whose first
/// answer is a step's own: it gets the startup allowance too, or a server
/// slower to start than the request timeout fails a check it passes.
fn a_connection_without_handshake_waits_the_startup_allowance_for_its_first_answer() {
    let dir = common::output_dir("probe-waits-slow-start");
    let script = dir.join("slow-start.sh");
    let body = format!(
        "#!/bin/sh\nsleep 1\nexec '{}' serve-reference \"$@\"\n",
        common::bin()
    );
    common::write_script(&script, &body);
    let script = script.display().to_string();
    let out = common::run_cli(&[
        "-q",
        "-k",
        "base/property-version-negotiation",
        "--protocol-version",
        "2025-11-25",
        "--timeout-ms",
        "500",
        "--startup-timeout-ms",
        "10000",
        "--",
        &script,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a server that takes 1 s to start failed the initialize questions it answers:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The reference server, except that a connection whose first message is
/// `server/discover` gets no answer at all (a server without 2026-07-28
/// that ignores the method); each start and the end of that silent wait
/// are written to `events.log`.
fn silent_to_discover_server(dir: &std::path::Path) -> (String, std::path::PathBuf) {
    let log = dir.join("events.log");
    let _ = std::fs::remove_file(&log);
    let script = dir.join("silent-to-discover.sh");
    let body = format!(
        r#"#!/bin/sh
log='{log}'
read -r first
case "$first" in
  *server/discover*)
    while read -r _line; do :; done
    echo discover-given-up >> "$log"
    exit 0;;
esac
echo start >> "$log"
{{ printf '%s\n' "$first"; cat; }} | exec '{bin}' serve-reference
"#,
        log = log.display(),
        bin = common::bin()
    );
    common::write_script(&script, &body);
    (script.display().to_string(), log)
}

/// The stateful eras' scenarios start once their probes are done, while
/// the 2026-07-28 probe still waits for a discover answer that never comes:
/// a server of a scenario starts before that probe is given up.
fn the_stateful_eras_start_while_the_stateless_probe_waits() {
    let dir = common::output_dir("probe-waits-staged");
    let (script, log) = silent_to_discover_server(&dir);
    let out = common::run_cli(&["-q", "-k", "core/ping-before-initialized", "--", &script]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let events = std::fs::read_to_string(&log).unwrap_or_default();
    let lines: Vec<&str> = events.lines().collect();
    let given_up = lines
        .iter()
        .position(|l| *l == "discover-given-up")
        .unwrap_or_else(|| panic!("the discover probe was never given up: {lines:?}"));
    assert!(
        given_up > 2,
        "only the two stateful probes' servers started before the stateless probe ended: {lines:?}"
    );
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        the_startup_allowance_does_not_stretch_the_probes_lists,
        a_connection_without_handshake_waits_the_startup_allowance_for_its_first_answer,
        the_stateful_eras_start_while_the_stateless_probe_waits
    ]
}
