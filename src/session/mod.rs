//! An MCP client session over any transport: the era's handshake, requests
//! with timeouts, notification capture, and answers to the server's own
//! requests so a server is never left waiting on the harness.
//!
//! `Session` and its state live here; each concern is a file of its own:
//! the connection it runs over (`connection`), the handshake
//! (`handshake`), sending requests and notifications (`requests`), waiting
//! for an answer with its sentinel and hints (`answers`), several requests
//! in flight at once (`in_flight`), what the server
//! sends unasked, notifications and its own requests (`incoming`),
//! cancellation (`cancel`), and closing and reuse by a later scenario
//! (`lifecycle`).

mod answers;
mod cancel;
pub mod client_fault;
mod connection;
pub mod era;
mod error;
mod handshake;
mod in_flight;
mod incoming;
mod lifecycle;
pub mod paginate;
pub mod pruned_decode;
mod requests;
pub mod transcript;

use std::collections::HashSet;
use std::time::Duration;

use serde_json::Value;

pub use answers::SENTINEL_GRACE;
pub use connection::{Connection, SharedProcess};
pub use era::Era;
pub use error::SessionError;
pub use in_flight::InFlight;
pub use incoming::{MAX_NOTIFICATION_BYTES, SERVER_REQUEST_2026};
pub use paginate::{PageWalk, PaginationError, Unfinished, Walked};
pub use transcript::{Direction, Transcript};

/// Something the server did that breaks the wire rules, seen in passing.
#[derive(Debug, Clone, PartialEq)]
pub struct WireViolation {
    pub reason: String,
    pub excerpt: String,
}

pub struct Session {
    pub name: String,
    conn: Connection,
    pub era: Era,
    next_id: i64,
    timeout: Duration,
    /// Notifications not yet consumed by `wait_notification`.
    pub notifications: Vec<Value>,
    /// Every notification received, in order.
    pub notification_log: Vec<Value>,
    /// stdout lines that were not JSON-RPC messages.
    pub violations: Vec<WireViolation>,
    /// The violations seen before the session was first handed to a
    /// scenario (see `adopt`); None until then.
    startup_violations: Option<Vec<WireViolation>>,
    pub transcript: Transcript,
    /// The handshake answer (initialize or server/discover result).
    pub server: Value,
    /// The result of the last `initialize` sent on this session, the
    /// handshake's or a step's own (`complete_lifecycle`).
    own_initialize: Option<Value>,
    /// Whether a notification went out since the session was last handed
    /// on: a server that answers one (it should not) writes that answer
    /// after the scenario may have ended (`Session::checkup` reads it).
    notified: bool,
    /// Whether the last `tools/list` this session sent narrowed the list
    /// (a filter or query, anything beside the cursor): a server may keep
    /// what it listed as session state (`Session::left_filtered_listing`).
    filtered_listing: bool,
    /// The tool names this session's `resources/read` URIs named, kept
    /// across the scenarios a warm session serves (`Session::touched_tools`).
    touched_tools: std::collections::BTreeSet<String>,
    /// Whether `notifications/initialized` went out on this session.
    initialized_sent: bool,
    abandoned_ids: Vec<Value>,
    /// The abandoned requests the client cancelled: "The sender of the
    /// cancellation notification SHOULD ignore any response to the request
    /// that arrives afterward" (MCP 2025-06-18, Utilities, Cancellation), so
    /// their late answers are ignored wherever they land.
    cancelled_ids: Vec<Value>,
    /// The abandoned requests the server dropped: a request behind them on
    /// the same stream (the sentinel) was answered and they were not, so
    /// the server has passed them by and is not working on them; a late
    /// answer is ignored like a cancelled one's.
    dropped_ids: Vec<Value>,
    /// How long the first answer on a connection opened without the
    /// handshake may take: the server process may have only just started,
    /// and its start-up is not the request's delay (`--startup-timeout-ms`).
    startup_allowance: Option<Duration>,
    answered_ids: HashSet<String>,
    /// Ids answered for the scenarios this warm session served before the
    /// current one: a message with one of them is a second answer.
    earlier_answered: HashSet<String>,
    sent_ids: HashSet<String>,
    /// Every request id sent over the server's session, kept across the
    /// scenarios a warm session serves, so the counter never repeats one.
    ids_ever_sent: HashSet<String>,
    server_requests_answered: usize,
    /// Send a sentinel behind the next message awaited (`arm_sentinel`).
    sentinel_armed: bool,
    /// Notifications not kept because of MAX_NOTIFICATIONS or MAX_NOTIFICATION_BYTES.
    pub notifications_dropped: usize,
    /// Estimated memory of `notification_log`.
    notification_bytes: usize,
    /// What the walk under way keeps of each page: a long line is decoded
    /// cut down to it (see `pruned_decode`).
    page_read: Option<pruned_decode::PageRead>,
    closed: bool,
    /// The client defect this session carries (`--client-fault`), if any.
    fault: Option<(client_fault::ClientFault, client_fault::FaultState)>,
    /// Answers to requests in flight, kept until awaited (`in_flight`).
    landed: in_flight::Landed,
}

impl Session {
    pub fn new(
        name: &str,
        conn: Connection,
        era: Era,
        timeout: Duration,
        transcript: Transcript,
    ) -> Self {
        let mut conn = conn;
        conn.limit_writes(timeout);
        Self {
            name: name.to_string(),
            conn,
            era,
            next_id: 1,
            timeout,
            notifications: Vec::new(),
            notification_log: Vec::new(),
            violations: Vec::new(),
            startup_violations: None,
            transcript,
            server: Value::Null,
            own_initialize: None,
            initialized_sent: false,
            notified: false,
            filtered_listing: false,
            touched_tools: Default::default(),
            abandoned_ids: Vec::new(),
            cancelled_ids: Vec::new(),
            dropped_ids: Vec::new(),
            startup_allowance: None,
            answered_ids: HashSet::new(),
            earlier_answered: HashSet::new(),
            sent_ids: HashSet::new(),
            ids_ever_sent: HashSet::new(),
            server_requests_answered: 0,
            sentinel_armed: false,
            notifications_dropped: 0,
            notification_bytes: 0,
            page_read: None,
            closed: false,
            fault: None,
            landed: Default::default(),
        }
    }

    /// The session with `fault`, the client defect it carries from its
    /// first message on (`--client-fault`); an HTTP header fault goes to
    /// its connection.
    pub fn with_client_fault(mut self, fault: Option<client_fault::ClientFault>) -> Self {
        let header = match fault {
            Some(client_fault::ClientFault::Http(h)) => Some(h),
            _ => None,
        };
        self.conn.set_header_fault(header);
        self.fault = fault.map(|f| (f, Default::default()));
        self
    }

    /// The client defect this session carries, if any: a driver's own
    /// decisions (which capabilities it heeds) bend with it too.
    pub fn client_fault(&self) -> Option<client_fault::ClientFault> {
        self.fault.as_ref().map(|(f, _)| *f)
    }

    pub fn stderr_tail(&self) -> String {
        self.conn.stderr_tail()
    }

    /// Bytes the server has written to stderr so far.
    pub fn stderr_total(&self) -> u64 {
        self.conn.stderr_total()
    }

    /// Whether the server process has ended on its own (without waiting).
    pub fn has_exited(&mut self) -> bool {
        self.conn.has_exited()
    }
}

#[cfg(test)]
mod tests;

/// A session of `era` with a new in-process reference server of `config`,
/// before any handshake.
#[cfg(test)]
pub(crate) fn with_in_process_reference(config: crate::reference::Config, era: &str) -> Session {
    let (input, output) = crate::reference::in_process::spawn(config);
    let pipe = crate::transport::PipeConnection::new(input, output);
    Session::new(
        "main",
        Connection::Pipe(Box::new(pipe)),
        Era::new(era),
        Duration::from_secs(5),
        Transcript::new(),
    )
}
