//! mcp-conform: a declarative conformance harness for MCP servers and the draft
//! tool-discovery extensions.

pub mod builtin;
pub mod client;
pub mod expr;
pub mod fixture;
pub mod json;
pub mod quality;
pub mod report;
pub mod requirements;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod schema;
pub mod session;
pub mod sources;
pub mod sources_check;
pub mod text;
pub mod transport;
pub mod watch;

// The crates below the harness, under the paths the harness has always used
// for them (ARCHITECTURE.md): the wire facts both sides share, and the
// reference server.
pub use mcp_conform_protocol::jsonrpc;
pub use mcp_conform_protocol::revisions as protocol;
pub use mcp_conform_reference as reference;
