//! What the HTTP checks share about one exchange: the client request a
//! server message answers, and header values in the Base64 sentinel form
//! (MCP 2026-07-28, Streamable HTTP, Value Encoding). A leaf: it uses no
//! other check module, so the checks that need it do not depend on each other.

use base64::Engine;

use super::Ctx;
use crate::watch::trace::{Msg, Side};

/// How a Base64-wrapped header value starts and ends: `=?base64?…?=`.
pub(super) const SENTINEL_START: &str = "=?base64?";
pub(super) const SENTINEL_END: &str = "?=";

/// The client message whose HTTP request a server message answers.
pub(super) fn request_of<'a>(ctx: &'a Ctx<'_>, msg: &Msg) -> Option<&'a Msg> {
    let http = msg.http.as_ref()?;
    ctx.conv.msgs.iter().rev().find(|m| {
        m.from == Side::Client && m.http.as_ref().is_some_and(|h| h.exchange == http.exchange)
    })
}

/// A header value in the Base64 sentinel form, decoded.
pub(super) fn decode_sentinel(value: &str) -> Option<String> {
    let inner = value
        .strip_prefix(SENTINEL_START)?
        .strip_suffix(SENTINEL_END)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inner)
        .ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinel_values_decode_and_others_do_not() {
        assert_eq!(
            decode_sentinel("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(decode_sentinel("us-west1"), None);
        assert_eq!(decode_sentinel("=?base64?%%%?="), None);
        assert_eq!(decode_sentinel("=?base64?SGVsbG8="), None);
    }
}
