//! The fuzz targets' properties (crates/reference/src/fuzzing.rs) as property
//! tests with a fixed number of cases, so every `cargo test` fuzzes the
//! reference server's JSON-RPC entry point and its query / filter / cursor /
//! resource URI parsers a little. The open-ended runs are scripts/fuzz.sh.

use mcp_conform::reference::dispatch::known_methods;
use mcp_conform::reference::fuzzing::{
    check_cursor, check_query_filter, check_resource_uri, check_rpc_lines, HIDDEN_TOOL,
};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// Cases per property: the four together take about 6 s in a test build.
const CASES: u32 = 8192;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Names the catalog knows, the hidden one among them, and near misses.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "page_create",
            "page_get",
            "task_create",
            "page_search",
            "tool_search",
            HIDDEN_TOOL,
            "Page_Create",
            "pages",
            "tasks",
            "write",
            "read",
            "stable",
            "admin",
            "purge",
        ])
        .prop_map(str::to_string),
        "[a-z_]{0,12}",
        "\\PC{0,8}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(name(), 0..4).prop_map(|w| w.join(" ")),
        "[a-z%0-9 ,&=+?.*$\\{\\}\\\\]{0,24}",
        "\\PC{0,24}",
        Just("%00".to_string()),
        Just("a\0b".to_string()),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((name(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn filter() -> impl Strategy<Value = Value> {
    let names = || prop::collection::vec(name(), 0..4);
    prop_oneof![
        4 => (proptest::option::of(names()), proptest::option::of(names()))
            .prop_map(|(g, t)| {
                let mut m = Map::new();
                if let Some(g) = g {
                    m.insert("groups".into(), json!(g));
                }
                if let Some(t) = t {
                    m.insert("tags".into(), json!(t));
                }
                Value::Object(m)
            }),
        1 => value(),
    ]
}

fn params() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "query",
        "filter",
        "cursor",
        "name",
        "uri",
        "arguments",
        "tool",
        "action",
        "limit",
        "category",
        "tags",
        "_meta",
    ]);
    prop::collection::vec((key, value()), 0..4).prop_map(|kv| {
        Value::Object(
            kv.into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect::<Map<_, _>>(),
        )
    })
}

fn line() -> impl Strategy<Value = Vec<u8>> {
    let methods: Vec<String> = known_methods().into_iter().map(str::to_string).collect();
    prop_oneof![
        6 => (any::<i64>(), prop::sample::select(methods), params(), any::<bool>()).prop_map(
            |(id, method, mut params, stateless)| {
                if stateless {
                    params["_meta"] =
                        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
                }
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
                    .to_string()
                    .into_bytes()
            }
        ),
        1 => value().prop_map(|v| v.to_string().into_bytes()),
        1 => prop::collection::vec(any::<u8>(), 0..48),
    ]
}

proptest! {
    #![proptest_config(config())]

        fn rpc_lines(mode in any::<u8>(), lines in prop::collection::vec(line(), 1..8)) {
        let mut input = vec![mode];
        for l in &lines {
            input.extend_from_slice(l);
            input.push(b'\n');
        }
        if let Err(broken) = check_rpc_lines(&input) {
            prop_assert!(false, "{}", broken);
        }
    }

        fn query_and_filter(query in text(), filter in filter()) {
        if let Err(broken) = check_query_filter(&query, &filter) {
            prop_assert!(false, "{}", broken);
        }
    }

        fn cursors(bytes in prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64),
        "[A-Za-z0-9_-]{0,80}".prop_map(String::into_bytes),
    ]) {
        if let Err(broken) = check_cursor(&bytes) {
            prop_assert!(false, "{}", broken);
        }
    }

        fn resource_uris(
        base in prop::sample::select(vec![
            "resource:///tool_descriptions",
            "resource:///tool_descriptions/",
            "docs:///policies/retention",
            "",
        ]),
        pairs in prop::collection::vec((
            prop::sample::select(vec!["tools", "tool", "TOOLS", "%74ools", ""]),
            prop::collection::vec(name(), 0..4),
        ), 0..3),
        tail in "[%,+&=a-z0-9 ]{0,8}",
    ) {
        let query: Vec<String> = pairs
            .iter()
            .map(|(k, names)| format!("{k}={}", names.join(",")))
            .collect();
        let uri = if query.is_empty() {
            format!("{base}{tail}")
        } else {
            format!("{base}?{}{tail}", query.join("&"))
        };
        if let Err(broken) = check_resource_uri(&uri) {
            prop_assert!(false, "{}", broken);
        }
    }
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![rpc_lines, query_and_filter, cursors, resource_uris]
}
