//! Per-session state: the handshake, progressive-disclosure authorizations,
//! open `subscriptions/listen` streams, and the rate-limit bucket.
//!
//! Over stdio one process is one session; an HTTP transport keeps one
//! `SessionState` per `Mcp-Session-Id`.

use super::rate::{RateSpec, TokenBucket};
use super::served_era::META_SUBSCRIPTION;
use mcp_conform_protocol::jsonrpc::notification;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Which list changed in one catalog mutation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Change {
    /// The session whose request caused the change (it gets its
    /// notifications inline, after the response).
    pub origin: u64,
    pub tools: bool,
    /// A prompt's or resource's group membership changed (the grouping
    /// extension announces membership changes with the primitive's own
    /// list_changed).
    pub prompts: bool,
    pub resources: bool,
    pub groups: bool,
    pub tags: bool,
}

/// The notification types a `subscriptions/listen` stream opted in to.
/// `groupsListChanged` / `tagsListChanged` extend the 2026-07-28 filter for
/// SEP-1300, whose notifications that filter does not know.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subscription {
    pub id: Value,
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    pub groups: bool,
    pub tags: bool,
    /// The `listen-sends-unrequested` fault: every change is sent.
    pub unfiltered: bool,
}

impl Subscription {
    /// The agreed filter, as echoed in `notifications/subscriptions/acknowledged`.
    pub fn agreed(&self) -> Value {
        let mut out = serde_json::Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
            ("groupsListChanged", self.groups),
            ("tagsListChanged", self.tags),
        ] {
            if on {
                out.insert(key.into(), Value::Bool(true));
            }
        }
        Value::Object(out)
    }
}

#[derive(Debug)]
pub struct SessionState {
    pub id: u64,
    /// The version agreed by `initialize`, once it happened.
    pub protocol: Option<&'static str>,
    pub authorized: HashSet<String>,
    /// Set by the `pd-authorize-any` fault after any successful read.
    pub authorized_all: bool,
    /// The `pd-auth-filter-scoped` fault: the tools the session's last
    /// filtered tools/list walk showed.
    pub view: Option<HashSet<String>>,
    pub subscriptions: Vec<Subscription>,
    pub bucket: Option<TokenBucket>,
    /// Whether this connection has sent `server/discover` (only the
    /// `stateless-needs-discover` fault asks).
    pub discovered: bool,
    /// Whether the client has sent `notifications/initialized` (only the
    /// `ping-needs-initialized` fault asks).
    pub initialized: bool,
    /// Whether `--list-changed-after-query` has announced its change.
    pub change_announced: bool,
    /// The tools/call requests `--hold-calls` holds unanswered.
    pub held: Vec<Held>,
}

/// A tools/call held unanswered (`--hold-calls`) until the client cancels
/// it. Over HTTP its response stream waits on `release`: dropping the
/// sender (the cancellation removed the call) ends the stream.
#[derive(Debug)]
pub struct Held {
    pub id: Value,
    pub release: Option<tokio::sync::oneshot::Sender<()>>,
}

impl SessionState {
    pub fn new(rate: Option<RateSpec>) -> Self {
        SessionState {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            protocol: None,
            authorized: HashSet::new(),
            authorized_all: false,
            view: None,
            subscriptions: Vec::new(),
            bucket: rate.map(TokenBucket::new),
            discovered: false,
            initialized: false,
            change_announced: false,
            held: Vec::new(),
        }
    }

    /// The notifications this session should see for a change: plain ones
    /// for an initialized (stateful) session, and one per matching
    /// `subscriptions/listen` stream, tagged with its subscription id.
    pub fn notifications_for(&self, change: &Change) -> Vec<Value> {
        let kinds = [
            ("notifications/tools/list_changed", change.tools),
            ("notifications/prompts/list_changed", change.prompts),
            ("notifications/resources/list_changed", change.resources),
            ("notifications/groups/list_changed", change.groups),
            ("notifications/tags/list_changed", change.tags),
        ];
        let mut out = Vec::new();
        for (method, changed) in kinds {
            if !changed {
                continue;
            }
            if self.protocol.is_some() {
                out.push(notification(method, None));
            }
            for sub in &self.subscriptions {
                let wanted = match method {
                    "notifications/tools/list_changed" => sub.tools,
                    "notifications/prompts/list_changed" => sub.prompts,
                    "notifications/resources/list_changed" => sub.resources,
                    "notifications/groups/list_changed" => sub.groups,
                    _ => sub.tags,
                };
                if wanted || sub.unfiltered {
                    let params = json!({"_meta": {META_SUBSCRIPTION: sub.id.clone()}});
                    out.push(notification(method, Some(params)));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_follow_handshake_and_subscriptions() {
        let mut s = SessionState::new(None);
        let change = Change {
            origin: 0,
            tools: true,
            tags: true,
            ..Change::default()
        };
        assert!(s.notifications_for(&change).is_empty());
        s.protocol = Some("2025-11-25");
        assert_eq!(s.notifications_for(&change).len(), 2);
        s.protocol = None;
        s.subscriptions.push(Subscription {
            id: json!("sub-1"),
            tools: true,
            ..Subscription::default()
        });
        let got = s.notifications_for(&change);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0]["params"]["_meta"][META_SUBSCRIPTION], "sub-1");
        assert_ne!(SessionState::new(None).id, s.id);
    }
}
