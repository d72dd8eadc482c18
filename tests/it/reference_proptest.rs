//! Property test of the dispatch entry point: random JSON-RPC-ish messages
//! (known and unknown methods, params of random shapes and types, random
//! ids, random byte lines) never panic, and every request gets exactly one
//! well-formed JSON-RPC response.

use mcp_conform::reference::dispatch::known_methods;
use mcp_conform::reference::{Catalog, Config, Server};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn server(control: bool) -> Server {
    let cat =
        Catalog::from_slice(include_bytes!("../../fixtures/catalogs/mini.json")).expect("mini");
    Server::new(
        cat,
        Config {
            control,
            ..Config::default()
        },
    )
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z_/:?=,.*${}%0-9 ]{0,24}".prop_map(Value::String),
        prop_oneof![
            Just("page_get"),
            Just("tool_search"),
            Just("resource:///tool_descriptions?tools=page_get,nope"),
            Just("resource:///tool_descriptions"),
            Just("docs:///policies/retention"),
            Just("2026-07-28"),
            Just("2025-11-25"),
            Just("add_tool"),
            Just("remove_group"),
            Just("pages"),
        ]
        .prop_map(|s| Value::String(s.into())),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "query",
            "filter",
            "groups",
            "tags",
            "cursor",
            "name",
            "arguments",
            "uri",
            "_meta",
            "protocolVersion",
            "action",
            "tool",
            "group",
            "tag",
            "notifications",
            "limit",
            "category",
            "capabilities",
            "clientInfo",
            "io.modelcontextprotocol/protocolVersion",
            "toolsListChanged",
            "requestId",
        ])
        .prop_map(str::to_string),
        "[a-z]{1,6}",
    ]
}

fn method() -> impl Strategy<Value = String> {
    let known: Vec<String> = known_methods().into_iter().map(str::to_string).collect();
    prop_oneof![
        4 => prop::sample::select(known),
        1 => "[a-z/_]{0,20}",
        1 => Just("notifications/cancelled".to_string()),
        1 => Just("notifications/initialized".to_string()),
    ]
}

fn id() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        any::<i64>().prop_map(|i| Some(json!(i))),
        any::<u64>().prop_map(|i| Some(json!(i))),
        "[0-9a-z]{0,8}".prop_map(|s| Some(json!(s))),
        Just(Some(Value::Null)),
        Just(Some(json!(1.5))),
        Just(Some(json!([1]))),
    ]
}

/// Params: usually an object with plausible keys, sometimes anything.
fn params() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        1 => Just(None),
        4 => prop::collection::vec((key(), json_value()), 0..5)
            .prop_map(|kv| Some(Value::Object(kv.into_iter().collect::<Map<_, _>>()))),
        1 => json_value().prop_map(Some),
    ]
}

#[derive(Debug, Clone)]
enum Input {
    Message {
        id: Option<Value>,
        method: String,
        params: Option<Value>,
        stateless: bool,
    },
    Value(Value),
    Bytes(Vec<u8>),
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        8 => (id(), method(), params(), any::<bool>()).prop_map(|(id, method, params, stateless)| Input::Message { id, method, params, stateless }),
        1 => json_value().prop_map(Input::Value),
        1 => prop::collection::vec(any::<u8>(), 0..64).prop_map(Input::Bytes),
    ]
}

fn build(input: &Input) -> (Vec<u8>, Option<Value>) {
    match input {
        Input::Message {
            id,
            method,
            params,
            stateless,
        } => {
            let mut msg = json!({"jsonrpc": "2.0", "method": method});
            let mut params = params.clone();
            if *stateless {
                let p = params.get_or_insert_with(|| json!({}));
                if let Value::Object(map) = p {
                    map.insert(
                        "_meta".into(),
                        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
                    );
                }
            }
            if let Some(p) = params {
                msg["params"] = p;
            }
            if let Some(id) = id {
                msg["id"] = id.clone();
            }
            (msg.to_string().into_bytes(), id.clone())
        }
        Input::Value(v) => (v.to_string().into_bytes(), None),
        Input::Bytes(b) => (b.clone(), None),
    }
}

fn check_message(m: &Value) {
    assert_eq!(m["jsonrpc"], "2.0", "{m}");
    if m.get("method").is_some() {
        assert!(m["method"].is_string());
        assert!(m.get("id").is_none(), "server sent a request: {m}");
        return;
    }
    let id = &m["id"];
    assert!(
        id.is_null() || id.is_string() || id.is_i64() || id.is_u64(),
        "{m}"
    );
    match (m.get("result"), m.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            assert!(e["code"].is_i64(), "{m}");
            assert!(e["message"].is_string(), "{m}");
        }
        _ => panic!("not a response: {m}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, .. ProptestConfig::default() })]

        fn dispatch_never_panics_and_always_answers(inputs in prop::collection::vec(input(), 1..12), control in any::<bool>(), init in any::<bool>()) {
        let server = server(control);
        let mut session = server.new_session();
        if init {
            let out = server.handle(&mut session, json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "p", "version": "1"}}}));
            prop_assert_eq!(out.len(), 1);
        }
        for input in &inputs {
            let (line, id) = build(input);
            let out = server.handle_line(&mut session, &line);
            for m in &out {
                check_message(m);
            }
            let responses: Vec<&Value> = out.iter().filter(|m| m.get("method").is_none()).collect();
            let is_request = matches!(input, Input::Message { id: Some(_), .. });
            let is_listen = matches!(input, Input::Message { method, .. } if method == "subscriptions/listen");
            if is_request && !is_listen {
                prop_assert_eq!(responses.len(), 1, "request {:?} got {:?}", input, out);
                let got = &responses[0]["id"];
                let valid_id = id.as_ref().is_some_and(|i| i.is_string() || i.is_i64() || i.is_u64());
                if valid_id {
                    prop_assert_eq!(Some(got), id.as_ref());
                } else {
                    prop_assert!(got.is_null());
                }
            }
            if matches!(input, Input::Message { id: None, .. }) {
                prop_assert!(responses.is_empty(), "notification answered: {:?}", out);
            }
            if matches!(input, Input::Bytes(_) | Input::Value(_)) {
                prop_assert!(responses.len() <= 1);
            }
        }
    }
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![dispatch_never_panics_and_always_answers]
}
