//! Base protocol behaviour of the reference server over real pipes, in all
//! three eras: handshakes, ids, error codes, malformed input, shutdown.

use crate::reference_common::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn stateful_handshakes_negotiate_versions() {
    for (asked, answered) in [
        (V0618, V0618),
        (V1125, V1125),
        ("2024-01-01", V1125),
        (V0728, V1125),
    ] {
        let mut s = Server::start(&[]);
        let r = s.ok(
            "initialize",
            json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert_eq!(r["protocolVersion"], answered);
        assert_eq!(r["serverInfo"]["name"], "mcp-conform-reference");
        assert!(r["serverInfo"]["version"].is_string());
        let caps = &r["capabilities"];
        assert_eq!(
            caps["tools"],
            json!({"listChanged": true, "filtering": true, "search": true})
        );
        assert_eq!(caps["prompts"]["search"], true);
        assert_eq!(caps["resources"]["search"], true);
        assert_eq!(caps["filtering"]["groups"]["listChanged"], true);
        assert!(
            caps.get("experimental").is_none(),
            "control hook advertised without --control"
        );
        let instructions = r["instructions"].as_str().expect("instructions");
        for needle in [
            "query",
            "Examples",
            "groups",
            "tags",
            "tool_descriptions",
            "tools/search",
        ] {
            assert!(instructions.contains(needle), "instructions lack {needle}");
        }
        assert!(
            r.get("resultType").is_none(),
            "stateful results carry no resultType"
        );
    }
}

fn stateless_discover_and_meta() {
    let mut s = Server::start(&["--control"]);
    // A 2026-07-28 request carries the required _meta fields.
    let meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": V0728,
        "io.modelcontextprotocol/clientCapabilities": {}}});
    let r = s.ok("server/discover", meta);
    assert_eq!(r["supportedVersions"], json!([V0728, V1125, V0618]));
    assert_eq!(r["resultType"], "complete");
    assert!(r["ttlMs"].is_u64());
    assert_eq!(r["cacheScope"], "public");
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-conform-reference"
    );
    assert_eq!(
        r["capabilities"]["experimental"]["mcp-conform/control"],
        json!({})
    );
    s.version = V0728.into();
    for method in [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "groups/list",
        "tags/list",
    ] {
        let r = s.ok(method, json!({}));
        assert_eq!(r["resultType"], "complete", "{method}");
        assert!(r["ttlMs"].is_u64(), "{method}");
        assert_eq!(r["cacheScope"], "public", "{method}");
    }
    let r = s.ok(
        "tools/call",
        json!({"name": "list_categories", "arguments": {}}),
    );
    assert_eq!(r["resultType"], "complete");
    assert!(r.get("ttlMs").is_none());
    let r = s.ok(
        "resources/read",
        json!({"uri": "docs:///policies/retention"}),
    );
    assert_eq!(r["cacheScope"], "public");
}

fn missing_required_meta_is_32602() {
    let mut s = Server::start(&[]);
    let r = s.exchange(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": V0728}}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(
        r["error"]["data"]["missing"],
        json!(["io.modelcontextprotocol/clientCapabilities"])
    );
    let r = s.exchange(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientCapabilities": {}}}}),
    );
    assert_eq!(
        r["error"]["code"], -32022,
        "discover refuses an unknown version: {r}"
    );
}

fn unsupported_version_is_32022() {
    let mut s = Server::start(&[]);
    let r = s.exchange(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}}));
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["requested"], "2099-01-01");
    assert!(r["error"]["data"]["supported"]
        .as_array()
        .is_some_and(|v| v.contains(&json!(V0728))));
}

fn requests_before_initialize_are_refused_but_ping_works() {
    let mut s = Server::start(&[]);
    let e = s.err("tools/list", json!({}));
    assert_eq!(e["code"], -32600);
    assert!(e["message"]
        .as_str()
        .is_some_and(|m| m.contains("initialize")));
    assert_eq!(s.ok("ping", json!({})), json!({}));
}

fn ids_are_echoed_exactly() {
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        let params = s.params(json!({}));
        for id in [
            json!(7),
            json!("7"),
            json!("abc"),
            json!(9007199254740993u64),
            json!(u64::MAX),
            json!(-5),
            json!(0),
        ] {
            let r = s.exchange(
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}),
            );
            assert_eq!(r["id"], id, "{era}: {r}");
            assert!(r.get("result").is_some());
        }
        // Raw text check: a large integer is not rewritten as a float.
        s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890,\"method\":\"ping\"}\n");
        let r = s.recv();
        assert_eq!(r["id"].as_u64(), Some(12345678901234567890));
    }
}

fn unknown_methods_and_bad_params() {
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        for method in ["tools/nope", "foo", "conform/mutate", "resources/subscribe"] {
            assert_eq!(s.err(method, json!({}))["code"], -32601, "{era} {method}");
        }
        let cases = [
            (
                "tools/list",
                json!({"query": 123}),
                "'query' must be a string",
            ),
            ("tools/list", json!({"query": ["a"]}), "'query'"),
            (
                "tools/list",
                json!({"filter": "x"}),
                "'filter' must be an object",
            ),
            (
                "tools/list",
                json!({"filter": {"groups": [1]}}),
                "'filter.groups[0]' must be a string",
            ),
            (
                "tools/list",
                json!({"filter": {"groups": "a"}}),
                "'filter.groups' must be an array",
            ),
            (
                "tools/list",
                json!({"cursor": 7}),
                "'cursor' must be a string",
            ),
            (
                "tools/search",
                json!({"query": {}}),
                "'query' must be a string",
            ),
            ("tools/call", json!({"name": 5}), "'name' must be a string"),
            (
                "tools/call",
                json!({"name": "page_get", "arguments": []}),
                "'arguments' must be an object",
            ),
            (
                "resources/read",
                json!({"uri": false}),
                "'uri' must be a string",
            ),
            (
                "prompts/get",
                json!({"name": "summarize_page", "arguments": "x"}),
                "'arguments' must be an object",
            ),
        ];
        for (method, params, needle) in cases {
            let e = s.err(method, params.clone());
            assert_eq!(e["code"], -32602, "{era} {method} {params}: {e}");
            assert!(
                e["message"].as_str().is_some_and(|m| m.contains(needle)),
                "{e} lacks {needle}"
            );
        }
        // params itself of the wrong type
        let r =
            s.exchange(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": 5}));
        assert_eq!(r["error"]["code"], -32602);
        // unknown params are ignored
        let plain = s.list_names(json!({}));
        assert_eq!(s.list_names(json!({"zzz": 1, "another": {"x": []}})), plain);
        assert_eq!(plain.len(), 14);
    }
}

fn malformed_input_is_answered_and_serving_continues() {
    let mut s = Server::open(V1125, &[]);
    s.send_raw(b"{not json\n");
    let r = s.recv();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    s.send_raw(b"\xff\xfe\x00garbage\n");
    assert_eq!(s.recv()["error"]["code"], -32700);
    s.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n");
    assert_eq!(s.recv()["error"]["code"], -32600);
    s.send_raw(b"{\"jsonrpc\":\"1.0\",\"id\":4,\"method\":\"ping\"}\n");
    let r = s.recv();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(4), json!(-32600))
    );
    s.send_raw(b"\"just a string\"\n");
    assert_eq!(s.recv()["error"]["code"], -32600);
    s.send_raw(b"\n   \n");
    // 10^5-deep nesting: a parse error, not a stack overflow.
    let deep = format!("{}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    s.send_raw(deep.as_bytes());
    assert_eq!(s.recv()["error"]["code"], -32700);
    // A 20 MB line is over the cap.
    let mut big =
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"query\":\""
            .to_vec();
    big.extend(std::iter::repeat_n(b'a', 20 * 1024 * 1024));
    big.extend_from_slice(b"\"}}\n");
    s.send_raw(&big);
    let r = s.recv();
    assert_eq!(r["error"]["code"], -32700);
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("exceeds")),
        "{r}"
    );
    assert_eq!(s.ok("ping", json!({})), json!({}));
    assert!(s.alive());
}

fn notifications_and_client_responses_get_no_answer() {
    let mut s = Server::open(V1125, &[]);
    s.notify("notifications/whatever", Some(json!({"x": 1})));
    s.send(&json!({"jsonrpc": "2.0", "id": 55, "result": {}}));
    s.send(&json!({"jsonrpc": "2.0", "id": 56, "error": {"code": 1, "message": "m"}}));
    assert_eq!(s.ok("ping", json!({})), json!({}));
    assert!(s.recv_within(Duration::from_millis(100)).is_none());
}

fn exits_promptly_when_stdin_closes() {
    let mut s = Server::open(V1125, &[]);
    s.ok("tools/list", json!({}));
    let took = s.close();
    assert!(took < Duration::from_millis(500), "took {took:?}");
}

fn starts_fast_with_the_embedded_catalog() {
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        let mut s = Server::start_raw(&[]);
        s.ok("ping", json!({}));
        best = best.min(start.elapsed());
    }
    assert!(best < Duration::from_millis(500), "best of 5: {best:?}");
}

fn long_queries_are_refused_and_limits_named() {
    let mut s = Server::open(V1125, &[]);
    let e = s.err("tools/list", json!({"query": "a".repeat(4097)}));
    assert!(e["message"].as_str().is_some_and(|m| m.contains("4096")));
    assert!(s
        .request("tools/list", json!({"query": "a ".repeat(2048)}))
        .get("result")
        .is_some());
    let e = s.err("tools/list", json!({"filter": {"tags": vec!["x"; 65]}}));
    assert!(e["message"].as_str().is_some_and(|m| m.contains("64")));
    let e = s.err("tools/list", json!({"cursor": "A".repeat(513)}));
    assert!(e["message"].as_str().is_some_and(|m| m.contains("512")));
    let names = vec!["page_get"; 65].join(",");
    let e = s.err(
        "resources/read",
        json!({"uri": format!("resource:///tool_descriptions?tools={names}")}),
    );
    assert!(
        e["message"].as_str().is_some_and(|m| m.contains("64")),
        "{e}"
    );
}

fn rate_limit_refuses_then_refills() {
    let mut s = Server::start(&["--rate-limit", "5/s"]);
    let mut limited = None;
    for _ in 0..20 {
        let r = s.request("ping", json!({}));
        if r.get("error").is_some() {
            limited = Some(r);
            break;
        }
    }
    let r = limited.expect("rate limit reached");
    assert_eq!(r["error"]["code"], -32000);
    let wait = r["error"]["data"]["retryAfterMs"]
        .as_u64()
        .expect("retryAfterMs");
    assert!(r["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("retry after")));
    std::thread::sleep(Duration::from_millis(wait + 50));
    assert!(s.request("ping", json!({})).get("result").is_some());
}

fn fault_help_and_bad_arguments() {
    let out = std::process::Command::new(BIN)
        .args(["serve-reference", "--fault", "help"])
        .output()
        .expect("run");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ignore-query") && text.contains("pd-shared-auth"));
    let out = std::process::Command::new(BIN)
        .args(["serve-reference", "--fault", "no-such-fault"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown fault"));
    let bad = std::env::temp_dir().join(format!("mcp-conform-bad-{}.json", std::process::id()));
    std::fs::write(&bad, br#"{"format":"mcp-conform/catalog@1","name":"x","tools":[{"name":"a","description":"d","inputSchema":{"type":"object"},"groups":["g"]}]}"#)
        .expect("write");
    let out = std::process::Command::new(BIN)
        .args(["serve-reference", "--catalog"])
        .arg(&bad)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("names group \"g\""));
    let _ = std::fs::remove_file(bad);
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        stateful_handshakes_negotiate_versions,
        stateless_discover_and_meta,
        unsupported_version_is_32022,
        missing_required_meta_is_32602,
        requests_before_initialize_are_refused_but_ping_works,
        ids_are_echoed_exactly,
        unknown_methods_and_bad_params,
        malformed_input_is_answered_and_serving_continues,
        notifications_and_client_responses_get_no_answer,
        exits_promptly_when_stdin_closes,
        starts_fast_with_the_embedded_catalog,
        long_queries_are_refused_and_limits_named,
        rate_limit_refuses_then_refills,
        fault_help_and_bad_arguments
    ]
}
