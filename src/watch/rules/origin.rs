//! The server's answer to a request carrying an `Origin` header (DNS
//! rebinding, MCP 2025-11-25 Transports, Security Warning). Which origins a
//! server trusts is its own list, so only an `Origin` that is no origin at
//! all is invalid for every server; a foreign one served is reported, not
//! judged.

use super::http_request::request_of;
use super::{describe, Ctx, Hit};
use crate::watch::trace::{Msg, Side};

/// What the server's answer to a request with an `Origin` breaks, if
/// anything: `malformed` picks the check of an `Origin` that is no origin
/// (must be 403), else the check of a non-loopback one sent to a loopback host.
pub fn check(ctx: &Ctx<'_>, msg: &Msg, malformed: bool) -> Option<Hit> {
    if msg.from != Side::Server {
        return None;
    }
    let status = msg.http.as_ref()?.status?;
    let request = request_of(ctx, msg)?;
    let headers = request.http.as_ref()?;
    let origin = headers.header("origin")?;
    // The first message of an answer is judged; an SSE stream's later
    // events carry the same status.
    let first = ctx
        .conv
        .msgs
        .iter()
        .any(|m| m.from == Side::Server && m.pos > request.pos && same_exchange(m, msg));
    if first || !(200..300).contains(&status) {
        return None;
    }
    let what = if request.raw.is_empty() {
        format!("the {} request", headers.method)
    } else {
        describe(request)
    };
    match (malformed, parse(origin)) {
        (true, None) => Some(Hit::new(
            format!(
                "{what} carries Origin {origin:?}, which is not an origin (scheme://host[:port]), and was served with status {status}, not refused with 403 Forbidden"
            ),
            vec![request.pos],
        )),
        (false, Some(host)) if !loopback(&host) && headers.header("host").is_some_and(host_is_loopback) => {
            Some(Hit::new(
                format!(
                    "{what} carries Origin {origin:?} and was served with status {status} by a server the client reached on loopback; unless the server lists that origin as trusted, a web page there can drive it (DNS rebinding)"
                ),
                vec![request.pos],
            ))
        }
        _ => None,
    }
}

fn same_exchange(a: &Msg, b: &Msg) -> bool {
    match (&a.http, &b.http) {
        (Some(x), Some(y)) => x.exchange == y.exchange,
        _ => false,
    }
}

/// The host of a serialized origin (RFC 6454 section 6.2:
/// `scheme://host[:port]`), lower case; None for anything else. `null`
/// (an opaque origin) is an origin but names no host: it counts as foreign.
fn parse(origin: &str) -> Option<String> {
    let o = origin.trim().to_ascii_lowercase();
    if o == "null" {
        return Some(o);
    }
    let (scheme, authority) = o.split_once("://")?;
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok || authority.is_empty() || authority.contains(['/', '?', '#', '@', ' ']) {
        return None;
    }
    host_of(authority)
}

/// The host of `host[:port]` (an IPv6 literal in brackets); None when the
/// port is not a number.
fn host_of(authority: &str) -> Option<String> {
    if let Some(v6) = authority.strip_prefix('[') {
        let (h, rest) = v6.split_once(']')?;
        let port_ok = rest.is_empty() || rest[1..].bytes().all(|b| b.is_ascii_digit());
        return (rest.is_empty() || rest.starts_with(':') && port_ok).then(|| h.to_string());
    }
    match authority.split_once(':') {
        Some((h, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            Some(h.to_string())
        }
        Some(_) => None,
        None => Some(authority.to_string()),
    }
}

fn loopback(host: &str) -> bool {
    host == "localhost" || host == "::1" || host.starts_with("127.")
}

/// Whether a `Host` header names a loopback host.
fn host_is_loopback(host: &str) -> bool {
    host_of(&host.trim().to_ascii_lowercase()).is_some_and(|h| loopback(&h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_read_as_rfc_6454_serializes_them() {
        assert_eq!(parse("http://localhost:3000").as_deref(), Some("localhost"));
        assert_eq!(parse("https://[::1]:8").as_deref(), Some("::1"));
        assert_eq!(
            parse("https://Evil.Example").as_deref(),
            Some("evil.example")
        );
        assert_eq!(parse("null").as_deref(), Some("null"));
        for bad in [
            "evil",
            "http://",
            "http://a/b",
            "http://a:x",
            "://a",
            "1x://a",
            "",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
        assert!(host_is_loopback("127.0.0.1:8080"));
        assert!(host_is_loopback("[::1]:1"));
        assert!(!host_is_loopback("mcp.example.com"));
    }
}
