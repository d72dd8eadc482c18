//! Every profile of the reference server over real pipes, in all three
//! eras where the profile applies.

use crate::reference_common::*;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};

fn catalog() -> Value {
    serde_json::from_slice(&std::fs::read(mini()).expect("read mini")).expect("mini json")
}

fn entries_by_name(tools: &Value) -> HashMap<String, Value> {
    tools
        .as_array()
        .expect("array")
        .iter()
        .map(|t| (t["name"].as_str().expect("name").to_string(), t.clone()))
        .collect()
}

fn all_entries(s: &mut Server) -> HashMap<String, Value> {
    let r = s.ok("tools/list", json!({}));
    assert!(r.get("nextCursor").is_none());
    entries_by_name(&r["tools"])
}

// ---------------------------------------------------------------- sep-1821

fn sep1821_query_filters_and_ranks() {
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        let all = all_entries(&mut s);
        assert_eq!(all.len(), 14);
        let r = s.ok("tools/list", json!({"query": "create page"}));
        let names = tool_names(&r["tools"]);
        assert_eq!(names[0], "page_create", "{era}: {names:?}");
        for t in r["tools"].as_array().expect("tools") {
            assert_eq!(
                &all[t["name"].as_str().expect("name")],
                t,
                "entry differs from tools/list"
            );
        }
        assert_eq!(
            tool_names(&s.ok("tools/list", json!({"query": "task_assign"}))["tools"])[0],
            "task_assign"
        );
        assert_eq!(
            tool_names(&s.ok("tools/list", json!({"query": "Task Assign"}))["tools"])[0],
            "task_assign"
        );
        // A description word and an inflected form.
        assert!(s
            .list_names(json!({"query": "permanently"}))
            .contains(&"page_delete".to_string()));
        assert!(s
            .list_names(json!({"query": "creating"}))
            .contains(&"task_create".to_string()));
        // Tags and categories are searchable.
        assert!(s
            .list_names(json!({"query": "destructive"}))
            .contains(&"page_delete".to_string()));
        assert!(s.list_names(json!({"query": "nonexistentword"})).is_empty());
        // Empty and whitespace-only queries list everything.
        assert_eq!(s.list_names(json!({"query": ""})).len(), 14);
        assert_eq!(s.list_names(json!({"query": "   \t"})).len(), 14);
        // Same query twice, same order.
        assert_eq!(
            s.list_names(json!({"query": "task"})),
            s.list_names(json!({"query": "task"}))
        );
    }
}

fn sep1821_query_is_plain_text() {
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        for q in [
            ".*",
            "' OR 1=1--",
            "{\"tags\":[\"x\"]}",
            "${jndi:x}",
            "%00",
            "(((",
            "\\",
            "\u{0}",
            "*",
        ] {
            let r = s.request("tools/list", json!({"query": q}));
            let names = tool_names(&r["result"]["tools"]);
            assert!(r.get("result").is_some(), "{era} {q:?}: {r}");
            assert!(names.len() < 14, "{q:?} returned the whole catalog");
        }
        assert!(s.list_names(json!({"query": ".*"})).is_empty());
    }
}

// -------------------------------------------------------------- pagination

fn pagination_with_and_without_query_and_filter() {
    let path = generated(120);
    for era in ERAS {
        let mut s = Server::start_raw(&["--catalog".into(), path.display().to_string()]);
        s.connect(era);
        let first = s.ok("tools/list", json!({}));
        assert_eq!(first["tools"].as_array().map(Vec::len), Some(50));
        let all = s.list_names(json!({}));
        assert_eq!(all.len(), 120);
        assert_eq!(all.iter().collect::<BTreeSet<_>>().len(), 120, "duplicates");
        for params in [
            json!({"query": "create"}),
            json!({"filter": {"tags": ["stable"]}}),
            json!({"query": "list", "filter": {"groups": ["page", "task", "space", "user"]}}),
        ] {
            let names = s.list_names(params.clone());
            let unique: BTreeSet<_> = names.iter().collect();
            assert_eq!(unique.len(), names.len(), "duplicates for {params}");
            assert!(unique.iter().all(|n| all.contains(n)));
        }
        let cursor = first["nextCursor"].as_str().expect("cursor").to_string();
        // Replaying a cursor gives the same page.
        let a = s.ok("tools/list", json!({"cursor": cursor}));
        let b = s.ok("tools/list", json!({"cursor": cursor}));
        assert_eq!(a["tools"], b["tools"]);
        // Tampered, garbage, foreign cursors.
        let mut tampered = cursor.clone().into_bytes();
        tampered[10] = if tampered[10] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).expect("ascii");
        for bad in [tampered.as_str(), "garbage", "", "eyJvZmZzZXQiOjUwfQ"] {
            let e = s.err("tools/list", json!({"cursor": bad}));
            assert_eq!(e["code"], -32602);
            assert_eq!(e["message"], "invalid cursor", "{bad}");
        }
        let e = s.err("tools/list", json!({"cursor": cursor, "query": "create"}));
        assert_eq!(e["message"], "cursor does not belong to this query");
        let e = s.err(
            "tools/list",
            json!({"cursor": cursor, "filter": {"tags": ["beta"]}}),
        );
        assert_eq!(e["message"], "cursor does not belong to this query");
        let q = s.ok("tools/list", json!({"filter": {"tags": ["stable"]}}));
        if let Some(c) = q["nextCursor"].as_str() {
            let e = s.err(
                "tools/list",
                json!({"cursor": c, "filter": {"tags": ["beta"]}}),
            );
            assert_eq!(e["message"], "cursor does not belong to this query");
            // Same filter written differently keeps its cursor.
            assert!(s
                .request(
                    "tools/list",
                    json!({"cursor": c, "filter": {"tags": ["stable", "stable"], "groups": []}})
                )
                .get("result")
                .is_some());
        }
        for method in [
            "prompts/list",
            "resources/list",
            "resources/templates/list",
            "groups/list",
            "tags/list",
        ] {
            assert_eq!(
                s.err(method, json!({"cursor": cursor}))["code"],
                -32602,
                "{method}"
            );
            assert_eq!(
                s.err(method, json!({"cursor": "nope"}))["code"],
                -32602,
                "{method}"
            );
        }
    }
}

// ------------------------------------------------------------------ search

fn search_requires_a_string_query() {
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        for method in ["tools/search", "prompts/search", "resources/search"] {
            for params in [json!({}), json!({"cursor": "abc"}), Value::Null] {
                assert_eq!(s.err(method, params)["code"], -32602, "{era} {method}");
            }
            for q in [json!(5), json!(["a"]), json!(true), json!({})] {
                assert_eq!(s.err(method, json!({"query": q}))["code"], -32602);
            }
        }
        let r = s.exchange(&json!({"jsonrpc": "2.0", "id": "no-params", "method": "tools/search"}));
        assert_eq!(
            r["error"]["code"],
            if era == V0728 { -32600 } else { -32602 },
            "{r}"
        );
    }
}

fn search_results_are_ranked_list_entries() {
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        let all = all_entries(&mut s);
        let r = s.ok("tools/search", json!({"query": "task_assign"}));
        assert_eq!(tool_names(&r["tools"])[0], "task_assign");
        let r = s.ok("tools/search", json!({"query": "create"}));
        let items = r["tools"].as_array().expect("tools");
        assert!(!items.is_empty() && items.len() <= 10);
        for t in items {
            assert_eq!(&all[t["name"].as_str().expect("name")], t);
        }
        if era == V0728 {
            assert_eq!(r["ttlMs"], 0, "search results are not cached");
        }
        let prompts = s.ok("prompts/list", json!({}));
        let r = s.ok("prompts/search", json!({"query": "sprint tasks"}));
        assert_eq!(r["prompts"][0]["name"], "plan_sprint");
        assert!(prompts["prompts"]
            .as_array()
            .expect("prompts")
            .contains(&r["prompts"][0]));
        let resources = s.ok("resources/list", json!({}));
        let r = s.ok("resources/search", json!({"query": "kanban"}));
        assert_eq!(
            r["resources"][0]["uri"], "docs:///guides/getting-started",
            "deep indexing: {r}"
        );
        assert!(resources["resources"]
            .as_array()
            .expect("resources")
            .contains(&r["resources"][0]));
        let r = s.ok("resources/search", json!({"query": "tool descriptions"}));
        assert_eq!(r["resources"][0]["uri"], "resource:///tool_descriptions");
        assert!(s.ok("tools/search", json!({"query": "zzzz"}))["tools"]
            .as_array()
            .is_some_and(Vec::is_empty));
    }
}

fn search_pages_are_bound_to_their_query() {
    let path = generated(120);
    for era in ERAS {
        let mut s = Server::start_raw(&["--catalog".into(), path.display().to_string()]);
        s.connect(era);
        let mut seen = BTreeSet::new();
        let mut params = json!({"query": "create update"});
        let mut pages = 0;
        loop {
            let r = s.ok("tools/search", params.clone());
            let names = tool_names(&r["tools"]);
            assert!(names.len() <= 10);
            for n in names {
                assert!(seen.insert(n), "duplicate across pages");
            }
            pages += 1;
            let Some(c) = r["nextCursor"].as_str() else {
                break;
            };
            if pages == 1 {
                let e = s.err("tools/search", json!({"cursor": c}));
                assert_eq!(e["code"], -32602);
                let e = s.err("tools/search", json!({"cursor": c, "query": "other"}));
                assert_eq!(e["message"], "cursor does not belong to this query");
                let e = s.err(
                    "prompts/search",
                    json!({"cursor": c, "query": "create update"}),
                );
                assert_eq!(e["code"], -32602);
            }
            params["cursor"] = json!(c);
            assert!(pages < 100);
        }
        assert!(pages > 1, "expected several pages");
        assert_eq!(
            s.err("tools/search", json!({"query": "x", "cursor": "junk"}))["message"],
            "invalid cursor"
        );
    }
}

// ---------------------------------------------------------------- sep-1300

fn sep1300_groups_tags_and_filters() {
    let cat = catalog();
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        let groups = s.ok("groups/list", json!({}));
        assert_eq!(groups["groups"], cat["groups"]);
        let tags = s.ok("tags/list", json!({}));
        assert_eq!(tags["tags"], cat["tags"]);
        let all = all_entries(&mut s);
        let group_names: BTreeSet<&str> = cat["groups"]
            .as_array()
            .expect("g")
            .iter()
            .filter_map(|g| g["name"].as_str())
            .collect();
        let tag_names: BTreeSet<&str> = cat["tags"]
            .as_array()
            .expect("t")
            .iter()
            .filter_map(|g| g["name"].as_str())
            .collect();
        let has = |t: &Value, key: &str, v: &str| {
            t[key].as_array().is_some_and(|a| a.contains(&json!(v)))
        };
        for t in all.values() {
            assert!(t["groups"]
                .as_array()
                .expect("groups")
                .iter()
                .all(|g| group_names.contains(g.as_str().unwrap_or(""))));
            assert!(t["tags"]
                .as_array()
                .expect("tags")
                .iter()
                .all(|g| tag_names.contains(g.as_str().unwrap_or(""))));
        }
        let expect = |pred: &dyn Fn(&Value) -> bool| -> BTreeSet<String> {
            all.values()
                .filter(|t| pred(t))
                .map(|t| t["name"].as_str().unwrap_or("").to_string())
                .collect()
        };
        let got = |s: &mut Server, f: Value| -> BTreeSet<String> {
            s.list_names(json!({"filter": f})).into_iter().collect()
        };
        for g in &group_names {
            assert_eq!(
                got(&mut s, json!({"groups": [g]})),
                expect(&|t| has(t, "groups", g)),
                "group {g}"
            );
        }
        assert_eq!(
            got(&mut s, json!({"groups": ["pages", "discovery"]})),
            expect(&|t| has(t, "groups", "pages") || has(t, "groups", "discovery"))
        );
        assert_eq!(
            got(&mut s, json!({"tags": ["read", "stable"]})),
            expect(&|t| has(t, "tags", "read") && has(t, "tags", "stable"))
        );
        assert_eq!(
            got(
                &mut s,
                json!({"groups": ["tasks", "discovery"], "tags": ["write"]})
            ),
            expect(
                &|t| (has(t, "groups", "tasks") || has(t, "groups", "discovery"))
                    && has(t, "tags", "write")
            )
        );
        assert_eq!(got(&mut s, json!({"groups": [], "tags": []})).len(), 14);
        assert_eq!(
            got(&mut s, json!({"groups": [], "tags": ["beta"]})),
            expect(&|t| has(t, "tags", "beta"))
        );
        assert!(got(&mut s, json!({"groups": ["no-such-group"]})).is_empty());
        assert!(got(&mut s, json!({"tags": ["no-such-tag"]})).is_empty());
        assert_eq!(got(&mut s, json!({"unknownKey": 1})).len(), 14);
        // query AND filter
        let both: BTreeSet<String> = s
            .list_names(json!({"query": "create", "filter": {"groups": ["tasks"]}}))
            .into_iter()
            .collect();
        assert_eq!(both, BTreeSet::from(["task_create".to_string()]));
        for bad in [
            json!("x"),
            json!({"groups": "a"}),
            json!({"groups": [1]}),
            json!({"tags": [null]}),
            json!([]),
        ] {
            assert_eq!(
                s.err("tools/list", json!({"filter": bad}))["code"],
                -32602,
                "{bad}"
            );
        }
    }
}

// -------------------------------------------------- progressive disclosure

fn pd_lists_are_minimal_and_the_resource_is_documented() {
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        for t in all_entries(&mut s).values() {
            assert_eq!(
                t["inputSchema"],
                json!({"type": "object", "additionalProperties": true})
            );
            assert!(t.get("examples").is_none());
            let keys: BTreeSet<&str> = t
                .as_object()
                .expect("obj")
                .keys()
                .map(String::as_str)
                .collect();
            assert!(keys.is_subset(&BTreeSet::from([
                "name",
                "title",
                "description",
                "inputSchema",
                "groups",
                "tags",
                "annotations",
                "_meta"
            ])));
        }
        let res = s.ok("resources/list", json!({}));
        let td = &res["resources"][0];
        assert_eq!(td["uri"], "resource:///tool_descriptions");
        assert_eq!(td["name"], "Tool Descriptions - Required for tool use");
        assert_eq!(td["mimeType"], "application/json");
        let desc = td["description"].as_str().expect("description");
        for needle in [
            "WORKFLOW",
            "tools/list",
            "?tools=",
            "authorizes",
            "TOOL_DESCRIPTION_REQUIRED",
            "page_create,task_create",
        ] {
            assert!(desc.contains(needle), "{needle}");
        }
        assert_eq!(res["resources"].as_array().map(Vec::len), Some(3));
        let t = s.ok("resources/templates/list", json!({}));
        assert_eq!(
            t["resourceTemplates"][0]["uriTemplate"],
            "resource:///tool_descriptions{?tools}"
        );
    }
}

fn pd_reads_return_exactly_the_named_tools() {
    let cat = catalog();
    let full: HashMap<&str, &Value> = cat["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| (t["name"].as_str().unwrap_or(""), t))
        .collect();
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        let r = s.ok(
            "resources/read",
            json!({"uri": "resource:///tool_descriptions?tools=page_create,task_get"}),
        );
        assert_eq!(r["contents"][0]["mimeType"], "application/json");
        assert_eq!(
            r["contents"][0]["uri"],
            "resource:///tool_descriptions?tools=page_create,task_get"
        );
        let body: Value =
            serde_json::from_str(r["contents"][0]["text"].as_str().expect("text")).expect("json");
        let keys: Vec<&String> = body.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["page_create", "task_get"]);
        let pc = &body["page_create"];
        assert_eq!(pc["name"], "page_create");
        assert_eq!(pc["description"], full["page_create"]["full_description"]);
        assert_eq!(pc["inputSchema"], full["page_create"]["inputSchema"]);
        assert_eq!(pc["examples"], full["page_create"]["examples"]);
        assert!(pc["usage_guidance"].is_object() && pc["error_guidance"].is_object());
        let body = s.fetch("Page_Create,nope,page_get");
        assert_eq!(body.as_object().map(|o| o.len()), Some(3));
        assert_eq!(body["Page_Create"]["error"], "Tool 'Page_Create' not found");
        assert_eq!(body["nope"]["error"], "Tool 'nope' not found");
        let avail = body["nope"]["available_tools"]
            .as_array()
            .expect("available");
        assert_eq!(avail.len(), 14);
        assert!(!avail.contains(&json!("admin_purge_workspace")));
        assert_eq!(body["page_get"]["name"], "page_get");
        for uri in [
            "resource:///tool_descriptions",
            "resource:///tool_descriptions?tools=",
            "resource:///tool_descriptions?foo=bar",
            "resource:///tool_descriptions?tools=,,",
        ] {
            let e = s.err("resources/read", json!({"uri": uri}));
            assert_eq!(e["code"], -32602);
            assert_eq!(
                e["message"],
                "You must specify one or more tool names in the 'tools' parameter."
            );
            assert_eq!(e["data"]["code"], "MISSING_TOOL_SELECTION");
            assert_eq!(
                e["data"]["examples"],
                json!([
                    "resource:///tool_descriptions?tools=tool_name",
                    "resource:///tool_descriptions?tools=tool1,tool2"
                ])
            );
        }
        let body = s.fetch("admin_purge_workspace");
        assert!(
            body["admin_purge_workspace"]["error"].is_string(),
            "hidden tools are not described"
        );
        let r = s.ok(
            "resources/read",
            json!({"uri": "docs:///policies/retention"}),
        );
        assert!(r["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("30 days")));
        // MCP's "Resource not found: -32002" before 2026-07-28, -32602 in it.
        let not_found = if s.stateless() { -32602 } else { -32002 };
        assert_eq!(
            s.err("resources/read", json!({"uri": "docs:///nope"}))["code"],
            not_found,
            "{era}"
        );
    }
}

fn pd_authorization_is_per_session_and_per_tool() {
    for era in [V0618, V1125] {
        let mut a = Server::open(era, &[]);
        let mut b = Server::open(era, &[]);
        let r = a.call("page_get", json!({"page_id": "x"}));
        assert_eq!(r["error"]["code"], -32010);
        assert_eq!(
            r["error"]["message"],
            "Tool 'page_get' requires fetching its description before use."
        );
        assert_eq!(
            r["error"]["data"],
            json!({"code": "TOOL_DESCRIPTION_REQUIRED", "resource_uri": "resource:///tool_descriptions?tools=page_get"})
        );
        // Failed reads authorize nothing.
        a.err(
            "resources/read",
            json!({"uri": "resource:///tool_descriptions"}),
        );
        a.fetch("nope,Page_Get");
        assert_eq!(
            a.call("page_get", json!({"page_id": "x"}))["error"]["code"],
            -32010
        );
        a.fetch("page_create,page_get");
        let created =
            structured(&a.call("page_create", json!({"space_id": "s1", "title": "Roadmap"})));
        let id = created["page"]["id"].as_str().expect("id").to_string();
        a.ok("tools/list", json!({"query": "x"}));
        a.ok("ping", json!({}));
        let got = structured(&a.call("page_get", json!({"page_id": id})));
        assert_eq!(got["page"]["title"], "Roadmap");
        // Only what was fetched.
        assert_eq!(
            a.call("page_update", json!({"page_id": id}))["error"]["code"],
            -32010
        );
        // Another session (process) is not authorized.
        assert_eq!(
            b.call("page_get", json!({"page_id": id}))["error"]["code"],
            -32010
        );
        // Unknown and hidden tools are unknown, whatever the authorization.
        assert_eq!(a.call("nope", json!({}))["error"]["code"], -32602);
        assert_eq!(
            a.call("admin_purge_workspace", json!({"confirm": true}))["error"]["code"],
            -32602
        );
    }
}

fn pd_is_not_enforced_without_a_session() {
    let mut s = Server::open(V0728, &[]);
    let r = s.call("task_create", json!({"title": "Write notes"}));
    let created = structured(&r);
    assert_eq!(created["task"]["title"], "Write notes");
    assert_eq!(r["result"]["resultType"], "complete");
}

fn tool_calls_run_against_the_store_and_validate_arguments() {
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        s.fetch("task_create,task_get,task_update,task_list,task_assign,page_delete");
        let t = structured(&s.call("task_create", json!({"title": "Ship", "priority": "high"})));
        let id = t["task"]["id"].as_str().expect("id").to_string();
        structured(&s.call("task_update", json!({"task_id": id, "status": "done"})));
        structured(&s.call("task_assign", json!({"task_id": id, "assignee": "user_7"})));
        let got = structured(&s.call("task_get", json!({"task_id": id})));
        assert_eq!(
            (
                got["task"]["status"].clone(),
                got["task"]["assignee"].clone()
            ),
            (json!("done"), json!("user_7"))
        );
        let listed = structured(&s.call("task_list", json!({"status": "done"})));
        assert_eq!(listed["count"], 1);
        for (args, needle) in [
            (json!({}), "missing required argument 'title'"),
            (json!({"title": 5}), "'title' must be of type string"),
            (
                json!({"title": "x", "priority": "urgent"}),
                "'priority' must be one of",
            ),
            (
                json!({"title": "x", "bogus": 1}),
                "unknown argument 'bogus'",
            ),
        ] {
            let r = s.call("task_create", args);
            assert_eq!(r["result"]["isError"], true, "{r}");
            assert!(
                r["result"]["content"][0]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains(needle)),
                "{r}"
            );
        }
        let r = s.call("page_delete", json!({"page_id": "page_999"}));
        assert_eq!(r["result"]["isError"], true);
    }
}

fn prompts_render_with_arguments() {
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        let list = s.ok("prompts/list", json!({}));
        assert_eq!(
            tool_names(&list["prompts"]),
            ["summarize_page", "plan_sprint"]
        );
        let r = s.ok(
            "prompts/get",
            json!({"name": "plan_sprint", "arguments": {"goal": "ship v2"}}),
        );
        assert_eq!(r["messages"][0]["role"], "user");
        assert!(r["messages"][0]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("'ship v2'")));
        assert_eq!(
            s.err("prompts/get", json!({"name": "plan_sprint"}))["code"],
            -32602
        );
        assert_eq!(
            s.err(
                "prompts/get",
                json!({"name": "plan_sprint", "arguments": {"goal": 3}})
            )["code"],
            -32602
        );
        assert_eq!(
            s.err("prompts/get", json!({"name": "nope"}))["code"],
            -32602
        );
    }
}

// --------------------------------------------------------- category search

fn search(s: &mut Server, args: Value) -> Value {
    s.call("tool_search", args)
}

fn category_search_scores_and_filters() {
    for era in ERAS {
        let mut s = Server::open(era, &[]);
        s.fetch("tool_search,list_categories,get_tools_by_category");
        let r = structured(&search(&mut s, json!({"query": "create page", "limit": 5})));
        assert_eq!(r["tools"][0]["tool"]["name"], "page_create");
        assert_eq!(r["tools"][0]["score"], 85);
        assert_eq!(
            r["tools"][0]["matchedOn"],
            json!(["name", "description", "tags (create)"])
        );
        assert_eq!(r["tools"][0]["tool"]["category"], "page");
        assert!(r["tools"].as_array().is_some_and(|t| t.len() <= 5));
        assert!(r["totalMatches"].as_u64() >= r["tools"].as_array().map(|t| t.len() as u64));
        let scores: Vec<u64> = r["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["score"].as_u64())
            .collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
        let total: u64 = r["categories"]
            .as_array()
            .expect("categories")
            .iter()
            .filter_map(|c| c["matchCount"].as_u64())
            .sum();
        assert_eq!(Some(total), r["totalMatches"].as_u64());
        // No query: every tool, score 0, default limit 20 (14 here).
        let r = structured(&search(&mut s, json!({})));
        assert_eq!(r["totalMatches"], 14);
        assert_eq!(r["tools"].as_array().map(Vec::len), Some(14));
        let r = structured(&search(&mut s, json!({"limit": 3})));
        assert_eq!(r["tools"].as_array().map(Vec::len), Some(3));
        let r = structured(&search(&mut s, json!({"category": "task"})));
        assert!(r["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .all(|t| t["tool"]["category"] == "task"));
        assert_eq!(r["totalMatches"], 5);
        let r = structured(&search(&mut s, json!({"tags": ["delete", "search"]})));
        let names: BTreeSet<&str> = r["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["tool"]["name"].as_str())
            .collect();
        assert_eq!(
            names,
            BTreeSet::from(["page_delete", "page_search", "tool_search"])
        );
        let r = structured(&search(&mut s, json!({"query": "purge"})));
        assert_eq!(r["totalMatches"], 0, "hidden tools never match");
        for bad in [
            json!({"limit": -1}),
            json!({"limit": 0}),
            json!({"limit": 101}),
            json!({"limit": "5"}),
            json!({"tags": "x"}),
            json!({"tags": [1]}),
            json!({"category": "nope"}),
            json!({"query": 5}),
        ] {
            let r = search(&mut s, bad.clone());
            assert_eq!(r["result"]["isError"], true, "{bad}: {r}");
            assert!(r["result"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| !t.is_empty()));
        }
        let cats = structured(&s.call("list_categories", json!({})));
        let mut sum = 0;
        for c in cats["categories"].as_array().expect("categories") {
            let n = c["toolCount"].as_u64().expect("count");
            sum += n;
            let by = structured(&s.call("get_tools_by_category", json!({"category": c["id"]})));
            assert_eq!(
                by["tools"].as_array().map(|t| t.len() as u64),
                Some(n),
                "{c}"
            );
            assert!(c["name"].is_string() && c["description"].is_string());
        }
        assert_eq!(sum, 14);
        assert_eq!(
            s.call("get_tools_by_category", json!({"category": "nope"}))["result"]["isError"],
            true
        );
    }
}

fn category_tools_need_their_descriptions_in_stateful_eras() {
    let mut s = Server::open(V1125, &[]);
    assert_eq!(
        search(&mut s, json!({"query": "x"}))["error"]["code"],
        -32010
    );
}

// ------------------------------------------------------------ control hook

fn new_tool() -> Value {
    json!({"name": "space_rename", "title": "Rename Space", "description": "Rename a space",
        "inputSchema": {"type": "object", "properties": {"space_id": {"type": "string"}}},
        "category": "page", "groups": ["pages", "spaces"], "tags": ["write", "renames"]})
}

fn control_mutations_notify_stateful_sessions() {
    for era in [V0618, V1125] {
        let mut s = Server::open(era, &["--control"]);
        let first = s.ok("tools/list", json!({"query": "rename"}));
        assert!(tool_names(&first["tools"]).is_empty());
        let page = s.ok("tools/list", json!({"filter": {"groups": ["pages"]}}));
        assert_eq!(
            s.ok(
                "conform/mutate",
                json!({"action": "add_tool", "tool": new_tool()})
            ),
            json!({"ok": true})
        );
        let methods: BTreeSet<String> = s
            .notes
            .drain(..)
            .filter_map(|n| n["method"].as_str().map(str::to_string))
            .collect();
        assert!(methods.is_empty(), "notifications come after the response");
        let mut notes = Vec::new();
        while let Some(n) = s.recv_within(std::time::Duration::from_millis(300)) {
            notes.push(n["method"].as_str().unwrap_or("").to_string());
        }
        assert_eq!(
            notes,
            [
                "notifications/tools/list_changed",
                "notifications/groups/list_changed",
                "notifications/tags/list_changed"
            ]
        );
        assert_eq!(
            tool_names(&s.ok("tools/list", json!({"query": "rename"}))["tools"]),
            ["space_rename"]
        );
        assert!(s.ok("groups/list", json!({}))["groups"]
            .as_array()
            .is_some_and(|g| g.iter().any(|g| g["name"] == "spaces")));
        let _ = page;
        s.ok(
            "conform/mutate",
            json!({"action": "add_tag", "tag": {"name": "fresh", "description": "new"}}),
        );
        s.ok(
            "conform/mutate",
            json!({"action": "remove_group", "name": "discovery"}),
        );
        s.ok(
            "conform/mutate",
            json!({"action": "remove_tool", "name": "space_rename"}),
        );
        let mut notes: Vec<String> = s
            .notes
            .drain(..)
            .map(|n| n["method"].as_str().unwrap_or("").to_string())
            .collect();
        while let Some(n) = s.recv_within(std::time::Duration::from_millis(300)) {
            notes.push(n["method"].as_str().unwrap_or("").to_string());
        }
        assert_eq!(
            notes,
            [
                "notifications/tags/list_changed",
                "notifications/tools/list_changed",
                "notifications/groups/list_changed",
                "notifications/tools/list_changed"
            ]
        );
        assert!(s
            .list_names(json!({"filter": {"groups": ["discovery"]}}))
            .is_empty());
        for bad in [
            json!({"action": "explode"}),
            json!({"action": "remove_tool", "name": "nope"}),
            json!({"action": "add_tool", "tool": {"name": "x"}}),
            json!({"action": "add_tool", "tool": {"name": "page_get", "description": "d", "inputSchema": {"type": "object"}}}),
        ] {
            assert_eq!(
                s.err("conform/mutate", bad.clone())["code"],
                -32602,
                "{bad}"
            );
        }
        // subscriptions/listen is a 2026-07-28 method.
        assert_eq!(
            s.err(
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": true}})
            )["code"],
            -32601
        );
    }
}

fn control_mutation_invalidates_cursors() {
    let path = generated(120);
    let mut s = Server::start_raw(&[
        "--catalog".into(),
        path.display().to_string(),
        "--control".into(),
    ]);
    s.connect(V1125);
    let r = s.ok("tools/list", json!({}));
    let cursor = r["nextCursor"].as_str().expect("cursor").to_string();
    s.ok("conform/mutate", json!({"action": "add_group", "group": {"name": "brand-new", "title": "New", "description": "d"}}));
    let e = s.err("tools/list", json!({"cursor": cursor}));
    assert_eq!(e["code"], -32602);
    assert!(
        e["message"].as_str().is_some_and(|m| m.contains("changed")),
        "{e}"
    );
}

fn stateless_listen_streams_get_tagged_notifications() {
    let mut s = Server::open(V0728, &["--control"]);
    let params = s.params(json!({"notifications": {"toolsListChanged": true, "tagsListChanged": true, "promptsListChanged": false}}));
    s.send(&json!({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen", "params": params}));
    let ack = s.recv();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "tagsListChanged": true})
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    assert_eq!(
        s.ok(
            "conform/mutate",
            json!({"action": "add_tool", "tool": new_tool()})
        )["ok"],
        true
    );
    let mut notes = Vec::new();
    while let Some(n) = s.recv_within(std::time::Duration::from_millis(300)) {
        notes.push(n);
    }
    let methods: Vec<&str> = notes.iter().filter_map(|n| n["method"].as_str()).collect();
    assert_eq!(
        methods,
        [
            "notifications/tools/list_changed",
            "notifications/tags/list_changed"
        ],
        "groups were not subscribed"
    );
    assert!(notes
        .iter()
        .all(|n| n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"));
    assert_eq!(
        tool_names(&s.ok("tools/list", json!({"query": "rename"}))["tools"]),
        ["space_rename"]
    );
    // Cancelling the listen request closes the stream.
    s.notify(
        "notifications/cancelled",
        Some(json!({"requestId": "sub-1"})),
    );
    s.ok(
        "conform/mutate",
        json!({"action": "remove_tool", "name": "space_rename"}),
    );
    assert!(s
        .recv_within(std::time::Duration::from_millis(300))
        .is_none());
}

/// fixtures/catalogs/reference.json is part of the repository (the
/// reference server embeds it), so it is required here, never skipped.
fn the_reference_catalog_loads() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalogs/reference.json");
    let mut s = Server::start_raw(&["--catalog".into(), path.display().to_string()]);
    s.connect(V1125);
    let names = s.list_names(json!({}));
    assert_eq!(names.len(), 106);
    for n in ["tool_search", "list_categories", "get_tools_by_category"] {
        assert!(names.contains(&n.to_string()));
    }
    s.fetch("list_categories");
    let cats = structured(&s.call("list_categories", json!({})));
    assert_eq!(cats["categories"].as_array().map(Vec::len), Some(18));
}

// ---------------------------------------------------------------- grouping

const GROUPS_KEY: &str = "io.modelcontextprotocol/groups";

/// `_meta["io.modelcontextprotocol/groups"]` of an entry (empty when absent).
fn membership(entry: &Value) -> Vec<String> {
    entry["_meta"][GROUPS_KEY]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Every item of a paginated list, following cursors.
fn walk(s: &mut Server, method: &str, key: &str) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut params = json!({});
    for pages in 1..100 {
        let r = s.ok(method, params);
        items.extend(r[key].as_array().cloned().unwrap_or_default());
        match r["nextCursor"].as_str() {
            Some(c) => params = json!({"cursor": c}),
            None => return (items, pages),
        }
    }
    panic!("{method}: pagination did not terminate");
}

fn grouping_extension_beside_sep1300_in_every_era() {
    for era in ERAS {
        // The embedded reference catalog: nested groups, grouped prompts and resources.
        let mut s = Server::start_raw(&["--control".into()]);
        s.connect(era);
        let caps = if s.stateless() {
            s.ok("server/discover", json!({}))["capabilities"].clone()
        } else {
            let r = s.request("initialize", json!({"protocolVersion": era, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}));
            r["result"]["capabilities"].clone()
        };
        assert_eq!(
            caps["extensions"]["io.modelcontextprotocol/grouping"],
            json!({"listChanged": true}),
            "{era}"
        );
        assert_eq!(caps["filtering"]["groups"]["listChanged"], true, "{era}");

        let (groups, pages) = walk(&mut s, "groups/list", "groups");
        assert_eq!((groups.len(), pages), (17, 2), "{era}: 10 groups a page");
        let sprint = groups
            .iter()
            .find(|g| g["name"] == "sprint_planning")
            .expect("sprint_planning");
        assert_eq!(membership(sprint), ["tasks"]);
        assert_eq!(sprint["title"], "Sprint Planning", "SEP-1300 fields stay");
        assert!(groups
            .iter()
            .find(|g| g["name"] == "spaces")
            .expect("spaces")["_meta"]
            .is_null());
        let cursor = s.ok("groups/list", json!({}))["nextCursor"].clone();
        assert_eq!(
            s.err(
                "groups/list",
                json!({"cursor": format!("{}x", cursor.as_str().unwrap_or(""))})
            )["code"],
            -32602
        );

        let (tools, _) = walk(&mut s, "tools/list", "tools");
        for t in &tools {
            assert_eq!(json!(membership(t)), t["groups"], "{era}: {}", t["name"]);
        }
        let (prompts, _) = walk(&mut s, "prompts/list", "prompts");
        let prompt = |name: &str| {
            prompts
                .iter()
                .find(|p| p["name"] == name)
                .expect(name)
                .clone()
        };
        assert_eq!(membership(&prompt("plan_sprint")), ["sprint_planning"]);
        assert!(prompt("translate_page").get("_meta").is_none(), "ungrouped");
        let (resources, _) = walk(&mut s, "resources/list", "resources");
        assert_eq!(
            membership(&resources[0]),
            ["discovery"],
            "tool_descriptions"
        );
        let (templates, _) = walk(&mut s, "resources/templates/list", "resourceTemplates");
        assert_eq!(membership(&templates[0]), ["discovery"]);
        // tools/search items stay identical to their tools/list entries.
        let found = s.ok("tools/search", json!({"query": "page_create"}));
        let listed = tools
            .iter()
            .find(|t| t["name"] == "page_create")
            .expect("page_create");
        assert_eq!(&found["tools"][0], listed);

        if !s.stateless() {
            // Removing a group takes it out of every kind's membership and
            // announces each list whose membership changed.
            s.notes.clear();
            s.ok(
                "conform/mutate",
                json!({"action": "remove_group", "name": "sprint_planning"}),
            );
            let mut notes: Vec<String> = s
                .notes
                .drain(..)
                .map(|n| n["method"].as_str().unwrap_or("").to_string())
                .collect();
            while let Some(n) = s.recv_within(std::time::Duration::from_millis(300)) {
                notes.push(n["method"].as_str().unwrap_or("").to_string());
            }
            assert_eq!(
                notes,
                [
                    "notifications/tools/list_changed",
                    "notifications/prompts/list_changed",
                    "notifications/resources/list_changed",
                    "notifications/groups/list_changed"
                ],
                "{era}"
            );
            let (prompts, _) = walk(&mut s, "prompts/list", "prompts");
            assert!(prompts
                .iter()
                .all(|p| !membership(p).contains(&"sprint_planning".into())));
            // An added group may nest under a declared group, never an undeclared one.
            for group in [
                json!({"name": "x", "description": "d", "groups": ["nope"]}),
                json!({"name": "projects_too", "description": "d", "groups": ["projects"]}),
            ] {
                let r = s.request(
                    "conform/mutate",
                    json!({"action": "add_group", "group": group}),
                );
                assert_eq!(r.get("error").is_some(), group["name"] == "x", "{r}");
            }
        }
    }
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        sep1821_query_filters_and_ranks,
        sep1821_query_is_plain_text,
        pagination_with_and_without_query_and_filter,
        search_requires_a_string_query,
        search_results_are_ranked_list_entries,
        search_pages_are_bound_to_their_query,
        sep1300_groups_tags_and_filters,
        pd_lists_are_minimal_and_the_resource_is_documented,
        pd_reads_return_exactly_the_named_tools,
        pd_authorization_is_per_session_and_per_tool,
        pd_is_not_enforced_without_a_session,
        tool_calls_run_against_the_store_and_validate_arguments,
        prompts_render_with_arguments,
        category_search_scores_and_filters,
        category_tools_need_their_descriptions_in_stateful_eras,
        control_mutations_notify_stateful_sessions,
        control_mutation_invalidates_cursors,
        stateless_listen_streams_get_tagged_notifications,
        the_reference_catalog_loads,
        grouping_extension_beside_sep1300_in_every_era
    ]
}
