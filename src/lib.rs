//! mcp-conform: a declarative conformance harness for MCP servers and the draft
//! tool-discovery extensions.

pub mod builtin;
pub mod fixture;
pub mod jsonrpc;
pub mod protocol;
pub mod quality;
pub mod reference;
pub mod report;
pub mod requirements;
pub mod run;
pub mod scenario;
pub mod schema;
pub mod session;
pub mod sources;
pub mod sources_check;
pub mod transport;
pub mod watch;
