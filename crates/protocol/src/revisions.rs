//! The MCP protocol revisions this project speaks and the reserved `_meta`
//! keys of the 2026-07-28 revision and the grouping extension: stated once,
//! for the harness's client (`session::era`), the reference server
//! (`reference::era`) and the scenario helpers alike.

pub const V2025_06_18: &str = "2025-06-18";
pub const V2025_11_25: &str = "2025-11-25";
pub const V2026_07_28: &str = "2026-07-28";

/// Every revision spoken, oldest first.
pub const KNOWN_VERSIONS: &[&str] = &[V2025_06_18, V2025_11_25, V2026_07_28];
/// Revisions negotiated with `initialize`, newest first.
pub const STATEFUL: &[&str] = &[V2025_11_25, V2025_06_18];
/// Revisions carried per request in `_meta` (no `initialize`, no sessions).
pub const STATELESS: &[&str] = &[V2026_07_28];
/// The newest revision that still has an `initialize` handshake.
pub const NEWEST_STATEFUL: &str = V2025_11_25;

/// Revisions before the oldest spoken one, which a server may still be
/// asked for (the negotiation edges).
pub const OLDER_REVISIONS: &[&str] = &["2024-11-05", "2025-03-26"];

pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";
/// The per-request log level: without it a 2026-07-28 server "MUST NOT
/// emit notifications/message for a request" (Server, Utilities, Logging).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Group membership in the grouping extension.
pub const META_GROUPS: &str = "io.modelcontextprotocol/groups";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_revision_is_either_stateful_or_stateless() {
        let mut both: Vec<&str> = STATEFUL.iter().chain(STATELESS).copied().collect();
        both.sort_unstable();
        assert_eq!(both, KNOWN_VERSIONS);
        assert_eq!(STATEFUL[0], NEWEST_STATEFUL);
    }
}
