//! `watch --listen --upstream` over Streamable HTTP: the reverse proxy
//! relays and checks both sides, per HTTP session, headers included.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{broken, INIT};
use crate::common::{bin, free_port, scratch_dir, text};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        http_proxy_relays_and_checks_both_sides,
        http_origin_rules_fail_on_a_server_that_serves_any_origin,
        http_sessions_are_checked_and_reported_apart,
        http_session_delete_is_info_and_the_harness_holds_it,
    ]
}

fn http_proxy_relays_and_checks_both_sides() {
    let dir = scratch_dir("watch-http");
    let report = dir.join("report.json");
    let (mut server, mut watch, port) =
        reference_behind_watch(&["http-notification-200"], &report, true);
    // A stateful session first, by hand: its notification meets the fault.
    crate::common::runtime().block_on(stateful_session(&format!("http://127.0.0.1:{port}/mcp")));
    let out = Command::new(bin())
        // One era, one scenario at a time: the proxy checks all it relays
        // as one conversation (docs/watch.md says so).
        .args([
            "-q",
            "-j",
            "1",
            "-k",
            "core/ping",
            "-k",
            "base/handshake",
            "--protocol-version",
            "2026-07-28",
            "--url",
        ])
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    // A session whose own step sends initialize: its ping after the answer
    // must carry the version the answer settled on.
    let own_initialize = Command::new(bin())
        .args(["-q", "-j", "1", "-k", "core/ping-before-initialized"])
        .args(["--protocol-version", "2025-11-25", "--url"])
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        own_initialize.status.code(),
        Some(0),
        "{}",
        text(&own_initialize.stdout)
    );
    // SAFETY: kill(2) on children we started.
    unsafe {
        libc::kill(watch.id() as i32, libc::SIGTERM);
    }
    let status = watch.wait().unwrap_or_else(|e| panic!("{e}"));
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(status.code(), Some(1), "{}", text(&out.stdout));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let broke = broken(std::slice::from_ref(&report));
    assert!(
        broke.contains(&("server".into(), "server/http-notification-202".into())),
        "{broke:?}"
    );
    let clients: Vec<_> = broke.iter().filter(|(side, _)| side == "client").collect();
    assert!(
        clients.is_empty(),
        "the harness broke client rules over HTTP: {clients:?}"
    );
    let transcript = report["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|r| r["id"] == "watch/transcript"))
        .cloned()
        .unwrap_or_default();
    let n = transcript["transcript"].as_array().map_or(0, Vec::len);
    assert!(n >= 10, "{n} messages seen over HTTP");
}

/// initialize, then notifications/initialized, as a 2025-11-25 client must.
async fn stateful_session(url: &str) {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let accept = "application/json, text/event-stream";
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let answer = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", accept)
        .body(init)
        .send()
        .await
        .unwrap_or_else(|e| panic!("initialize: {e}"));
    let session = answer
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let _ = answer.bytes().await;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let answer = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", accept)
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .body(note)
        .send()
        .await
        .unwrap_or_else(|e| panic!("initialized: {e}"));
    let _ = answer.bytes().await;
    // and leaves it as a client that no longer needs it should
    delete_session(url, &session).await;
}

/// DELETE to the MCP endpoint with the session's id: the session ends.
async fn delete_session(url: &str, session: &str) -> u16 {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let answer = client
        .delete(url)
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", session)
        .send()
        .await
        .unwrap_or_else(|e| panic!("DELETE: {e}"));
    let status = answer.status().as_u16();
    let _ = answer.bytes().await;
    status
}

fn wait_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `serve-reference --http` (with `faults`) and `watch --listen` in front
/// of it, writing `report` (and its output to pipes when `piped`); both
/// are listening when this returns, with the proxy's port.
fn reference_behind_watch(
    faults: &[&str],
    report: &std::path::Path,
    piped: bool,
) -> (std::process::Child, std::process::Child, u16) {
    let upstream_port = free_port();
    let server = Command::new(bin())
        .args([
            "serve-reference",
            "--http",
            &format!("127.0.0.1:{upstream_port}"),
        ])
        .args(faults.iter().flat_map(|f| ["--fault", f]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    wait_port(upstream_port);
    let port = free_port();
    let (out, err) = if piped {
        (Stdio::piped(), Stdio::piped())
    } else {
        (Stdio::null(), Stdio::null())
    };
    let watch = Command::new(bin())
        .args(["watch", "-q", "--listen", &format!("127.0.0.1:{port}")])
        .args([
            "--upstream",
            &format!("http://127.0.0.1:{upstream_port}/mcp"),
        ])
        .arg("--report-json")
        .arg(report)
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    wait_port(port);
    (server, watch, port)
}

/// `serve-reference --http` (with `faults`) behind `watch --listen`; runs
/// `drive` against the proxy's URL, stops both and returns the report.
fn through_http_watch(name: &str, faults: &[&str], drive: impl FnOnce(&str)) -> Value {
    let dir = scratch_dir(name);
    let report = dir.join("report.json");
    let (mut server, mut watch, port) = reference_behind_watch(faults, &report, false);
    drive(&format!("http://127.0.0.1:{port}/mcp"));
    // SAFETY: kill(2) on a child we started.
    unsafe {
        libc::kill(watch.id() as i32, libc::SIGTERM);
    }
    let _ = watch.wait();
    let _ = server.kill();
    let _ = server.wait();
    serde_json::from_str(&std::fs::read_to_string(&report).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{}: {e}", report.display()))
}

/// One POST through the proxy with these extra headers; its status.
async fn post(url: &str, body: &str, headers: &[(&str, &str)]) -> (u16, Option<String>) {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let answer = req.send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
    let status = answer.status().as_u16();
    let session = answer
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let _ = answer.bytes().await;
    (status, session)
}

/// A server that serves any Origin (`--fault http-origin-unchecked`)
/// breaks the 403 rule on an Origin that is no origin, and shows an info
/// finding on a foreign one it served; the clean reference refuses both
/// with 403 and breaks neither.
fn http_origin_rules_fail_on_a_server_that_serves_any_origin() {
    let drive = |url: &str| {
        crate::common::runtime().block_on(async {
            for origin in ["not an origin", "https://evil.example"] {
                post(url, INIT, &[("origin", origin)]).await;
            }
        })
    };
    let faulty = through_http_watch("watch-origin-fault", &["http-origin-unchecked"], drive);
    let broke = broken(std::slice::from_ref(&faulty));
    for rule in [
        "server/http-origin-malformed-403",
        "server/http-origin-foreign-served",
    ] {
        assert!(
            broke.contains(&("server".into(), rule.into())),
            "{rule} did not fire: {broke:?}"
        );
    }
    let outcome = |report: &Value, id: &str| {
        report["scenarios"]
            .as_array()
            .and_then(|s| s.iter().find(|r| r["id"] == id))
            .map(|r| r["outcome"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(
        outcome(&faulty, "server/http-origin-malformed-403").as_deref(),
        Some("fail")
    );
    // which origins a server trusts is its own list: never above info
    assert_eq!(
        outcome(&faulty, "server/http-origin-foreign-served").as_deref(),
        Some("info")
    );
    let clean = through_http_watch("watch-origin-clean", &[], drive);
    for rule in [
        "server/http-origin-malformed-403",
        "server/http-origin-foreign-served",
    ] {
        assert_eq!(outcome(&clean, rule).as_deref(), Some("pass"), "{rule}");
    }
    let servers: Vec<_> = broken(std::slice::from_ref(&clean))
        .into_iter()
        .filter(|(side, _)| side == "server")
        .collect();
    assert!(servers.is_empty(), "the clean server broke {servers:?}");
}

/// One 2025-11-25 session by hand: initialize, initialized, then tools/list
/// with ids 2 and `last` (2 again is a reuse within the session), then a
/// DELETE if `delete`.
async fn session_of_lists(url: &str, last: u64, delete: bool) -> String {
    let (_, id) = post(url, INIT, &[]).await;
    let id = id.unwrap_or_else(|| panic!("the reference issued no Mcp-Session-Id"));
    let headers = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    post(url, note, &headers).await;
    for n in [2, last] {
        let list = format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/list"}}"#);
        post(url, &list, &headers).await;
    }
    if delete {
        delete_session(url, &id).await;
    }
    id
}

/// Two sessions at once through one proxy, each using the same request ids:
/// neither counts against the other (one conversation would see id 1 and 2
/// used twice), the second's own reuse of id 2 is found in it alone, and the
/// report has each session's transcript. The first ends with DELETE, the
/// second is left open: only the second is reported for it, when the watch
/// ends.
fn http_sessions_are_checked_and_reported_apart() {
    let mut ids = Vec::new();
    let report = through_http_watch("watch-http-sessions", &[], |url| {
        ids = crate::common::runtime().block_on(async {
            let (a, b) = futures::join!(
                session_of_lists(url, 3, true),
                session_of_lists(url, 2, false)
            );
            vec![a, b]
        });
    });
    let broke = broken(std::slice::from_ref(&report));
    let clients: Vec<_> = broke.iter().filter(|(side, _)| side == "client").collect();
    assert_eq!(
        clients,
        [
            &(
                "client".to_string(),
                "client/http-session-delete".to_string()
            ),
            &(
                "client".to_string(),
                "client/unique-request-ids-session".to_string()
            )
        ],
        "{broke:?}"
    );
    let left = scenario(&report, "client/http-session-delete");
    assert_eq!(left["outcome"], "info", "{left}");
    let findings = left["findings"].as_array().cloned().unwrap_or_default();
    assert_eq!(findings.len(), 1, "{left}");
    let message = findings[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&ids[1]) && !message.contains(&ids[0]),
        "{left}"
    );
    let scenarios = report["scenarios"].as_array().cloned().unwrap_or_default();
    let reuse = scenarios
        .iter()
        .find(|s| s["id"] == "client/unique-request-ids-session")
        .cloned()
        .unwrap_or_default();
    let findings = reuse["findings"].as_array().cloned().unwrap_or_default();
    assert_eq!(findings.len(), 1, "{reuse}");
    let step = findings[0]["step"].as_str().unwrap_or_default();
    assert!(
        step.contains(&format!("Mcp-Session-Id {}", ids[1])),
        "{step}"
    );
    // the sessions are numbered in the order their initialize arrived
    let sessions: Vec<&Value> = scenarios
        .iter()
        .filter(|s| {
            s["id"]
                .as_str()
                .is_some_and(|i| i.starts_with("watch/session-"))
        })
        .collect();
    assert_eq!(sessions.len(), 2, "{report}");
    for id in &ids {
        let session = sessions
            .iter()
            .find(|s| {
                s["title"]
                    .as_str()
                    .unwrap_or_default()
                    .contains(id.as_str())
            })
            .unwrap_or_else(|| panic!("no session result names {id}: {report}"));
        let transcript = session["transcript"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        // initialize, its answer, initialized, its 202, two lists and
        // answers; the first session's DELETE and its answer too
        let deleted = if *id == ids[0] { 2 } else { 0 };
        assert_eq!(transcript.len(), 8 + deleted, "{session}");
    }
}

/// The result of one rule (or other scenario id) in a watch report.
fn scenario(report: &Value, id: &str) -> Value {
    report["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|r| r["id"] == id))
        .cloned()
        .unwrap_or_else(|| panic!("no result {id}: {report}"))
}

/// The harness's own 2025-11-25 session ends with DELETE: the rule holds,
/// and it judged that session. A session left open is reported as info,
/// never as a warning or failure, when the watch ends (SIGTERM here); a
/// 2026-07-28 conversation has no session and is not judged.
fn http_session_delete_is_info_and_the_harness_holds_it() {
    let harness = |version: &'static str| {
        move |url: &str| {
            let out = Command::new(bin())
                .args(["-q", "-j", "1", "-k", "core/ping", "--protocol-version"])
                .arg(version)
                .arg("--url")
                .arg(url)
                .output()
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
        }
    };
    let rule = "client/http-session-delete";
    let own = through_http_watch("watch-delete-harness", &[], harness("2025-11-25"));
    let held = scenario(&own, rule);
    assert_eq!(held["outcome"], "pass", "{held}");
    // each of its sessions (-k core/ping also picks core/ping-before-initialized,
    // whose second session is written by hand) was
    // judged, at its last client message
    let sessions = own["scenarios"].as_array().map_or(0, |s| {
        s.iter()
            .filter(|r| {
                r["id"]
                    .as_str()
                    .is_some_and(|i| i.starts_with("watch/session-"))
            })
            .count()
    });
    assert!(
        held["message"]
            .as_str()
            .is_some_and(|m| m.starts_with(&format!("held over the {sessions} messages"))),
        "{held}"
    );
    let left = through_http_watch("watch-delete-left", &[], |url| {
        crate::common::runtime().block_on(session_of_lists(url, 3, false));
    });
    let found = scenario(&left, rule);
    assert_eq!(found["outcome"], "info", "{found}");
    assert_eq!(found["level"], "INFO", "{found}");
    let modern = through_http_watch("watch-delete-2026", &[], harness("2026-07-28"));
    let skipped = scenario(&modern, rule);
    assert_eq!(skipped["outcome"], "skip", "{skipped}");
    assert!(
        skipped["message"]
            .as_str()
            .is_some_and(|m| m.contains("2026-07-28")),
        "{skipped}"
    );
}
