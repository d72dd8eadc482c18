//! Entry points for fuzzing and property tests of the reference server.
//!
//! Each `check_*` function takes arbitrary input, drives one of the
//! server's input parsers through the same code a transport uses, and checks
//! the properties that must hold for *any* input. A broken property comes
//! back as `Err(description)` instead of a panic, so the caller decides what
//! it means: the cargo-fuzz targets under `fuzz/` panic (a crash to keep),
//! the property tests under `tests/` fail. A panic inside the server itself
//! is of course also a finding.
//!
//! Nothing here changes how the server behaves; it only calls public entry
//! points ([`Server::handle_line`], [`Server::handle`], [`CursorKey`],
//! [`ToolFilter`], [`selected_tools`]) with a small fixed catalog.
//!
//! Properties checked:
//! - every message out is well-formed JSON-RPC 2.0 with an integer error
//!   code; a request gets exactly one response with its id; a notification
//!   gets none; no parser error escapes as -32603 (internal error);
//! - the catalog's hidden tool (`admin_purge_workspace`, audience-restricted)
//!   never appears in any answer unless the input itself named it, and is
//!   never authorized by a `tool_descriptions` read;
//! - a filter's index lookup and its per-tool rule agree; every page of a
//!   filtered or queried list respects the filter and no tool repeats;
//! - a cursor that the server did not issue is rejected with -32602; a
//!   cursor decodes only to the exact text it was issued as, and changing
//!   any character of an issued cursor makes it invalid;
//! - `?tools=` lists decode to trimmed, non-empty, distinct names.

use super::catalog_file::Catalog;
use super::cursor::{self, CursorKey, Position};
use super::filter::ToolFilter;
use super::handlers::progressive::selected_tools;
use super::live::Snapshot;
use super::server::Server;
use super::session::SessionState;
use crate::Config;
use mcp_conform_protocol::jsonrpc::{codes, decode_line, Message};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::sync::OnceLock;

/// The catalog every check serves: small (14 visible tools), with groups,
/// tags, categories, prompts, resources and one hidden tool.
pub const CATALOG: &str = include_str!("../../../fixtures/catalogs/mini.json");
/// The audience-restricted tool of [`CATALOG`]: invisible to every client.
pub const HIDDEN_TOOL: &str = "admin_purge_workspace";
/// Protocol version `initialize` agrees on in stateful checks.
const STATEFUL_VERSION: &str = "2025-11-25";
/// Pages followed when walking a list through its cursors.
const MAX_PAGES: usize = 8;

/// What a check found wrong.
pub type Broken = String;

fn catalog() -> &'static Catalog {
    static CAT: OnceLock<Catalog> = OnceLock::new();
    CAT.get_or_init(|| match Catalog::from_slice(CATALOG.as_bytes()) {
        Ok(c) => c,
        // The catalog is part of the binary and covered by unit tests.
        Err(e) => panic!("embedded fuzzing catalog does not load: {e}"),
    })
}

/// A server over [`CATALOG`] with the given configuration.
pub fn server(config: Config) -> Server {
    Server::new(catalog().clone(), config)
}

/// A shared server without the control hook: nothing an input does can
/// change its catalog, so one instance serves every fuzz iteration.
fn shared_server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| server(Config::default()))
}

/// `initialize` on `session`, as a client would open it.
pub fn initialize(server: &Server, session: &mut SessionState) -> Result<(), Broken> {
    let out = server.handle(
        session,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": STATEFUL_VERSION, "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"}}}),
    );
    match out.first() {
        Some(r) if r.get("result").is_some() => Ok(()),
        other => Err(format!("initialize failed: {other:?}")),
    }
}

fn stateless_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})
}

/// One well-formed JSON-RPC 2.0 message from the server.
pub fn check_message(m: &Value) -> Result<(), Broken> {
    if m["jsonrpc"] != "2.0" {
        return Err(format!("no jsonrpc 2.0: {m}"));
    }
    if m.get("method").is_some() {
        if !m["method"].is_string() || m.get("id").is_some() {
            return Err(format!("a malformed notification or a request: {m}"));
        }
        return Ok(());
    }
    let id = &m["id"];
    if !(id.is_null() || id.is_string() || id.is_i64() || id.is_u64()) {
        return Err(format!("bad response id: {m}"));
    }
    match (m.get("result"), m.get("error")) {
        (Some(_), None) => Ok(()),
        (None, Some(e)) if e["code"].is_i64() && e["message"].is_string() => {
            if e["code"] == codes::INTERNAL_ERROR {
                Err(format!("an input reached an internal error: {m}"))
            } else {
                Ok(())
            }
        }
        _ => Err(format!("not a response: {m}")),
    }
}

/// The hidden tool's name appears in `out` only when `input` named it.
fn check_hidden(input: &[u8], out: &[Value]) -> Result<(), Broken> {
    let named = input
        .windows(HIDDEN_TOOL.len())
        .any(|w| w == HIDDEN_TOOL.as_bytes());
    if named {
        return Ok(());
    }
    for m in out {
        if m.to_string().contains(HIDDEN_TOOL) {
            return Err(format!("the hidden tool leaked: {m}"));
        }
    }
    Ok(())
}

/// How many answers one input line must get, and with which id.
enum Expect {
    /// Exactly one response with this id (null for an unusable id).
    One(Value),
    /// No response (notification, a response from the client).
    Nothing,
    /// A deferred or stream-opening request: at most one response.
    AtMostOne,
}

fn expect(line: &[u8]) -> Expect {
    let Ok(value) = decode_line(line) else {
        return Expect::One(Value::Null);
    };
    if value.is_array() {
        return Expect::One(Value::Null);
    }
    match Message::classify(value) {
        Message::Request { method, .. } if method == "subscriptions/listen" => Expect::AtMostOne,
        Message::Request { id, .. } => {
            let usable = id.is_string() || id.is_i64() || id.is_u64();
            Expect::One(if usable { id } else { Value::Null })
        }
        Message::Invalid { value, .. } => Expect::One(
            value
                .get("id")
                .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
                .cloned()
                .unwrap_or(Value::Null),
        ),
        Message::Notification { .. } | Message::Response { .. } | Message::Error { .. } => {
            Expect::Nothing
        }
    }
}

/// The JSON-RPC entry point: `input` is split into lines and each is handed
/// to [`Server::handle_line`] (what the stdio transport does with a line) on
/// one session. The first byte chooses the setting: bit 0 opens the session
/// with `initialize` first, bit 1 enables the `conform/mutate` control hook
/// (on a fresh server, since mutations change its catalog).
pub fn check_rpc_lines(input: &[u8]) -> Result<(), Broken> {
    let Some((&mode, rest)) = input.split_first() else {
        return Ok(());
    };
    let own;
    let server = if mode & 2 != 0 {
        own = server(Config {
            control: true,
            ..Config::default()
        });
        &own
    } else {
        shared_server()
    };
    let mut session = server.new_session();
    if mode & 1 != 0 {
        initialize(server, &mut session)?;
    }
    for line in rest.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let out = server.handle_line(&mut session, line);
        check_answers(line, &out)?;
        check_hidden(input, &out)?;
    }
    Ok(())
}

fn check_answers(line: &[u8], out: &[Value]) -> Result<(), Broken> {
    for m in out {
        check_message(m)?;
    }
    let responses: Vec<&Value> = out.iter().filter(|m| m.get("method").is_none()).collect();
    let text = || String::from_utf8_lossy(line).into_owned();
    match expect(line) {
        Expect::One(id) => match responses.as_slice() {
            [r] if r["id"] == id => Ok(()),
            _ => Err(format!(
                "{} got {responses:?}, expected one answer with id {id}",
                text()
            )),
        },
        Expect::Nothing if responses.is_empty() => Ok(()),
        Expect::Nothing => Err(format!("{} was answered: {responses:?}", text())),
        Expect::AtMostOne if responses.len() <= 1 => Ok(()),
        Expect::AtMostOne => Err(format!("{} got {responses:?}", text())),
    }
}

/// One stateless request on `session`; the single response.
fn call(
    server: &Server,
    session: &mut SessionState,
    method: &str,
    mut params: Map<String, Value>,
) -> Result<Value, Broken> {
    params.insert("_meta".into(), stateless_meta());
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let input = request.to_string();
    let out = server.handle(session, request);
    check_answers(input.as_bytes(), &out)?;
    check_hidden(input.as_bytes(), &out)?;
    out.into_iter()
        .next()
        .ok_or_else(|| format!("{method}: no answer"))
}

/// The query and filter parsers: `filter` is used as `params.filter` of
/// `tools/list` and `query` as its `query`; the same query goes to
/// `tools/search` and the category profile's `tool_search`. The filter's
/// index lookup must agree with its per-tool rule, and every page of the
/// list must respect it.
pub fn check_query_filter(query: &str, filter: &Value) -> Result<(), Broken> {
    let server = shared_server();
    let snap = server.snapshot();
    if let Ok(parsed) = ToolFilter::parse(filter.as_object()) {
        check_filter_agrees(&snap, &parsed)?;
    }
    let mut session = server.new_session();
    let mut params = Map::new();
    params.insert("query".into(), json!(query));
    params.insert("filter".into(), filter.clone());
    let seen = walk_tools_list(server, &mut session, params)?;
    if let Ok(parsed) = ToolFilter::parse(filter.as_object()) {
        for name in &seen {
            let admitted = snap.doc(name).is_some_and(|d| parsed.admits(snap.tool(d)));
            if !admitted {
                return Err(format!(
                    "tools/list with filter {filter} listed {name}, which it does not admit"
                ));
            }
        }
    }
    let mut search = Map::new();
    search.insert("query".into(), json!(query));
    call(server, &mut session, "tools/search", search)?;
    let args = json!({"query": query, "tags": filter.get("tags"), "limit": 5});
    let mut tool_search = Map::new();
    tool_search.insert("name".into(), json!("tool_search"));
    tool_search.insert("arguments".into(), args);
    call(server, &mut session, "tools/call", tool_search)?;
    Ok(())
}

/// The filter's bitset over the index and its per-tool predicate agree.
fn check_filter_agrees(snap: &Snapshot, filter: &ToolFilter) -> Result<(), Broken> {
    let allowed = filter.allowed(snap, &crate::filter::Plain);
    for d in 0..snap.len() {
        let by_index = allowed.as_ref().is_none_or(|set| set.contains(d));
        let tool = snap.tool(d as u32);
        if by_index != filter.admits(tool) {
            return Err(format!(
                "filter {filter:?}: the index says {by_index} for {} but the rule disagrees",
                tool.name
            ));
        }
    }
    Ok(())
}

/// Follows `tools/list` pages; the names listed, each once.
fn walk_tools_list(
    server: &Server,
    session: &mut SessionState,
    params: Map<String, Value>,
) -> Result<Vec<String>, Broken> {
    let mut seen = Vec::new();
    let mut names = HashSet::new();
    let mut params = params;
    for _ in 0..MAX_PAGES {
        let answer = call(server, session, "tools/list", params.clone())?;
        let Some(result) = answer.get("result") else {
            return Ok(seen);
        };
        for tool in result["tools"].as_array().into_iter().flatten() {
            let name = tool["name"].as_str().unwrap_or_default().to_string();
            if !names.insert(name.clone()) {
                return Err(format!("tools/list repeated {name} across pages"));
            }
            seen.push(name);
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(next) => {
                params.insert("cursor".into(), json!(next));
            }
            None => return Ok(seen),
        }
    }
    Ok(seen)
}

/// Methods that accept a `cursor`, with the params they need besides it.
fn cursor_methods() -> [(&'static str, Value); 6] {
    [
        ("tools/list", json!({})),
        (
            "tools/list",
            json!({"query": "page", "filter": {"groups": ["pages"]}}),
        ),
        ("tools/search", json!({"query": "page"})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
    ]
}

/// Cursor decoding. `input` is tried as a cursor against a fixed key and
/// against every paginated method of the server (it must be refused with
/// -32602: only the server can issue a cursor), and is used to build a
/// position whose cursor must round-trip and must not survive any change
/// of one character.
pub fn check_cursor(input: &[u8]) -> Result<(), Broken> {
    let text = String::from_utf8_lossy(input);
    let key = CursorKey::with_key([0x5a; 32]);
    if let Ok(pos) = key.decode(&text) {
        if key.encode(&pos) != text {
            return Err(format!(
                "{text:?} decodes but is not the cursor issued for it"
            ));
        }
    }
    let server = shared_server();
    let mut session = server.new_session();
    for (method, extra) in cursor_methods() {
        let mut params = extra.as_object().cloned().unwrap_or_default();
        params.insert("cursor".into(), json!(text));
        let answer = call(server, &mut session, method, params)?;
        if answer.pointer("/error/code") != Some(&json!(codes::INVALID_PARAMS)) {
            return Err(format!(
                "{method} accepted a cursor it did not issue ({text:?}): {answer}"
            ));
        }
    }
    check_cursor_round_trip(&key, input)
}

fn check_cursor_round_trip(key: &CursorKey, input: &[u8]) -> Result<(), Broken> {
    let mut word = [0u8; 8];
    for (i, b) in input.iter().take(8).enumerate() {
        word[i] = *b;
    }
    let number = u64::from_le_bytes(word);
    let method = String::from_utf8_lossy(input.get(8..).unwrap_or_default()).into_owned();
    let pos = Position {
        method: method.chars().take(64).collect(),
        scope: cursor::scope(&[&method]),
        generation: number.rotate_left(17),
        offset: (number % (1 << 40)) as usize,
    };
    let issued = key.encode(&pos);
    if issued.len() > cursor::MAX_CURSOR_LEN {
        return Ok(());
    }
    match key.decode(&issued) {
        Ok(back) if back == pos => {}
        other => return Err(format!("{pos:?} came back as {other:?}")),
    }
    let at = usize::from(input.first().copied().unwrap_or(0)) % issued.len();
    let mut tampered: Vec<u8> = issued.clone().into_bytes();
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8_lossy(&tampered).into_owned();
    if key.decode(&tampered).is_ok() {
        return Err(format!(
            "cursor {issued} changed at {at} to {tampered} still decodes"
        ));
    }
    Ok(())
}

/// Resource URI parsing: `uri` is read with `resources/read` on an
/// initialized session. Only visible tools named by its `?tools=` list may
/// become authorized, the hidden tool never; a tool not authorized must
/// still be refused by `tools/call`.
pub fn check_resource_uri(uri: &str) -> Result<(), Broken> {
    let query = uri.split_once('?').map_or("", |(_, q)| q);
    let (names, given) = selected_tools(query);
    if given < names.len() {
        return Err(format!(
            "{uri:?}: {given} names given, {} kept",
            names.len()
        ));
    }
    let mut distinct = HashSet::new();
    for n in &names {
        if n.is_empty() || n.trim() != n || n.contains(',') || !distinct.insert(n) {
            return Err(format!("{uri:?}: bad tool name {n:?} in {names:?}"));
        }
    }
    let server = shared_server();
    let mut session = server.new_session();
    initialize(server, &mut session)?;
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
        "params": {"uri": uri}});
    let line = request.to_string();
    let out = server.handle(&mut session, request);
    check_answers(line.as_bytes(), &out)?;
    check_hidden(line.as_bytes(), &out)?;
    if session.authorized.contains(HIDDEN_TOOL) {
        return Err(format!("{uri:?} authorized the hidden tool"));
    }
    let snap = server.snapshot();
    for name in &session.authorized {
        if !names.contains(name) || snap.doc(name).is_none() {
            return Err(format!("{uri:?} authorized {name}, which it did not name"));
        }
    }
    for name in names.iter().take(4) {
        let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": name, "arguments": {}}});
        let out = server.handle(&mut session, call);
        let code = out.first().and_then(|r| r.pointer("/error/code"));
        if !session.authorized.contains(name)
            && code != Some(&json!(super::error::TOOL_DESCRIPTION_REQUIRED))
            && code != Some(&json!(codes::INVALID_PARAMS))
        {
            return Err(format!("tools/call {name} without authorization: {out:?}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_inputs_pass_every_check() {
        let lines = b"\x01{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\nnot json\n";
        assert_eq!(check_rpc_lines(lines), Ok(()));
        assert_eq!(
            check_query_filter("create page", &json!({"groups": ["pages"]})),
            Ok(())
        );
        assert_eq!(check_query_filter("", &json!("not an object")), Ok(()));
        assert_eq!(check_cursor(b"AAAA"), Ok(()));
        assert_eq!(
            check_resource_uri(
                "resource:///tool_descriptions?tools=page_create,admin_purge_workspace"
            ),
            Ok(())
        );
    }

    #[test]
    fn a_leak_of_the_hidden_tool_is_caught() {
        let leaked = vec![json!({"jsonrpc": "2.0", "id": 1, "result": {"x": HIDDEN_TOOL}})];
        assert!(check_hidden(b"tools/list", &leaked).is_err());
        assert!(check_hidden(HIDDEN_TOOL.as_bytes(), &leaked).is_ok());
    }

    #[test]
    fn an_internal_error_is_a_finding() {
        let m = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}});
        assert!(check_message(&m).is_err());
    }
}
