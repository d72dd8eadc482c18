//! Cross-check: every message the reference server sends validates against
//! the official MCP schema of its era (`<era>/schema.json`, found as
//! prereq.rs's `official_schema_dir` says). Ignored, with the reason, where
//! the schemas are absent, unless the `schemas` prerequisite is required.

use std::path::Path;

use libtest_mimic::Trial;
use serde_json::{json, Value};

use crate::prereq::{self, Prereq};
use crate::reference_common::*;

pub fn trials() -> Vec<Trial> {
    vec![prereq::trial(
        "reference_schema::every_message_validates_against_its_era_schema",
        Prereq::Schemas,
        || prereq::official_schema_dir().map(|_| ()),
        every_message_validates_against_its_era_schema,
    )]
}

struct Schema {
    root: Value,
    defs: &'static str,
}

impl Schema {
    fn load(dir: &Path, version: &str) -> Schema {
        let path = dir.join(version).join("schema.json");
        let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let root: Value =
            serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let defs = if root.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        Schema { root, defs }
    }

    /// Errors of `instance` against definition `name`.
    fn check(&self, name: &str, instance: &Value) -> Vec<String> {
        let mut schema = self.root.clone();
        schema["$ref"] = json!(format!("#/{}/{name}", self.defs));
        let validator = match jsonschema::validator_for(&schema) {
            Ok(v) => v,
            Err(e) => return vec![format!("schema {name} does not compile: {e}")],
        };
        validator
            .iter_errors(instance)
            .map(|e| format!("{name} at {}: {e}", e.instance_path()))
            .collect()
    }

    fn has(&self, name: &str) -> bool {
        self.root[self.defs].get(name).is_some()
    }
}

fn result_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "server/discover" => "DiscoverResult",
        "tools/list" | "tools/search" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/list" | "prompts/search" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "resources/list" | "resources/search" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        _ => return None,
    })
}

fn every_message_validates_against_its_era_schema() {
    let dir = prereq::official_schema_dir().unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    for era in ERAS {
        let schema = Schema::load(&dir, era);
        assert!(
            !schema
                .check("ListToolsResult", &json!({"tools": 5}))
                .is_empty(),
            "the validator must reject a bad instance"
        );
        let mut s = Server::start(&["--control"]);
        let mut sent: Vec<(String, Value)> = Vec::new();
        if era != V0728 {
            let params = json!({"protocolVersion": era, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
            sent.push(("initialize".into(), s.request("initialize", params)));
        } else {
            sent.push((
                "server/discover".into(),
                s.request("server/discover", json!({})),
            ));
        }
        s.version = era.into();
        for (method, params) in [
            ("tools/list", json!({})),
            (
                "tools/list",
                json!({"query": "create page", "filter": {"tags": ["write"]}}),
            ),
            ("tools/search", json!({"query": "task"})),
            ("prompts/list", json!({})),
            ("prompts/search", json!({"query": "page"})),
            (
                "prompts/get",
                json!({"name": "plan_sprint", "arguments": {"goal": "x"}}),
            ),
            ("resources/list", json!({})),
            ("resources/search", json!({"query": "retention"})),
            ("resources/templates/list", json!({})),
            (
                "resources/read",
                json!({"uri": "resource:///tool_descriptions?tools=task_create,nope"}),
            ),
            (
                "resources/read",
                json!({"uri": "docs:///policies/retention"}),
            ),
            (
                "tools/call",
                json!({"name": "task_create", "arguments": {"title": "x"}}),
            ),
            (
                "tools/call",
                json!({"name": "task_create", "arguments": {}}),
            ),
            (
                "tools/call",
                json!({"name": "tool_search", "arguments": {"query": "page"}}),
            ),
            (
                "tools/call",
                json!({"name": "page_get", "arguments": {"page_id": "x"}}),
            ),
            ("tools/list", json!({"query": 5})),
            ("nope/nope", json!({})),
            (
                "resources/read",
                json!({"uri": "resource:///tool_descriptions"}),
            ),
            (
                "conform/mutate",
                json!({"action": "remove_tool", "name": "page_get"}),
            ),
        ] {
            sent.push((method.to_string(), s.request(method, params)));
        }
        let mut messages: Vec<(String, Value)> = sent;
        messages.extend(s.notes.drain(..).map(|n| ("notification".to_string(), n)));
        if era == V0728 {
            let params = s.params(json!({"notifications": {"toolsListChanged": true}}));
            s.send(&json!({"jsonrpc": "2.0", "id": "sub", "method": "subscriptions/listen", "params": params}));
            messages.push(("notification".into(), s.recv()));
            s.ok(
                "conform/mutate",
                json!({"action": "remove_tool", "name": "task_get"}),
            );
            messages.extend(s.notes.drain(..).map(|n| ("notification".to_string(), n)));
            while let Some(n) = s.recv_within(std::time::Duration::from_millis(200)) {
                messages.push(("notification".into(), n));
            }
            let e = s.exchange(&json!({"jsonrpc": "2.0", "id": 900, "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01"}}}));
            failures.extend(schema.check("UnsupportedProtocolVersionError", &e));
            messages.push(("error".into(), e));
        }
        for (method, msg) in &messages {
            failures.extend(
                schema
                    .check("JSONRPCMessage", msg)
                    .into_iter()
                    .map(|f| format!("{era} {method}: {f}")),
            );
            if let (Some(def), Some(result)) = (result_def(method), msg.get("result")) {
                if schema.has(def) {
                    failures.extend(
                        schema
                            .check(def, result)
                            .into_iter()
                            .map(|f| format!("{era} {method}: {f}")),
                    );
                }
            }
            if msg["method"] == "notifications/tools/list_changed" {
                failures.extend(schema.check("ToolListChangedNotification", msg));
            }
            if msg["method"] == "notifications/subscriptions/acknowledged" {
                failures.extend(schema.check("SubscriptionsAcknowledgedNotification", msg));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
