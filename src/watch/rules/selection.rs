//! Progressive disclosure: a client told MISSING_TOOL_SELECTION for a
//! `tool_descriptions` read that named no tools does not send the same bare
//! read again; it names the tools it wants (`?tools=a,b`).

use serde_json::Value;

use super::{Ctx, Hit};
use crate::watch::trace::{described_tools, Msg, Side};

const MARKER: &str = "MISSING_TOOL_SELECTION";

/// Whether `uri` reads the tool descriptions without naming a tool.
fn bare_read(uri: &str) -> bool {
    let path = uri.split('?').next().unwrap_or(uri);
    path.ends_with("tool_descriptions") && described_tools(uri).is_empty()
}

fn read_uri(params: &Value) -> Option<&str> {
    params.get("uri")?.as_str()
}

/// The hit on a client's bare read after a bare read was already refused.
pub fn check(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    if msg.from != Side::Client || !msg.is_request() || msg.method() != Some("resources/read") {
        return None;
    }
    let uri = read_uri(msg.params()?)?;
    if !bare_read(uri) {
        return None;
    }
    let refused = refusal_of_bare_read(ctx)?;
    Some(Hit::new(
        format!(
            "the client read {uri:?} again without naming tools after the server answered MISSING_TOOL_SELECTION at #{refused}"
        ),
        vec![refused],
    ))
}

/// Where the server last answered a bare read with MISSING_TOOL_SELECTION.
fn refusal_of_bare_read(ctx: &Ctx<'_>) -> Option<usize> {
    ctx.conv.msgs.iter().rev().find_map(|m| {
        if m.from != Side::Server || !m.is_response() || !m.raw.contains(MARKER) {
            return None;
        }
        let (_, request) = ctx.conv.answered(Side::Client, m.id()?)?;
        let bare =
            request.method == "resources/read" && read_uri(&request.params).is_some_and(bare_read);
        bare.then_some(m.pos)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_is_bare_when_it_names_no_tool() {
        assert!(bare_read("resource:///tool_descriptions"));
        assert!(bare_read("resource:///tool_descriptions?tools="));
        assert!(bare_read("resource:///tool_descriptions?other=1"));
        assert!(!bare_read("resource:///tool_descriptions?tools=a,b"));
        assert!(!bare_read("docs://handbook/onboarding"));
    }
}
