//! Scenarios that change the catalog through the control hook leave the
//! server as they found it. Over HTTP one server serves the whole run, so a
//! tool taken out and put back as tools/list shows it (a short description,
//! a placeholder schema) would change what every later scenario sees.
//! Checked on the full descriptions, which tools/list does not show.

use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::common;

/// A scenario that reads every tool's full description, 20 names a read.
const DUMP: &str = r#"id: local/dump
title: every tool in full
profile: local
level: MUST
requirements: [BASE-PAGE-01]
steps:
  - id: all
    request: tools/list
    paginate: tools
  - id: full
    for_each: "lists.range(size(all.result.tools)).filter(i, i % 20 == 0).map(i, all.result.tools.slice(i, math.least([i + 20, size(all.result.tools)])).map(t, t.name).join(','))"
    as: names
    request: resources/read
    params: { uri: "resource:///tool_descriptions?tools=${names}" }
    expect: { result: { contents: { $type: array } } }
"#;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits (up to 30 s, a loaded machine) until the server accepts connections.
fn wait_for_port(addr: &str) {
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the reference server did not listen on {addr} within 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The results the dump scenario received, without their cursors.
fn dump(dir: &std::path::Path, url: &str, name: &str) -> Vec<Value> {
    let report = dir.join(format!("{name}.json"));
    let report_arg = report.display().to_string();
    let scenarios = dir.join("dump");
    let scenarios_arg = scenarios.display().to_string();
    let out = common::run_cli(&[
        "-q",
        "--scenarios",
        &scenarios_arg,
        "-k",
        "local/dump",
        "--protocol-version",
        "2025-11-25",
        "--full-transcripts",
        "--report-json",
        &report_arg,
        "--url",
        url,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let received: Vec<Value> = json["scenarios"][0]["transcript"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["direction"] == "received")
        .map(|t| {
            // A cursor names the catalog's generation, which every change
            // moves on: the tools are what must be the same.
            let mut result = t["message"]["result"].clone();
            if let Some(page) = result.as_object_mut() {
                page.remove("nextCursor");
            }
            result
        })
        .collect();
    assert!(
        received.len() >= 7,
        "{name}: too little read: {}",
        received.len()
    );
    received
}

fn catalog_changing_scenarios_leave_the_server_as_they_found_it() {
    let dir = common::scratch_dir("mutations-restore");
    std::fs::create_dir_all(dir.join("dump")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("dump/dump.yaml"), DUMP).unwrap_or_else(|e| panic!("{e}"));
    let addr = format!("127.0.0.1:{}", common::free_port());
    let url = format!("http://{addr}/mcp");
    let _server = Server(
        Command::new(common::bin())
            .args(["serve-reference", "--control", "--http", &addr])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    wait_for_port(&addr);
    let before = dump(&dir, &url, "before");

    let mutating: Vec<String> = mcp_conform::builtin::scenarios()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter(|s| s.mutates_server())
        .map(|s| s.id)
        .collect();
    assert!(mutating.len() >= 5, "{mutating:?}");
    let mut args = vec!["-q".to_string()];
    for id in &mutating {
        args.extend(["-k".to_string(), id.clone()]);
    }
    args.extend(["--url".to_string(), url.clone()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::run_cli(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let after = dump(&dir, &url, "after");
    let changed: Vec<String> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b != a)
        .map(|(b, a)| {
            format!(
                "before: {:.300}\nafter:  {:.300}",
                b.to_string(),
                a.to_string()
            )
        })
        .collect();
    assert!(
        changed.is_empty() && before.len() == after.len(),
        "{} of {:?} changed what the server serves:\n{}",
        changed.len(),
        mutating,
        changed.join("\n")
    );
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![catalog_changing_scenarios_leave_the_server_as_they_found_it]
}
