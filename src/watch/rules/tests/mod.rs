//! Every built-in rule shown failing on a conversation that breaks it, and
//! holding on one that does not; a rule on one side is never broken by the
//! other side's messages.

use serde_json::{json, Value};

use super::{builtin, Checker, Rule};
use crate::watch::trace::{HttpMeta, Msg, Side};

const C: Side = Side::Client;
const S: Side = Side::Server;

/// One message: side, body, and (over HTTP) the POST's or answer's headers.
type Step = (Side, Value, Option<HttpMeta>);

fn m(side: Side, v: Value) -> Step {
    (side, v, None)
}

fn post(v: Value, headers: &[(&str, &str)], exchange: u64) -> Step {
    let meta = HttpMeta {
        path: None,
        method: "POST".into(),
        status: None,
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect(),
        exchange,
    };
    (C, v, Some(meta))
}

fn answer(v: Value, status: u16, exchange: u64) -> Step {
    let meta = HttpMeta {
        path: None,
        method: "POST".into(),
        status: Some(status),
        headers: Vec::new(),
        exchange,
    };
    (S, v, Some(meta))
}

const V26: &str = "2026-07-28";

fn meta26() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": V26,
           "io.modelcontextprotocol/clientCapabilities": {},
           "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}})
}

fn req(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn req26(id: i64, method: &str, mut params: Value) -> Value {
    if let Some(p) = params.as_object_mut() {
        p.insert("_meta".into(), meta26());
    }
    req(id, method, params)
}

fn ok(id: i64, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn note(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn init() -> Vec<Step> {
    vec![
        m(
            C,
            req(
                1,
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
            ),
        ),
        m(
            S,
            ok(
                1,
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {"filtering": true}}, "serverInfo": {"name": "s", "version": "1"}}),
            ),
        ),
        m(C, note("notifications/initialized", json!({}))),
    ]
}

/// The 2026-07-28 handshake over HTTP: server/discover and its answer.
fn discover26() -> Vec<Step> {
    vec![
        post(
            req26(1, "server/discover", json!({})),
            &[
                ("MCP-Protocol-Version", V26),
                ("Mcp-Method", "server/discover"),
            ],
            1,
        ),
        answer(
            ok(
                1,
                json!({"supportedVersions": [V26], "capabilities": {}, "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}),
            ),
            200,
            1,
        ),
    ]
}

/// A 2025-11-25 handshake over HTTP whose answer issues Mcp-Session-Id
/// `abc`, then `rest`.
fn session_with_id(rest: Vec<Step>) -> Vec<Step> {
    let mut all = vec![
        post(init().remove(0).1, &[], 1),
        (
            S,
            init().remove(1).1,
            Some(HttpMeta {
                path: None,
                method: "POST".into(),
                status: Some(200),
                headers: vec![("mcp-session-id".into(), "abc".into())],
                exchange: 1,
            }),
        ),
    ];
    all.extend(rest);
    all
}

/// A bodiless client request (GET, DELETE) carrying `headers`.
fn bodiless(method: &str, headers: &[(&str, &str)], exchange: u64) -> Step {
    let (side, _, meta) = post(Value::Null, headers, exchange);
    let meta = meta.map(|m| HttpMeta {
        method: method.into(),
        ..m
    });
    (side, Value::Null, meta)
}

fn with_init(rest: Vec<Step>) -> Vec<Step> {
    let mut all = init();
    all.extend(rest);
    all
}

fn run(rule: Rule, steps: &[Step], raw: Option<(Side, &str)>) -> Vec<String> {
    let http = steps.iter().any(|s| s.2.is_some());
    let mut checker = Checker::new(vec![rule], http);
    for (i, (side, v, meta)) in steps.iter().enumerate() {
        let text = if v.is_null() {
            String::new()
        } else {
            v.to_string()
        };
        checker.feed(Msg::new(i + 1, *side, 0, text, meta.clone()));
    }
    if let Some((side, text)) = raw {
        let pos = steps.len() + 1;
        checker.feed(Msg::new(pos, side, 0, text.to_string(), None));
    }
    checker.close();
    checker.finish();
    checker
        .violations
        .iter()
        .map(|v| v.message.clone())
        .collect()
}

/// The breaking conversation of each rule.
fn breaking(id: &str) -> (Vec<Step>, Option<(Side, &'static str)>) {
    let list = |id: i64, params: Value| req(id, "tools/list", params);
    let steps = match id {
        "client/json-message" => return (init(), Some((C, "not json"))),
        "server/json-message" => return (init(), Some((S, "Listening on stdio"))),
        "client/jsonrpc-version" => vec![m(
            C,
            json!({"jsonrpc": "1.0", "id": 1, "method": "initialize"}),
        )],
        "server/jsonrpc-version" => with_init(vec![
            m(C, list(2, json!({}))),
            m(S, json!({"id": 2, "result": {"tools": []}})),
        ]),
        "client/request-id" => with_init(vec![m(
            C,
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
        )]),
        "server/request-id" => with_init(vec![m(
            S,
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
        )]),
        "client/unique-request-ids" => {
            with_init(vec![m(C, list(2, json!({}))), m(C, list(2, json!({})))])
        }
        "server/unique-request-ids" => with_init(vec![
            m(S, req(7, "ping", json!({}))),
            m(S, req(7, "ping", json!({}))),
        ]),
        "client/unique-request-ids-session" => with_init(vec![
            m(C, list(2, json!({}))),
            m(S, ok(2, json!({"tools": []}))),
            m(C, list(2, json!({}))),
        ]),
        "client/response-matches-request" => with_init(vec![m(C, ok(9, json!({})))]),
        "server/response-matches-request" => with_init(vec![
            m(C, list(2, json!({}))),
            m(S, ok(2, json!({"tools": []}))),
            m(S, ok(2, json!({"tools": []}))),
        ]),
        "client/no-response-to-notification" => with_init(vec![
            m(S, note("notifications/tools/list_changed", json!({}))),
            m(C, json!({"jsonrpc": "2.0", "id": null, "result": {}})),
        ]),
        "server/no-response-to-notification" => with_init(vec![
            m(C, note("notifications/cancelled", json!({"requestId": 99}))),
            m(
                S,
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32601, "message": "x"}}),
            ),
        ]),
        "client/result-or-error" => with_init(vec![
            m(S, req(5, "ping", json!({}))),
            m(C, json!({"jsonrpc": "2.0", "id": 5})),
        ]),
        "server/result-or-error" => with_init(vec![
            m(C, list(2, json!({}))),
            m(
                S,
                json!({"jsonrpc": "2.0", "id": 2, "result": {}, "error": {"code": 1, "message": "x"}}),
            ),
        ]),
        "client/error-code-integer" => with_init(vec![
            m(S, req(5, "roots/list", json!({}))),
            m(
                C,
                json!({"jsonrpc": "2.0", "id": 5, "error": {"code": "E", "message": "x"}}),
            ),
        ]),
        "server/error-code-integer" => with_init(vec![
            m(C, list(2, json!({}))),
            m(
                S,
                json!({"jsonrpc": "2.0", "id": 2, "error": {"code": "TOOL_DESCRIPTION_REQUIRED", "message": "x"}}),
            ),
        ]),
        "client/ping-empty" => with_init(vec![
            m(S, req(5, "ping", json!({}))),
            m(C, ok(5, json!({"status": "ok"}))),
        ]),
        "server/ping-empty" => with_init(vec![
            m(C, req(2, "ping", json!({}))),
            m(S, ok(2, json!({"status": "ok"}))),
        ]),
        "client/progress-token-known" => with_init(vec![m(
            C,
            note(
                "notifications/progress",
                json!({"progressToken": "t", "progress": 1}),
            ),
        )]),
        "server/progress-token-known" => with_init(vec![
            m(C, req(2, "tools/call", json!({"name": "a"}))),
            m(
                S,
                note(
                    "notifications/progress",
                    json!({"progressToken": 0, "progress": 1}),
                ),
            ),
        ]),
        "client/cancel-in-flight" => with_init(vec![m(
            C,
            note("notifications/cancelled", json!({"requestId": 42})),
        )]),
        "client/cancel-notifies" => with_init(abandoned_call(false)),
        "client/cancel-notifies-stdio" => {
            let mut s = vec![
                m(C, req26(1, "server/discover", json!({}))),
                m(
                    S,
                    ok(
                        1,
                        json!({"supportedVersions": [V26], "capabilities": {}, "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}),
                    ),
                ),
                m(C, req26(2, "tools/call", json!({"name": "slow"}))),
            ];
            s.push(m(C, req26(3, "tools/list", json!({}))));
            s.push(m(
                S,
                ok(
                    3,
                    json!({"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}),
                ),
            ));
            s
        }
        "client/initialize-first" => vec![m(C, list(1, json!({})))],
        "client/initialized-before-requests" => {
            let mut s = init();
            s.pop();
            s.push(m(C, list(2, json!({}))));
            s
        }
        "client/no-requests-before-init-answer" => vec![init().remove(0), m(C, list(2, json!({})))],
        "server/no-requests-before-initialized" => {
            let mut s = init();
            s.pop();
            s.push(m(S, req(1, "roots/list", json!({}))));
            s
        }
        "client/no-cancel-initialize" => vec![
            init().remove(0),
            m(C, note("notifications/cancelled", json!({"requestId": 1}))),
        ],
        "server/cancel-in-flight" => with_init(vec![m(
            S,
            note("notifications/cancelled", json!({"requestId": 3})),
        )]),
        "client/meta-protocol-version" => vec![
            m(C, req26(1, "server/discover", json!({}))),
            m(
                C,
                req(
                    2,
                    "tools/list",
                    json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
                ),
            ),
        ],
        "client/meta-client-capabilities" => vec![m(
            C,
            req(
                1,
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": V26}}),
            ),
        )],
        "client/meta-client-info" => vec![m(
            C,
            req(
                1,
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": V26, "io.modelcontextprotocol/clientCapabilities": {}}}),
            ),
        )],
        "client/no-initialize-to-modern-server" => vec![
            m(C, req26(1, "server/discover", json!({}))),
            m(
                S,
                ok(
                    1,
                    json!({"supportedVersions": [V26], "capabilities": {}, "resultType": "complete"}),
                ),
            ),
            m(C, init().remove(0).1),
        ],
        "client/retry-supported-version" => {
            let mut p = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}});
            let r1 = req(1, "tools/list", p.clone());
            p["_meta"]["x"] = json!(1);
            vec![
                m(C, r1),
                m(
                    S,
                    json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": [V26], "requested": "2099-01-01"}}}),
                ),
                m(C, req(2, "tools/list", p)),
            ]
        }
        "client/cancel-client-requests-only" => vec![
            m(C, req26(1, "tools/list", json!({}))),
            m(
                C,
                note(
                    "notifications/cancelled",
                    json!({"requestId": 8, "_meta": meta26()}),
                ),
            ),
        ],
        "server/cancel-listen-only" => vec![
            m(C, req26(1, "tools/call", json!({"name": "a"}))),
            m(S, req(4, "ping", json!({}))),
            m(S, note("notifications/cancelled", json!({"requestId": 4}))),
        ],
        "client/reserved-error-codes" => vec![
            m(C, req26(1, "tools/list", json!({}))),
            m(S, req(4, "ping", json!({}))),
            m(
                C,
                json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32050, "message": "x"}}),
            ),
        ],
        "server/reserved-error-codes" => vec![
            m(C, req26(1, "tools/list", json!({}))),
            m(
                S,
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32042, "message": "x"}}),
            ),
        ],
        "server/retired-error-codes" => vec![
            m(C, req26(1, "resources/read", json!({"uri": "x:/"}))),
            m(
                S,
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, "message": "x"}}),
            ),
        ],
        "server/result-type" => vec![
            m(C, req26(1, "tools/list", json!({}))),
            m(
                S,
                ok(1, json!({"tools": [], "ttlMs": 0, "cacheScope": "public"})),
            ),
        ],
        "client/result-type" => vec![
            m(C, req26(1, "tools/list", json!({}))),
            m(S, req(3, "ping", json!({}))),
            m(C, ok(3, json!({}))),
        ],
        "server/cache-hints" => vec![
            m(C, req26(1, "tools/list", json!({}))),
            m(S, ok(1, json!({"tools": [], "resultType": "complete"}))),
        ],
        "server/log-level-requested" => vec![
            m(C, req26(1, "resources/list", json!({}))),
            m(
                S,
                note(
                    "notifications/message",
                    json!({"level": "info", "data": "x"}),
                ),
            ),
        ],
        "client/search-cursor-query" => with_init(vec![
            m(C, req(2, "tools/search", json!({"query": "page"}))),
            m(S, ok(2, json!({"tools": [], "nextCursor": "c1"}))),
            m(C, req(3, "tools/search", json!({"cursor": "c1"}))),
        ]),
        "client/sep1821-cursor-query" => with_init(vec![
            m(C, list(2, json!({"query": "page"}))),
            m(S, ok(2, json!({"tools": [], "nextCursor": "c1"}))),
            m(C, list(3, json!({"cursor": "c1", "query": "task"}))),
        ]),
        "client/sep1821-relist-same-query" => with_init(vec![
            m(C, list(2, json!({"query": "page"}))),
            m(S, ok(2, json!({"tools": []}))),
            m(S, note("notifications/tools/list_changed", json!({}))),
            m(C, list(3, json!({}))),
        ]),
        "client/sep1300-cursor-filter" => with_init(vec![
            m(C, list(2, json!({"filter": {"groups": ["a"]}}))),
            m(S, ok(2, json!({"tools": [], "nextCursor": "c1"}))),
            m(C, list(3, json!({"cursor": "c1"}))),
        ]),
        "client/pd-read-before-retry" => with_init(vec![
            m(C, req(2, "tools/call", json!({"name": "create_page"}))),
            m(
                S,
                json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32001, "message": "x", "data": {"code": "TOOL_DESCRIPTION_REQUIRED"}}}),
            ),
            m(
                C,
                req(
                    3,
                    "resources/read",
                    json!({"uri": "resource:///tool_descriptions?tools=other"}),
                ),
            ),
            m(C, req(4, "tools/call", json!({"name": "create_page"}))),
        ]),
        "client/http-accept" => vec![post(
            req(1, "initialize", json!({})),
            &[("accept", "application/json")],
            1,
        )],
        "client/http-protocol-version-header" => vec![
            post(init().remove(0).1, &[], 1),
            answer(init().remove(1).1, 200, 1),
            post(list(2, json!({})), &[], 2),
        ],
        "client/http-protocol-version-matches" => vec![post(
            req26(1, "tools/list", json!({})),
            &[
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Mcp-Method", "tools/list"),
            ],
            1,
        )],
        "client/http-mcp-method" => vec![post(
            req26(1, "tools/list", json!({})),
            &[("MCP-Protocol-Version", V26), ("Mcp-Method", "tools/call")],
            1,
        )],
        "client/http-mcp-name" => vec![post(
            req26(1, "tools/call", json!({"name": "a"})),
            &[
                ("MCP-Protocol-Version", V26),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "b"),
            ],
            1,
        )],
        "client/http-session-id" => session_with_id(vec![post(
            list(2, json!({})),
            &[("mcp-session-id", "xyz")],
            2,
        )]),
        "client/http-session-delete" => session_with_id(vec![post(
            list(2, json!({})),
            &[("mcp-session-id", "abc")],
            2,
        )]),
        "client/http-no-posted-responses" => vec![
            post(req26(1, "tools/list", json!({})), &[], 1),
            post(ok(5, json!({})), &[], 2),
        ],
        "server/http-notification-202" => vec![
            post(note("notifications/initialized", json!({})), &[], 1),
            answer(json!({}), 200, 1),
        ],
        "server/http-origin-malformed-403" => vec![
            post(
                list(1, json!({})),
                &[("origin", "evil"), ("host", "127.0.0.1:9")],
                1,
            ),
            answer(ok(1, json!({"tools": []})), 200, 1),
        ],
        "server/http-origin-foreign-served" => vec![
            post(
                list(1, json!({})),
                &[("origin", "https://evil.example"), ("host", "127.0.0.1:9")],
                1,
            ),
            answer(ok(1, json!({"tools": []})), 200, 1),
        ],
        "client/http-param-headers" => {
            let mut steps = discover26();
            steps.push(post(req26(2, "tools/list", json!({})), &[], 2));
            steps.push(answer(
                ok(
                    2,
                    json!({"tools": [{"name": "execute_sql", "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}]}),
                ),
                200,
                2,
            ));
            steps.push(post(
                req26(
                    3,
                    "tools/call",
                    json!({"name": "execute_sql", "arguments": {"region": "us-west1"}}),
                ),
                &[("Mcp-Param-Region", "us-east1")],
                3,
            ));
            steps
        }
        "client/http-no-get-stream" => {
            let mut steps = discover26();
            let get = HttpMeta {
                path: None,
                method: "GET".into(),
                status: None,
                headers: vec![("accept".into(), "text/event-stream".into())],
                exchange: 2,
            };
            steps.push((C, Value::Null, Some(get)));
            steps
        }
        "client/sep1821-query-needs-capability" => {
            let mut steps = init();
            steps[1].1["result"]["capabilities"] = json!({});
            steps.push(m(C, req(2, "tools/list", json!({"query": "page"}))));
            steps
        }
        "client/sep1300-filter-needs-capability" => with_init(vec![m(
            C,
            req(2, "tools/list", json!({"filter": {"groups": ["a"]}})),
        )]),
        "client/search-needs-capability" => {
            with_init(vec![m(C, req(2, "tools/search", json!({"query": "page"})))])
        }
        "client/pd-no-bare-read-after-refusal" => with_init(vec![
            m(
                C,
                req(
                    2,
                    "resources/read",
                    json!({"uri": "resource:///tool_descriptions"}),
                ),
            ),
            m(
                S,
                json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32002, "message": "x", "data": {"code": "MISSING_TOOL_SELECTION"}}}),
            ),
            m(
                C,
                req(
                    3,
                    "resources/read",
                    json!({"uri": "resource:///tool_descriptions"}),
                ),
            ),
        ]),
        other => panic!("no breaking conversation for rule {other}"),
    };
    (steps, None)
}

/// A tools/call that gets no answer while a later ping does; `cancelled`:
/// the client named the call in notifications/cancelled between them.
fn abandoned_call(cancelled: bool) -> Vec<Step> {
    let mut s = vec![m(C, req(2, "tools/call", json!({"name": "slow"})))];
    if cancelled {
        s.push(m(
            C,
            note("notifications/cancelled", json!({"requestId": 2})),
        ));
    }
    s.push(m(C, req(3, "ping", json!({}))));
    s.push(m(S, ok(3, json!({}))));
    s
}

#[test]
fn a_call_cancelled_or_still_awaited_is_not_abandoned() {
    let rules: Vec<Rule> = builtin()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter(|r| r.id == "client/cancel-notifies")
        .collect();
    let [rule] = rules.as_slice() else {
        panic!("client/cancel-notifies: {rules:?}")
    };
    assert!(run(rule.clone(), &with_init(abandoned_call(true)), None).is_empty());
    // Nothing after the call was answered: the client may still be waiting.
    let mut waiting = with_init(abandoned_call(false));
    waiting.pop();
    assert!(run(rule.clone(), &waiting, None).is_empty());
    let found = run(rule.clone(), &with_init(abandoned_call(false)), None);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("tools/call (id 2)"), "{found:?}");
}

#[test]
fn every_rule_fails_on_a_conversation_that_breaks_it() {
    let rules = builtin().unwrap_or_else(|e| panic!("{e}"));
    let mut silent = Vec::new();
    for r in rules {
        let (steps, raw) = breaking(&r.id);
        if run(r.clone(), &steps, raw).is_empty() {
            silent.push(r.id);
        }
    }
    assert!(silent.is_empty(), "rules that found nothing: {silent:?}");
}

#[test]
fn a_clean_conversation_breaks_no_rule() {
    let stateful = with_init(vec![
        m(
            C,
            req(
                2,
                "tools/list",
                json!({"query": "page", "_meta": {"progressToken": "p"}}),
            ),
        ),
        m(
            S,
            note(
                "notifications/progress",
                json!({"progressToken": "p", "progress": 1}),
            ),
        ),
        m(S, ok(2, json!({"tools": [], "nextCursor": "c1"}))),
        m(
            C,
            req(3, "tools/list", json!({"query": "page", "cursor": "c1"})),
        ),
        m(S, ok(3, json!({"tools": []}))),
        m(S, req(1, "ping", json!({}))),
        m(C, ok(1, json!({}))),
        m(C, req(4, "ping", json!({}))),
        m(S, ok(4, json!({}))),
    ]);
    let modern = vec![
        m(C, req26(1, "server/discover", json!({}))),
        m(
            S,
            ok(
                1,
                json!({"supportedVersions": [V26], "capabilities": {}, "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}),
            ),
        ),
        m(C, req26(2, "tools/list", json!({}))),
        m(
            S,
            ok(
                2,
                json!({"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}),
            ),
        ),
    ];
    for r in builtin().unwrap_or_else(|e| panic!("{e}")) {
        for steps in [&stateful, &modern] {
            let found = run(r.clone(), steps, None);
            assert!(found.is_empty(), "{}: {found:?}", r.id);
        }
    }
}

#[test]
fn a_rule_is_never_broken_by_the_other_side() {
    // Every breaking conversation with the sides swapped on its last message
    // breaks nothing of the rule's side there.
    for r in builtin().unwrap_or_else(|e| panic!("{e}")) {
        let (mut steps, raw) = breaking(&r.id);
        let Some(last) = steps.last_mut() else {
            continue;
        };
        if raw.is_some() {
            continue;
        }
        last.0 = last.0.other();
        let checker_rule = r.clone();
        let http = steps.iter().any(|s| s.2.is_some());
        let mut checker = Checker::new(vec![checker_rule], http);
        for (i, (side, v, meta)) in steps.iter().enumerate() {
            checker.feed(Msg::new(i + 1, *side, 0, v.to_string(), meta.clone()));
        }
        let swapped = steps.len();
        assert!(
            checker.violations.iter().all(|v| v.pos != swapped),
            "{}: {:?}",
            r.id,
            checker.violations
        );
    }
}

#[test]
fn an_initialize_answer_is_judged_in_the_version_it_agrees_to() {
    // A client that offers 2026-07-28 in initialize and is answered with
    // 2025-11-25 is in a 2025-11-25 conversation: the answer needs no
    // resultType (a 2026-07-28 server rule).
    let rule = builtin()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|r| r.id == "server/result-type")
        .unwrap_or_else(|| panic!("server/result-type is a built-in rule"));
    let offer = req(
        0,
        "initialize",
        json!({"protocolVersion": "2026-07-28", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    );
    let agreed = ok(
        0,
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
    );
    let found = run(rule, &[m(C, offer), m(S, agreed)], None);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_relist_with_the_same_query_or_before_any_change_holds() {
    let rule = builtin()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|r| r.id == "client/sep1821-relist-same-query")
        .unwrap_or_else(|| panic!("the rule is built in"));
    let list = |id: i64, p: Value| req(id, "tools/list", p);
    let same = with_init(vec![
        m(C, list(2, json!({"query": "page"}))),
        m(S, ok(2, json!({"tools": []}))),
        m(S, note("notifications/tools/list_changed", json!({}))),
        m(C, list(3, json!({"query": "page"}))),
        m(S, ok(3, json!({"tools": []}))),
        // A later list is the user's own: the rule is about the re-list.
        m(C, list(4, json!({}))),
    ]);
    assert!(run(rule.clone(), &same, None).is_empty());
    let no_change = with_init(vec![
        m(C, list(2, json!({"query": "page"}))),
        m(S, ok(2, json!({"tools": []}))),
        m(C, list(3, json!({}))),
    ]);
    assert!(run(rule, &no_change, None).is_empty());
}

#[test]
fn an_initialize_after_a_modern_discover_breaks_the_rule_whatever_came_between() {
    let rule = builtin()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|r| r.id == "client/no-initialize-to-modern-server")
        .unwrap_or_else(|| panic!("the rule is built in"));
    let steps = vec![
        m(C, req26(1, "server/discover", json!({}))),
        m(
            S,
            ok(
                1,
                json!({"supportedVersions": [V26], "capabilities": {}, "resultType": "complete"}),
            ),
        ),
        m(C, req26(2, "tools/list", json!({}))),
        m(
            C,
            json!({"jsonrpc": "2.0", "id": "x", "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}),
        ),
    ];
    assert_eq!(run(rule, &steps, None).len(), 1);
}

/// A checker with every built-in rule fed `steps`.
fn fed(steps: &[Step], http: bool, whole: bool) -> Checker {
    let mut checker = Checker::new(builtin().unwrap_or_else(|e| panic!("{e}")), http);
    for (i, (side, v, meta)) in steps.iter().enumerate() {
        checker.feed(Msg::new(i + 1, *side, 0, v.to_string(), meta.clone()));
    }
    if whole {
        checker.finish();
    }
    checker
}

/// The result of `id` in a watch report.
fn result_of<'r>(
    report: &'r crate::report::data::ReportData,
    id: &str,
) -> &'r crate::run::outcome::ScenarioResult {
    report
        .scenarios
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no result {id}"))
}

fn reason(checker: &Checker, id: &str) -> Option<String> {
    let rule = checker.rules.iter().find(|r| r.id == id);
    let rule = rule.unwrap_or_else(|| panic!("no rule {id}"));
    checker.not_exercised(rule)
}

mod exercised;
mod report;
mod session_end;
