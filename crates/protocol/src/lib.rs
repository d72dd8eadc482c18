//! The wire both sides of mcp-conform speak: JSON-RPC 2.0 messages and their
//! newline framing (`jsonrpc`), and the MCP revisions with their reserved
//! `_meta` keys (`revisions`).
//!
//! This is the only crate the reference server shares with the harness. It
//! holds facts of the protocol, never a check of them: a codec that decides
//! whether a peer conforms belongs to the side that applies it, so that the
//! harness and the reference server cannot share a bug.

pub mod jsonrpc;
pub mod revisions;
