//! Walks of a list shared between the read-only scenarios of one era on
//! warm servers, and the scenarios of their own server that have only
//! listed so far. Dozens of scenarios begin with the same unfiltered
//! `tools/list`; on a server of 10,000 tools each walk is 200 pages. A
//! shared scenario only reads, so the server's lists stay as they were, and
//! the answer an earlier scenario walked is the answer this one would get;
//! a server that was only asked for lists is as it started, as warm ones are.
//!
//! What keeps a fault visible: only a complete walk with a result is kept
//! (a walk that goes in circles, stops early or gets an error is walked
//! again by everyone); a scenario reuses a walk only the first time it asks
//! for it, so one that walks a list twice to compare the answers gets a
//! second, fresh walk from the server; steps with their own page cap, a
//! pattern to match or another session than the main one never reuse; and a
//! list-changed notification empties the store.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use crate::expr::Bound;
use crate::json::ReadTree;

/// Complete walks by what was asked, each kept once as it came (without
/// its raw `pages`, with the request under `request`); each scenario that
/// asks again is handed the same answer, not a copy. The CEL values a
/// scenario makes of it are its own, and end with it: kept for the run, the
/// values made of a 10,000-tool list grew with every scenario that read it.
#[derive(Debug, Default)]
pub struct WalkCache {
    walks: Mutex<Walks>,
}

#[derive(Debug, Default)]
struct Walks {
    by_request: HashMap<String, Bound>,
    /// Items held by the kept walks whose request has params.
    narrowed_items: usize,
}

/// Entries kept at most: a run asks for a few dozen different walks.
const MAX_ENTRIES: usize = 64;

/// Items that walks with params (a filter, a query) may hold together. The
/// plain lists are asked for again and again (on a 10,000-tool catalog
/// they served 172 of 179 reuses), each filtered or queried list once or
/// twice; keeping every one of those held eight times the catalog.
const NARROWED_ITEMS: usize = 2_000;

impl WalkCache {
    /// What a walk is known by: the request and whether it carries the
    /// stateless `_meta`.
    pub fn request_key(method: &str, params: Option<&Value>, meta: bool) -> String {
        let params = params.map_or_else(String::new, Value::to_string);
        format!("{method}\n{params}\n{meta}")
    }

    /// What a stored walk keeps of the joined answer: all but `pages`.
    pub fn stored_read() -> ReadTree {
        ReadTree::whole_fields(&["jsonrpc", "id", "result", "error", "page_count"])
    }

    /// The walk an earlier scenario made of this request.
    pub fn get(&self, request: &str) -> Option<Bound> {
        let walks = self.walks.lock().unwrap_or_else(|e| e.into_inner());
        walks
            .by_request
            .get(request)
            .map(Bound::with_own_conversions)
    }

    /// Keeps a complete walk for later scenarios, unless the store is full
    /// (or holds this request already). Whether the store holds it now.
    pub fn put(&self, request: &str, answer: &Bound) -> bool {
        let mut walks = self.walks.lock().unwrap_or_else(|e| e.into_inner());
        if walks.by_request.contains_key(request) {
            return true;
        }
        if walks.by_request.len() >= MAX_ENTRIES {
            return false;
        }
        if has_params(request) {
            let items = items_in(answer.json());
            if walks.narrowed_items + items > NARROWED_ITEMS {
                return false;
            }
            walks.narrowed_items += items;
        }
        walks
            .by_request
            .insert(request.to_string(), answer.with_own_conversions());
        true
    }

    /// Forgets every walk: the server said a list changed.
    pub fn clear(&self) {
        *self.walks.lock().unwrap_or_else(|e| e.into_inner()) = Walks::default();
    }
}

/// Whether a key of [`WalkCache::request_key`] has params.
fn has_params(request: &str) -> bool {
    request
        .split('\n')
        .nth(1)
        .is_some_and(|params| !params.is_empty())
}

/// The items of a joined walk: its `result`'s lists.
fn items_in(answer: &Value) -> usize {
    answer
        .get("result")
        .and_then(Value::as_object)
        .map_or(0, |result| {
            result
                .values()
                .filter_map(Value::as_array)
                .map(Vec::len)
                .sum()
        })
}

/// Whether a server notification says one of its lists changed.
pub fn says_list_changed(notification: &Value) -> bool {
    notification
        .get("method")
        .and_then(Value::as_str)
        .is_some_and(|m| m.ends_with("/list_changed"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_walk_is_found_by_its_request_and_forgotten_on_clear() {
        let cache = WalkCache::default();
        let request = WalkCache::request_key("tools/list", None, false);
        assert!(cache.put(&request, &Bound::from(json!({"result": {"tools": []}}))));
        assert!(cache.get(&request).is_some());
        let other = WalkCache::request_key("tools/list", Some(&json!({"filter": {}})), false);
        assert!(cache.get(&other).is_none(), "other params");
        let stateless = WalkCache::request_key("tools/list", None, true);
        assert!(cache.get(&stateless).is_none(), "other _meta");
        cache.clear();
        assert!(cache.get(&request).is_none());
    }

    /// The CEL values a scenario makes of a stored walk end with it: kept
    /// in the store, those of a 10,000-tool list grew with every scenario.
    #[test]
    fn each_scenario_gets_the_stored_walk_with_conversions_of_its_own() {
        let cache = WalkCache::default();
        let request = WalkCache::request_key("tools/list", None, false);
        let walked = walk_of(3);
        assert!(cache.put(&request, &walked));
        let (Some(first), Some(second)) = (cache.get(&request), cache.get(&request)) else {
            panic!("the walk is stored");
        };
        assert!(
            std::ptr::eq(first.json(), walked.json()),
            "the JSON is shared"
        );
        assert!(
            std::ptr::eq(second.json(), walked.json()),
            "the JSON is shared"
        );
        assert!(!first.shares_conversions_with(&walked));
        assert!(!first.shares_conversions_with(&second));
        assert!(first.shares_conversions_with(&first.clone()));
    }

    fn walk_of(n: usize) -> Bound {
        let tools: Vec<Value> = (0..n).map(|i| json!({ "name": format!("t{i}") })).collect();
        Bound::from(json!({ "result": { "tools": tools } }))
    }

    #[test]
    fn plain_lists_are_kept_and_narrowed_ones_only_within_their_budget() {
        let cache = WalkCache::default();
        let plain = WalkCache::request_key("tools/list", None, false);
        assert!(cache.put(&plain, &walk_of(NARROWED_ITEMS * 3)));
        assert!(
            cache.get(&plain).is_some(),
            "a plain list is kept whatever its size"
        );
        let group = |g: &str| {
            WalkCache::request_key(
                "tools/list",
                Some(&json!({"filter": {"groups": [g]}})),
                false,
            )
        };
        assert!(cache.put(&group("a"), &walk_of(NARROWED_ITEMS - 10)));
        assert!(
            !cache.put(&group("b"), &walk_of(20)),
            "says it did not keep it"
        );
        assert!(cache.put(&group("c"), &walk_of(10)));
        assert!(cache.get(&group("a")).is_some());
        assert!(cache.get(&group("b")).is_none(), "over the budget");
        assert!(cache.get(&group("c")).is_some(), "within what is left");
        cache.clear();
        assert!(cache.put(&group("b"), &walk_of(20)));
        assert!(cache.get(&group("b")).is_some(), "clear frees the budget");
    }

    #[test]
    fn list_changed_notifications_are_recognised() {
        assert!(says_list_changed(
            &json!({"method": "notifications/tools/list_changed"})
        ));
        assert!(!says_list_changed(
            &json!({"method": "notifications/progress"})
        ));
    }
}
