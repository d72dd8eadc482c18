//! The server under test and how to open a connection to it.

use crate::session::Connection;
use crate::transport::{StdioConnection, StdioSpec, TransportError};

#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A command launched once per session, spoken to over stdio.
    Stdio(StdioSpec),
}

impl Target {
    /// The target as a user would recognise it (a command line or a URL).
    pub fn display(&self) -> String {
        match self {
            Target::Stdio(spec) => spec.display(),
        }
    }

    pub fn transport(&self) -> &'static str {
        match self {
            Target::Stdio(_) => "stdio",
        }
    }

    /// Opens a fresh connection: a new process on stdio.
    pub async fn connect(&self) -> Result<Connection, TransportError> {
        match self {
            Target::Stdio(spec) => StdioConnection::spawn(spec).map(Connection::Stdio),
        }
    }
}
