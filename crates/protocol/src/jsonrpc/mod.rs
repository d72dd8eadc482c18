//! JSON-RPC 2.0 over newline-delimited streams, shared by the harness and the
//! reference server.

pub mod compact;
pub mod framing;
pub mod message;

pub use framing::{decode_line, encode_line, DecodeError, Frame, LineReader, DEFAULT_MAX_LINE};
pub use message::{codes, error_response, notification, request, response, type_name, Message};
