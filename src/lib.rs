//! mcp-conform: a declarative conformance harness for MCP servers and the draft
//! tool-discovery extensions.

pub mod jsonrpc;
pub mod reference;
