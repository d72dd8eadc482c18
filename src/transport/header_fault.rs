//! HTTP header defects of the harness's own client, the transport half of
//! `--client-fault` (see `session::client_fault`): each bends one header
//! of every POST, so that each HTTP client rule of `mcp-conform watch` and
//! `mcp-conform client` can be shown failing. Off unless the session that
//! owns the connection carries one (`HttpConnection::set_header_fault`).

use reqwest::header::{HeaderMap, HeaderValue, ACCEPT};

/// One header defect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderFault {
    /// Accept lists application/json only.
    NoAccept,
    /// Mcp-Session-Id is left out of every POST.
    NoSessionId,
    /// MCP-Protocol-Version is left out of every POST.
    NoVersionHeader,
    /// MCP-Protocol-Version names 2025-11-25 whatever the body's `_meta` says.
    VersionMismatch,
    /// Mcp-Method names a method the body does not.
    WrongMethod,
    /// Mcp-Name names a tool, prompt or resource the body does not.
    WrongName,
    /// No Mcp-Param-{Name} header goes out, whatever the tool's schema marks.
    NoParamHeaders,
    /// Not a header: in 2026-07-28, a GET to the MCP endpoint after the
    /// first POST, as a 2025 client opens its stream.
    GetStream,
}

impl HeaderFault {
    /// Bends the headers of one POST.
    pub fn apply(self, h: &mut HeaderMap) {
        match self {
            HeaderFault::NoAccept => {
                h.insert(ACCEPT, HeaderValue::from_static("application/json"));
            }
            HeaderFault::NoSessionId => {
                h.remove(super::SESSION_HEADER);
            }
            HeaderFault::NoVersionHeader => {
                h.remove(super::VERSION_HEADER);
            }
            HeaderFault::VersionMismatch => {
                if h.contains_key(super::VERSION_HEADER) {
                    h.insert(
                        super::VERSION_HEADER,
                        HeaderValue::from_static("2025-11-25"),
                    );
                }
            }
            HeaderFault::WrongMethod => {
                if h.contains_key("mcp-method") {
                    h.insert("mcp-method", HeaderValue::from_static("tools/not-this-one"));
                }
            }
            HeaderFault::WrongName => {
                if h.contains_key("mcp-name") {
                    h.insert("mcp-name", HeaderValue::from_static("not_this_one"));
                }
            }
            HeaderFault::GetStream => {}
            HeaderFault::NoParamHeaders => {
                let params: Vec<_> = h
                    .keys()
                    .filter(|k| k.as_str().starts_with("mcp-param-"))
                    .cloned()
                    .collect();
                for name in params {
                    h.remove(name);
                }
            }
        }
    }
}
