//! Every `--fault` changes observable behaviour: each test runs the same
//! probe against a clean server and a faulty one.

use crate::reference_common::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Duration;

fn open(fault: Option<&str>, extra: &[&str]) -> Server {
    let mut args: Vec<&str> = extra.to_vec();
    if let Some(f) = fault {
        args.extend(["--fault", f]);
    }
    Server::open(V1125, &args)
}

fn open_gen(fault: Option<&str>) -> Server {
    let mut args = vec![
        "--catalog".to_string(),
        generated(120).display().to_string(),
    ];
    if let Some(f) = fault {
        args.extend(["--fault".to_string(), f.to_string()]);
    }
    let mut s = Server::start_raw(&args);
    s.connect(V1125);
    s
}

/// The same probe, clean and faulty.
fn both<T>(fault: &str, probe: impl Fn(&mut Server) -> T) -> (T, T) {
    (
        probe(&mut open(None, &[])),
        probe(&mut open(Some(fault), &[])),
    )
}

fn names(s: &mut Server, params: Value) -> Vec<String> {
    s.list_names(params)
}

fn every_fault_is_listed_by_help() {
    let out = std::process::Command::new(BIN)
        .args(["serve-reference", "--fault", "help"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    let listed: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let all: Vec<&str> = mcp_conform::reference::Fault::all()
        .iter()
        .map(|f| f.name())
        .collect();
    assert_eq!(listed, all, "{text}");
    assert!(all.len() >= 79, "{} faults", all.len());
}

fn ignore_query() {
    let (clean, bad) = both("ignore-query", |s| names(s, json!({"query": "task"})).len());
    assert!(clean < 14);
    assert_eq!(bad, 14);
}

fn query_as_regex() {
    let (clean, bad) = both("query-as-regex", |s| names(s, json!({"query": ".*"})).len());
    assert_eq!((clean, bad), (0, 14));
    let (clean, bad) = both("query-as-regex", |s| {
        s.request("tools/list", json!({"query": "((("}))
    });
    assert!(clean.get("result").is_some());
    assert_eq!(bad["error"]["code"], -32603);
}

fn groups_all() {
    let (clean, bad) = both("groups-all", |s| {
        names(s, json!({"filter": {"groups": ["pages", "discovery"]}}))
    });
    assert_eq!(clean.len(), 9);
    assert_eq!(bad, ["page_search"]);
}

fn tags_any() {
    let (clean, bad) = both("tags-any", |s| {
        names(s, json!({"filter": {"tags": ["delete", "search"]}}))
    });
    assert!(clean.is_empty());
    assert!(bad.len() >= 3);
}

fn tags_ignore_groups() {
    let (clean, bad) = both("tags-ignore-groups", |s| {
        names(
            s,
            json!({"filter": {"groups": ["tasks"], "tags": ["write"]}}),
        )
    });
    assert!(!clean.contains(&"page_update".to_string()));
    assert!(bad.contains(&"page_update".to_string()));
}

fn empty_groups_match_none() {
    let (clean, bad) = both("empty-groups-match-none", |s| {
        names(s, json!({"filter": {"groups": []}})).len()
    });
    assert_eq!((clean, bad), (14, 0));
}

fn cursor_drops_query() {
    // "a" appears in most generated descriptions: more than one page, not all.
    let probe = |s: &mut Server| -> BTreeSet<String> {
        s.list_names(json!({"query": "a"})).into_iter().collect()
    };
    let clean = probe(&mut open_gen(None));
    let bad = probe(&mut open_gen(Some("cursor-drops-query")));
    assert!(clean.len() > 50 && clean.len() < 120, "{}", clean.len());
    assert_ne!(clean, bad, "page 2+ should come from the unfiltered list");
    assert!(!bad.is_subset(&clean));
}

fn cursor_duplicates() {
    let probe = |s: &mut Server| {
        let all = s.list_names(json!({}));
        (all.len(), all.iter().collect::<BTreeSet<_>>().len())
    };
    let (n, unique) = probe(&mut open_gen(None));
    assert_eq!((n, unique), (120, 120));
    let (n, unique) = probe(&mut open_gen(Some("cursor-duplicates")));
    assert!(n > unique, "{n} {unique}");
}

fn search_page_overflow() {
    let probe = |s: &mut Server| {
        tool_names(
            &s.ok(
                "tools/search",
                json!({"query": "create update delete list"}),
            )["tools"],
        )
        .len()
    };
    assert_eq!(probe(&mut open_gen(None)), 10);
    assert!(probe(&mut open_gen(Some("search-page-overflow"))) > 10);
}

fn search_unranked() {
    let (clean, bad) = both("search-unranked", |s| {
        tool_names(&s.ok("tools/search", json!({"query": "task_assign"}))["tools"])
    });
    assert_eq!(clean[0], "task_assign");
    assert_ne!(bad[0], "task_assign");
}

fn search_missing_query_ok() {
    let (clean, bad) = both("search-missing-query-ok", |s| {
        s.request("tools/search", json!({}))
    });
    assert_eq!(clean["error"]["code"], -32602);
    assert_eq!(bad["result"]["tools"].as_array().map(Vec::len), Some(10));
}

fn search_not_identical() {
    let (clean, bad) = both("search-not-identical", |s| {
        s.ok("tools/search", json!({"query": "page"}))["tools"][0].clone()
    });
    assert!(clean.get("groups").is_some());
    assert!(bad.get("groups").is_none());
}

fn unknown_method_internal_error() {
    let (clean, bad) = both("unknown-method-internal-error", |s| {
        s.err("nope/nope", json!({}))["code"].clone()
    });
    assert_eq!((clean, bad), (json!(-32601), json!(-32603)));
}

fn bad_params_internal_error() {
    let (clean, bad) = both("bad-params-internal-error", |s| {
        s.err("tools/list", json!({"query": 123}))["code"].clone()
    });
    assert_eq!((clean, bad), (json!(-32602), json!(-32603)));
}

fn parse_error_exit() {
    let probe = |s: &mut Server| {
        s.send_raw(b"{broken\n");
        assert_eq!(s.recv()["error"]["code"], -32700);
        std::thread::sleep(Duration::from_millis(200));
        s.alive()
    };
    assert!(probe(&mut open(None, &[])));
    assert!(!probe(&mut open(Some("parse-error-exit"), &[])));
}

fn wrong_id() {
    let (clean, bad) = both("wrong-id", |s| {
        s.send(&json!({"jsonrpc": "2.0", "id": "7", "method": "ping"}));
        s.recv()["id"].clone()
    });
    assert_eq!((clean, bad), (json!("7"), json!(7)));
}

fn tags_list_duplicates() {
    let (clean, bad) = both("tags-list-duplicates", |s| {
        let tags = tool_names(&s.ok("tags/list", json!({}))["tags"]);
        (tags.len(), tags.iter().collect::<BTreeSet<_>>().len())
    });
    assert_eq!(clean.0, clean.1);
    assert_eq!(bad.0, bad.1 + 1);
}

fn pd_no_auth() {
    let (clean, bad) = both("pd-no-auth", |s| {
        s.call("page_list", json!({"space_id": "s"}))
    });
    assert_eq!(clean["error"]["code"], -32010);
    assert_eq!(bad["result"]["isError"], false);
}

fn pd_shared_auth() {
    // A catalog name of its own, so no other run shares the file.
    let mut cat: Value =
        serde_json::from_slice(&std::fs::read(mini()).expect("read")).expect("json");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let name = format!("mini-shared-{}-{nanos}", std::process::id());
    cat["name"] = json!(name);
    let path = std::env::temp_dir().join(format!("mcp-conform-shared-{}.json", std::process::id()));
    std::fs::write(&path, cat.to_string()).expect("write");
    let start = |fault: bool| {
        let mut args = vec!["--catalog".to_string(), path.display().to_string()];
        if fault {
            args.extend(["--fault".into(), "pd-shared-auth".into()]);
        }
        let mut s = Server::start_raw(&args);
        s.connect(V1125);
        s
    };
    for fault in [false, true] {
        let mut a = start(fault);
        let mut b = start(fault);
        assert_eq!(
            b.call("page_list", json!({"space_id": "s"}))["error"]["code"],
            -32010
        );
        a.fetch("page_list");
        let r = b.call("page_list", json!({"space_id": "s"}));
        if fault {
            assert_eq!(
                r["result"]["isError"], false,
                "authorization leaked across processes: {r}"
            );
        } else {
            assert_eq!(r["error"]["code"], -32010);
        }
    }
    let _ = std::fs::remove_file(path);
    // The file the faulty servers shared (named after the catalog).
    let safe: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(64)
        .collect();
    let _ =
        std::fs::remove_file(std::env::temp_dir().join(format!("mcp-conform-pd-auth-{safe}.txt")));
}

fn pd_authorize_any() {
    let (clean, bad) = both("pd-authorize-any", |s| {
        s.fetch("page_get");
        s.call("task_list", json!({}))
    });
    assert_eq!(clean["error"]["code"], -32010);
    assert_eq!(bad["result"]["isError"], false);
}

fn pd_missing_selection_ok() {
    let (clean, bad) = both("pd-missing-selection-ok", |s| {
        s.request(
            "resources/read",
            json!({"uri": "resource:///tool_descriptions"}),
        )
    });
    assert_eq!(clean["error"]["data"]["code"], "MISSING_TOOL_SELECTION");
    let text: Value =
        serde_json::from_str(bad["result"]["contents"][0]["text"].as_str().expect("text"))
            .expect("json");
    assert_eq!(text.as_object().map(|o| o.len()), Some(14));
}

fn pd_extra_tools() {
    let (clean, bad) = both("pd-extra-tools", |s| {
        s.fetch("page_get").as_object().map(|o| o.len())
    });
    assert_eq!((clean, bad), (Some(1), Some(2)));
}

fn pd_case_insensitive() {
    let (clean, bad) = both("pd-case-insensitive", |s| {
        s.fetch("PAGE_GET")["PAGE_GET"].clone()
    });
    assert!(clean["error"].is_string());
    assert_eq!(bad["name"], "page_get");
}

fn pd_full_schemas_in_list() {
    let (clean, bad) = both("pd-full-schemas-in-list", |s| {
        s.ok("tools/list", json!({}))["tools"][0].clone()
    });
    assert!(clean.get("examples").is_none());
    assert!(bad["examples"].is_array());
    assert!(bad["inputSchema"]["properties"].is_object());
}

fn category_unsorted() {
    let (clean, bad) = both("category-unsorted", |s| {
        s.fetch("tool_search");
        let r = structured(&s.call("tool_search", json!({"query": "create page"})));
        r["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["score"].as_u64())
            .collect::<Vec<_>>()
    });
    assert!(clean.windows(2).all(|w| w[0] >= w[1]));
    assert!(!bad.windows(2).all(|w| w[0] >= w[1]), "{bad:?}");
}

fn category_limit_ignored() {
    let (clean, bad) = both("category-limit-ignored", |s| {
        s.fetch("tool_search");
        structured(&s.call("tool_search", json!({"limit": 2})))["tools"]
            .as_array()
            .map(Vec::len)
    });
    assert_eq!((clean, bad), (Some(2), Some(14)));
}

fn category_counts_hidden() {
    let (clean, bad) = both("category-counts-hidden", |s| {
        s.fetch("list_categories");
        let r = structured(&s.call("list_categories", json!({})));
        r["categories"]
            .as_array()
            .expect("categories")
            .iter()
            .filter_map(|c| c["toolCount"].as_u64())
            .sum::<u64>()
    });
    assert_eq!((clean, bad), (14, 15));
}

fn list_changed_missing() {
    let probe = |fault: Option<&str>| {
        let mut s = open(fault, &["--control"]);
        s.ok(
            "conform/mutate",
            json!({"action": "remove_tool", "name": "page_get"}),
        );
        let mut n = s.notes.len();
        while s.recv_within(Duration::from_millis(300)).is_some() {
            n += 1;
        }
        n
    };
    assert_eq!(probe(None), 1);
    assert_eq!(probe(Some("list-changed-missing")), 0);
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        every_fault_is_listed_by_help,
        ignore_query,
        query_as_regex,
        groups_all,
        tags_any,
        tags_ignore_groups,
        empty_groups_match_none,
        cursor_drops_query,
        cursor_duplicates,
        search_page_overflow,
        search_unranked,
        search_missing_query_ok,
        search_not_identical,
        unknown_method_internal_error,
        bad_params_internal_error,
        parse_error_exit,
        wrong_id,
        tags_list_duplicates,
        pd_no_auth,
        pd_shared_auth,
        pd_authorize_any,
        pd_missing_selection_ok,
        pd_extra_tools,
        pd_case_insensitive,
        pd_full_schemas_in_list,
        category_unsorted,
        category_limit_ignored,
        category_counts_hidden,
        list_changed_missing
    ]
}
