//! The hand-written message schemas (schemas/mcp-messages.schema.json)
//! must agree with the official MCP schemas on every sample message: valid
//! ones pass both, broken ones fail both. The official schemas are found as
//! prereq.rs's `official_schema_dir` says and never copied into the
//! repository; where they are absent the trial is ignored with the reason,
//! unless the `schemas` prerequisite is required.

use libtest_mimic::Trial;
use mcp_conform::schema::{builtin, SchemaSet};
use serde_json::{json, Value};

use crate::prereq::{self, Prereq, SCHEMA_ERAS};

pub fn trials() -> Vec<Trial> {
    vec![prereq::trial(
        "schema_crosscheck::hand_written_schemas_agree_with_the_official_ones",
        Prereq::Schemas,
        || prereq::official_schema_dir().map(|_| ()),
        hand_written_schemas_agree_with_the_official_ones,
    )]
}

/// (our definition, official definition per era, sample, valid?)
fn samples() -> Vec<(&'static str, Value, bool)> {
    let tool = json!({"name": "page_create", "title": "Create Page", "description": "Create a new page.",
        "inputSchema": {"type": "object", "additionalProperties": true}, "groups": ["pages"], "tags": ["stable"]});
    vec![
        (
            "ListToolsResult",
            json!({"tools": [tool.clone()], "nextCursor": "abc"}),
            true,
        ),
        ("ListToolsResult", json!({"tools": [{"name": "x"}]}), false),
        ("ListToolsResult", json!({"tools": "none"}), false),
        (
            "ListToolsResult",
            json!({"tools": [{"name": 3, "inputSchema": {"type": "object"}}]}),
            false,
        ),
        (
            "InitializeResult",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {"filtering": true}, "filtering": {"groups": {"listChanged": true}}}, "serverInfo": {"name": "s", "version": "1"}}),
            true,
        ),
        (
            "InitializeResult",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
            false,
        ),
        (
            "InitializeResult",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s"}}),
            false,
        ),
        (
            "CallToolResult",
            json!({"content": [{"type": "text", "text": "ok"}], "isError": false}),
            true,
        ),
        ("CallToolResult", json!({"isError": true}), false),
        (
            "ListResourcesResult",
            json!({"resources": [{"uri": "resource:///tool_descriptions", "name": "Tool Descriptions", "mimeType": "application/json"}]}),
            true,
        ),
        (
            "ListResourcesResult",
            json!({"resources": [{"name": "no uri"}]}),
            false,
        ),
        (
            "ReadResourceResult",
            json!({"contents": [{"uri": "resource:///tool_descriptions?tools=a", "mimeType": "application/json", "text": "{}"}]}),
            true,
        ),
        (
            "ReadResourceResult",
            json!({"contents": [{"text": "no uri"}]}),
            false,
        ),
        (
            "ListPromptsResult",
            json!({"prompts": [{"name": "p", "arguments": [{"name": "a", "required": true}]}]}),
            true,
        ),
        (
            "ListPromptsResult",
            json!({"prompts": [{"description": "no name"}]}),
            false,
        ),
        (
            "ListResourceTemplatesResult",
            json!({"resourceTemplates": [{"uriTemplate": "resource:///tool_descriptions{?tools}", "name": "t"}]}),
            true,
        ),
        (
            "ListResourceTemplatesResult",
            json!({"resourceTemplates": [{"name": "t"}]}),
            false,
        ),
        (
            "DiscoverResult",
            json!({"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}),
            true,
        ),
        (
            "DiscoverResult",
            json!({"supportedVersions": ["2026-07-28"], "capabilities": {}}),
            false,
        ),
        (
            "JSONRPCErrorResponse",
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}),
            true,
        ),
        (
            "JSONRPCErrorResponse",
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "-32601", "message": "no"}}),
            false,
        ),
        (
            "JSONRPCErrorResponse",
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}}),
            false,
        ),
    ]
}

/// Results of the stateless era carry resultType, ttlMs and cacheScope; our
/// schemas keep those in separate definitions that scenarios add in that era.
fn stateless_extras(def: &str) -> Option<&'static str> {
    match def {
        "ListToolsResult"
        | "ListResourcesResult"
        | "ReadResourceResult"
        | "ListPromptsResult"
        | "ListResourceTemplatesResult" => Some("CacheableResult"),
        "CallToolResult" => Some("CompleteResult"),
        _ => None,
    }
}

fn with_stateless_fields(def: &str, sample: &Value) -> Value {
    let mut v = sample.clone();
    if let (Some(extra), Some(map)) = (stateless_extras(def), v.as_object_mut()) {
        map.insert("resultType".into(), json!("complete"));
        if extra == "CacheableResult" {
            map.insert("ttlMs".into(), json!(0));
            map.insert("cacheScope".into(), json!("public"));
        }
    }
    v
}

fn hand_written_schemas_agree_with_the_official_ones() {
    let dir = prereq::official_schema_dir().unwrap_or_else(|e| panic!("{e}"));
    let mut compared = 0;
    for era in SCHEMA_ERAS {
        let text = std::fs::read_to_string(dir.join(era).join("schema.json"))
            .unwrap_or_else(|e| panic!("{era}: {e}"));
        let official = SchemaSet::new(
            era,
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{era}: {e}")),
        );
        for (def, sample, valid) in samples() {
            let official_def = if era == "2025-06-18" && def == "JSONRPCErrorResponse" {
                "JSONRPCError"
            } else {
                def
            };
            if !official.has(official_def) {
                continue;
            }
            let sample = if era == "2026-07-28" {
                with_stateless_fields(def, &sample)
            } else {
                sample
            };
            let mut ours = builtin().errors(&sample, def);
            if era == "2026-07-28" {
                if let Some(extra) = stateless_extras(def) {
                    ours.extend(builtin().errors(&sample, extra));
                }
            }
            let theirs = official.errors(&sample, official_def);
            assert_eq!(
                ours.is_empty(),
                valid,
                "{era} {def}: our verdict on {sample} is wrong: {ours:?}"
            );
            assert_eq!(
                theirs.is_empty(),
                valid,
                "{era} {def}: the official verdict on {sample} differs: {theirs:?}"
            );
            compared += 1;
        }
        // Without the stateless fields, the official 2026 list results reject the message, and so do we.
        if era == "2026-07-28" {
            let bare = json!({"tools": []});
            assert!(!official.errors(&bare, "ListToolsResult").is_empty());
            assert!(!builtin().errors(&bare, "CacheableResult").is_empty());
        }
    }
    assert!(compared >= 50, "only {compared} comparisons ran");
}
