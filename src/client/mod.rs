//! `mcp-conform client`: grades an MCP client. For each client scenario the
//! harness serves a scenario server (the reference server, set up by the
//! scenario), starts the client command with the official conformance
//! suite's convention, watches the conversation with the trace rules of
//! `mcp-conform watch`, and grades the client side only.
//!
//! `scenario` (the data) and `grade` are pure; `runner` owns the processes
//! and the relay; `driver` is mcp-conform's own client, the harness's
//! session following the driver convention, with its client faults.

pub mod driver;
pub mod grade;
pub mod runner;
pub mod scenario;
