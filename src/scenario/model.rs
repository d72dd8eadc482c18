//! The scenario model: what a scenario file says, after loading and checking.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::interpolate::{Template, ValueTemplate};
use super::pattern::Pattern;
pub use super::source::Place;
use crate::expr::{Bindings, Compiled, ExprError};

/// How much a requirement weighs: what its failure turns into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    #[serde(rename = "MUST")]
    Must,
    #[serde(rename = "SHOULD")]
    Should,
    #[serde(rename = "MAY")]
    May,
    #[serde(rename = "INFO")]
    Info,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
            Level::Info => "INFO",
        }
    }

    /// The weaker of two levels: a SHOULD check inside a MUST scenario only warns.
    pub fn weaker(self, other: Level) -> Level {
        self.max(other)
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whose rule a requirement (or a quoted document) states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// An extension draft (or a product's own design) the profile follows.
    Draft,
    /// A released MCP specification or JSON-RPC 2.0.
    McpSpec,
    /// This project's own reading where the drafts are silent or disagree
    /// (docs/interpretations.md).
    Project,
}

impl Provenance {
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Draft => "draft",
            Provenance::McpSpec => "mcp-spec",
            Provenance::Project => "project",
        }
    }

    /// How a report names it beside a quote.
    pub fn label(self) -> &'static str {
        match self {
            Provenance::Draft => "draft",
            Provenance::McpSpec => "spec",
            Provenance::Project => "project rule",
        }
    }
}

impl std::fmt::Display for Provenance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A finding every server built on a given SDK shares (`shared_finding:`),
/// with where the reason is written down. Shown beside the finding; the
/// verdict stays as the rule grades it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedFinding {
    /// One line: who shares it and why.
    pub note: String,
    /// The section that explains it, `docs/popular-servers.md#anchor`.
    pub see: String,
    /// The transports it is shared over (`stdio`, `http`); empty: every
    /// one. Over another, the note is not shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transports: Vec<String>,
}

impl SharedFinding {
    /// Whether the finding is shared over `transport`.
    pub fn holds_over(&self, transport: &str) -> bool {
        self.transports.is_empty() || self.transports.iter().any(|t| t == transport)
    }
}

/// A reference into one of the source documents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecRef {
    /// A source id from scenarios/sources.yaml (`sep-1300`, `interpretations`,
    /// …); a user's own scenario may name any document and give its `url`.
    pub doc: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// Where to read it: the deep link written in the scenario, else the
    /// source's own location (filled in when the scenario is loaded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Where the rule holds, when it holds in some eras or over some
    /// transports only (the rule of one accepted alternative, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applies: Option<Applies>,
    /// The source's public name (filled in when the scenario is loaded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Whose rule the quote is (filled in when the scenario is loaded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

impl SpecRef {
    /// Whether the rule holds in protocol version `era` over `transport`.
    pub fn applies_to(&self, era: &str, transport: &str) -> bool {
        self.applies.as_ref().is_none_or(|a| {
            (a.eras.is_empty() || a.eras.iter().any(|e| e == era))
                && (a.transports.is_empty() || a.transports.iter().any(|t| t == transport))
        })
    }

    /// One line naming the source for a reader: public name, whose rule,
    /// section and link, e.g. `SEP-1300: Tool Filtering with Groups and Tags
    /// [draft], Overview <https://…>`.
    pub fn cite(&self) -> String {
        let mut out = self.title.clone().unwrap_or_else(|| self.doc.clone());
        if let Some(p) = self.provenance {
            out.push_str(&format!(" [{}]", p.label()));
        }
        if let Some(section) = &self.section {
            out.push_str(&format!(", {section}"));
        }
        if let Some(url) = &self.url {
            out.push_str(&format!(" <{url}>"));
        }
        out
    }
}

/// The eras and transports a spec entry holds in (empty: every one).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Applies {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eras: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transports: Vec<String>,
}

/// A CEL expression with where it was written and its program, compiled
/// when the scenario is loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub source: String,
    pub place: Place,
    pub program: Compiled,
}

impl Expr {
    /// An expression written nowhere in a file (tests, generated steps).
    pub fn unplaced(source: &str) -> Result<Expr, ExprError> {
        Ok(Expr {
            source: source.to_string(),
            place: Place::default(),
            program: super::helpers::compile(source)?,
        })
    }

    pub fn eval(&self, bindings: &Bindings) -> Result<Value, ExprError> {
        self.program.eval(bindings)
    }

    pub fn eval_bool(&self, bindings: &Bindings) -> Result<bool, ExprError> {
        self.program.eval_bool(bindings)
    }

    pub fn eval_list(&self, bindings: &Bindings) -> Result<Vec<Value>, ExprError> {
        self.program.eval_list(bindings)
    }

    /// [`Expr::eval_list`], of which only the first `n` items are used.
    pub fn eval_list_first(&self, bindings: &Bindings, n: usize) -> Result<Vec<Value>, ExprError> {
        self.program.eval_list_first(bindings, n)
    }
}

/// A precondition: false → the scenario is skipped with `reason`.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    pub expr: Expr,
    /// May name what the server offered (`${size(picks)}`).
    pub reason: Template,
}

impl Requirement {
    /// Whether the condition reads what the run's probe found (`probe.*`):
    /// such a condition skips a scenario without starting a server, and is
    /// left to the scenario's own steps when probing is off (`--isolate`).
    pub fn reads_probe(&self) -> bool {
        self.expr.program.reads_variable("probe")
    }
}

/// One `assert` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Assertion {
    pub expr: Expr,
    pub message: Option<Template>,
    pub level: Option<Level>,
}

/// What a step does on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Request {
        method: Template,
        params: Option<ValueTemplate>,
        rpc_id: Option<ValueTemplate>,
        /// Send without waiting for the answer (long-lived requests).
        no_wait: bool,
        /// Follow `nextCursor`, concatenating `result.<field>`.
        paginate: Option<String>,
        /// The most pages the walk reads (`max_pages:`); a walk stopped
        /// there is not exercised, never a failure.
        max_pages: Option<usize>,
    },
    Notify {
        method: Template,
        params: Option<ValueTemplate>,
    },
    /// Bytes as written (a newline is added when missing); waits for one answer
    /// when the step has an `expect`.
    SendRaw {
        text: Template,
    },
    WaitNotification {
        method: String,
    },
    Sleep {
        ms: u64,
    },
    /// One HTTP exchange with the MCP endpoint, outside the JSON-RPC flow
    /// (transport scenarios; only over Streamable HTTP).
    Http {
        method: String,
        /// The body: JSON (`body:`, interpolated) or text (`text:`).
        body: Option<ValueTemplate>,
        text: Option<Template>,
        /// Overrides of the session's headers (names interpolated too, so a
        /// header a server's own tool asks for can be named); `None` removes one.
        headers: Vec<(Template, Option<Template>)>,
        /// How long to read a GET's event stream (0: status and headers only).
        read_ms: u64,
    },
    /// No wire traffic: only captures and asserts.
    Check,
}

/// A `for_each` fan-out.
#[derive(Debug, Clone, PartialEq)]
pub struct ForEach {
    pub items: Expr,
    pub var: String,
    pub max_items: usize,
    /// How many items' requests may be in flight at once (`concurrency:`,
    /// 1 by default: each waits for the answer before it). The answers are
    /// checked in item order either way.
    pub concurrency: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub id: Option<String>,
    /// CEL; when false the step is not run.
    pub condition: Option<Expr>,
    /// After the answer: when false, the scenario is not applicable (skip).
    pub skip_unless: Option<Requirement>,
    pub session: Option<String>,
    /// `handshake: false`: the step's `session:` is opened without the
    /// era's handshake, so the step itself can send `initialize` (or
    /// `server/discover`) with the parameters it chooses.
    pub handshake: bool,
    pub action: Action,
    pub for_each: Option<ForEach>,
    /// Inject the stateless era's `_meta` (default true; false to test its absence).
    pub meta: bool,
    /// Send the era's liveness request right behind the message, to tell a
    /// dropped message from a slow answer (`sentinel: true`).
    pub sentinel: bool,
    /// The request gets the run's per-call budget (`--call-budget-ms`):
    /// unanswered by then, it is cancelled as the era allows and, in a
    /// `for_each`, its item is recorded as not exercised (`bounded: true`).
    pub bounded: bool,
    pub expect: Option<Pattern>,
    /// Where `expect:` is written (`steps[1].expect`).
    pub expect_place: Place,
    pub asserts: Vec<Assertion>,
    pub captures: Vec<(String, Expr)>,
    pub timeout_ms: Option<u64>,
    pub level: Option<Level>,
    /// The step's id (`steps[2]`, `cleanup[0]`) and where it starts.
    pub place: Place,
}

/// The session a step uses when it names none.
pub const MAIN_SESSION: &str = "main";

impl Step {
    /// Why `sentinel: true` cannot apply to this step, if it can't: only a
    /// message whose answer the step waits for can be followed by one.
    pub fn sentinel_misplaced(&self) -> Option<&'static str> {
        if !self.sentinel {
            return None;
        }
        match &self.action {
            Action::Request {
                no_wait: false,
                paginate: None,
                ..
            } => None,
            Action::Request { .. } => {
                Some("sentinel: true needs a request that waits for its one answer (no no_wait, no paginate)")
            }
            Action::SendRaw { .. } if self.expect.is_some() => None,
            Action::SendRaw { .. } => Some("sentinel: true on send_raw needs an expect (the answer it waits for)"),
            _ => Some("sentinel: true applies only to request and send_raw steps"),
        }
    }

    /// Why `bounded: true` cannot apply to this step, if it can't: only a
    /// request that waits for its one answer can be cancelled after a budget.
    pub fn bounded_misplaced(&self) -> Option<&'static str> {
        match &self.action {
            _ if !self.bounded => None,
            Action::Request {
                no_wait: false,
                paginate: None,
                ..
            } if !self.sentinel => None,
            _ => Some("bounded: true needs a request that waits for its one answer (no no_wait, no paginate, no sentinel)"),
        }
    }

    /// Why `concurrency:` above 1 cannot apply to this step, if it can't:
    /// only a request awaited by its id alone can share the wire with
    /// others in flight.
    pub fn concurrency_misplaced(&self) -> Option<&'static str> {
        match (&self.for_each, &self.action) {
            (Some(fe), _) if fe.concurrency <= 1 => None,
            (None, _) => None,
            (
                Some(_),
                Action::Request {
                    no_wait: false,
                    paginate: None,
                    rpc_id: None,
                    ..
                },
            ) if !self.sentinel => None,
            _ => Some("concurrency above 1 needs a request that waits for its one answer by the harness's own id (no no_wait, paginate, sentinel or id)"),
        }
    }

    /// Whether this step leaves any server as it found it by what it is: a
    /// check, or a request on the main session for a `*/list` or
    /// `*/search`, which the MCP specification defines as reads. A scenario
    /// whose steps so far were all such may take a list walk another
    /// scenario made on a warm server (see `run::walks`).
    pub fn only_lists(&self) -> bool {
        if self.session.is_some() {
            return false;
        }
        match &self.action {
            Action::Check => true,
            Action::Request {
                method,
                no_wait: false,
                ..
            } => {
                let method = method.source();
                !method.contains("${") && (method.ends_with("/list") || method.ends_with("/search"))
            }
            _ => false,
        }
    }

    /// Why this step can't run on a server shared with other scenarios, if it can't.
    pub fn shares_badly(&self) -> Option<&'static str> {
        if self.session.is_some() && !self.handshake {
            return Some("opens a session without the handshake (`handshake: false`)");
        }
        self.changes_server()
    }

    /// Why this step may leave its session's server other than it found
    /// it, if it may: what `shares_badly` refuses beyond opening a session
    /// without the handshake.
    pub fn changes_server(&self) -> Option<&'static str> {
        match &self.action {
            Action::Request { method, .. } if method.source() == MUTATE_METHOD => {
                Some("changes the server's catalog (control hook)")
            }
            Action::Request { no_wait: true, .. } => {
                Some("leaves a request unanswered (`no_wait`)")
            }
            Action::Notify { .. } => Some("sends a notification, which may change session state"),
            Action::SendRaw { .. } => Some("sends raw bytes, which may break the connection"),
            Action::WaitNotification { .. } => Some("waits for a notification"),
            Action::Http { .. } => Some("makes raw HTTP exchanges"),
            Action::Sleep { .. } => Some("depends on time passing"),
            Action::Request { .. } | Action::Check => None,
        }
    }

    /// Why this step cannot run on a server handed on between `reused`
    /// scenarios, if it can't: it changes the catalog every scenario reads,
    /// or exchanges raw HTTP. Bytes a server need not survive are allowed:
    /// the server is checked before it is handed on (`may_break_connection`).
    pub fn reuses_badly(&self) -> Option<&'static str> {
        if self.is_control_hook() {
            return Some("changes the server's catalog (control hook)");
        }
        match &self.action {
            Action::Http { .. } => Some("makes raw HTTP exchanges"),
            _ => None,
        }
    }

    /// Whether the step names no session other than the main one.
    pub fn on_main_session(&self) -> bool {
        self.session
            .as_deref()
            .is_none_or(|name| name == MAIN_SESSION)
    }

    /// Whether the step talks over the main session: it goes on the wire
    /// (a check or a sleep does not) and names no other session.
    pub fn uses_main_session(&self) -> bool {
        self.on_main_session() && !matches!(self.action, Action::Check | Action::Sleep { .. })
    }

    /// Whether the step calls the control hook (`conform/mutate`).
    pub fn is_control_hook(&self) -> bool {
        matches!(&self.action, Action::Request { method, .. } if method.source() == MUTATE_METHOD)
    }

    /// Whether the step writes raw bytes other than literal JSON-RPC 2.0
    /// requests and notifications: a server need not survive them, so one
    /// that served the scenario must answer a liveness request before it
    /// serves another.
    pub fn may_break_connection(&self) -> bool {
        matches!(&self.action, Action::SendRaw { text } if !all_jsonrpc_messages(text.source()))
    }

    /// A display name for messages: the step id or its ordinal.
    pub fn label(&self, index: usize) -> String {
        match &self.id {
            Some(id) => format!("step '{id}'"),
            None => format!("step {}", index + 1),
        }
    }
}

/// A transport a scenario applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Stdio,
    Http,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }

    pub fn parse(name: &str) -> Option<Transport> {
        match name {
            "stdio" => Some(Transport::Stdio),
            "http" => Some(Transport::Http),
            _ => None,
        }
    }
}

impl PartialEq<str> for Transport {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Transport {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The data a golden scenario's exact expectations hold for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fixture {
    /// The server serves fixtures/catalogs/reference.json.
    ReferenceCatalog,
}

impl Fixture {
    pub fn parse(name: &str) -> Option<Fixture> {
        (name == "reference-catalog").then_some(Fixture::ReferenceCatalog)
    }
}

/// Whether a scenario needs a server of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// A new server process (stdio) or session (HTTP) for this scenario.
    #[default]
    Fresh,
    /// The scenario only reads: a warm server of an earlier shared scenario
    /// serves it. The loader refuses it on steps that change a server's or
    /// session's state (see [`Step::shares_badly`]).
    Shared,
    /// The scenario may change its session's state (a log level, a
    /// subscription, a tool call), but reads nothing an earlier scenario's
    /// changes could sway: a server that served earlier `reused` scenarios,
    /// and stayed healthy, serves it. Such servers never go back to shared
    /// scenarios. The loader refuses it on steps that could break the
    /// connection or change what later scenarios read (see
    /// [`Step::reuses_badly`]).
    Reused,
}

/// A fully loaded and checked scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub id: String,
    pub title: String,
    pub profile: String,
    pub level: Level,
    pub requirements: Vec<String>,
    pub spec: Vec<SpecRef>,
    pub description: Option<String>,
    /// A failure or warning that servers on a common SDK share.
    pub shared_finding: Option<SharedFinding>,
    pub requires: Vec<Requirement>,
    /// Protocol versions the scenario applies to; empty means every era.
    pub eras: Vec<String>,
    /// The reason shown when the negotiated era is not in `eras`.
    pub eras_reason: Option<String>,
    pub transports: Vec<Transport>,
    pub fixture: Option<Fixture>,
    pub timeout_ms: Option<u64>,
    pub isolation: Isolation,
    /// Whether the main session opens with the era's handshake (default
    /// true). `handshake: false`: a fresh connection whose first message is
    /// the first step's (2026-07-28 requests need no earlier request).
    pub handshake: bool,
    /// `hands_on: true` (fresh scenarios only): the scenario needs a server
    /// that served nothing before, but leaves it as a `reused` scenario
    /// would, so the server, still healthy, goes on to serve `reused`
    /// scenarios instead of being stopped.
    pub hands_on: bool,
    /// `reused_in_eras: [..]` (hands_on scenarios only): the eras in which
    /// the scenario runs as `isolation: reused` instead (what made it need
    /// a server of its own happens only in other eras).
    pub reused_in_eras: Vec<String>,
    /// `reuse_group: NAME` (reused scenarios only): servers are handed on
    /// only between the group's scenarios, which leave state (description
    /// authorizations, say) that would sway other reused scenarios.
    pub reuse_group: Option<String>,
    /// `ends_server: true` (reused scenarios only): the scenario leaves its
    /// server in a state no other scenario may meet (an open subscription
    /// stream, a catalog changed through the control hook), so the server
    /// is stopped after it instead of handed on. It needs no server of its
    /// own: one that served earlier reused scenarios will do.
    pub ends_server: bool,
    /// `confirm_fresh: true` (reused scenarios only): a verdict other than
    /// pass reached on a warm server is not the one reported; the scenario
    /// runs again on a server of its own, whose verdict is. Its server is
    /// handed on only after a pass. For a scenario that needs state nobody
    /// set (a tool no description read authorized), which it finds on a
    /// warm server by leaving out what earlier scenarios named
    /// (`touched_tools` in CEL): whatever an earlier scenario left that the
    /// scenario did not foresee can then cost a start, never a verdict.
    pub confirm_fresh: bool,
    pub steps: Vec<Step>,
    pub asserts: Vec<Assertion>,
    /// Steps that always run last, to undo the scenario's changes to the server.
    pub cleanup: Vec<Step>,
    /// Generated inputs: per-case steps and checks (property scenarios).
    pub generate: Option<Box<super::generate::Generate>>,
    /// Where the scenario came from (`builtin:base/x.yaml` or a file path).
    pub origin: String,
    /// What all of its expressions together read of each variable: a long
    /// answer is kept only that far (see `crate::json::prune`).
    pub reads: std::sync::Arc<crate::expr::Reads>,
}

/// How a file of the built-in catalog is named in `origin`.
pub const BUILTIN_PREFIX: &str = "builtin:";

/// The path a reader can open for an origin: a built-in file by its
/// repository path (`scenarios/base/x.yaml`), any other file as given.
pub fn source_path(origin: &str) -> String {
    match origin.strip_prefix(BUILTIN_PREFIX) {
        Some(path) => format!("scenarios/{path}"),
        None => origin.to_string(),
    }
}

/// The control hook's method: a scenario that calls it changes the server's catalog.
/// Whether every line of a raw write is a JSON-RPC 2.0 request or
/// notification written out in full (no `${…}`): what any server must
/// read without harm.
fn all_jsonrpc_messages(text: &str) -> bool {
    !text.contains("${")
        && text.lines().filter(|l| !l.trim().is_empty()).all(|line| {
            serde_json::from_str::<serde_json::Value>(line).is_ok_and(|m| {
                m.get("jsonrpc").and_then(|v| v.as_str()) == Some("2.0")
                    && m.get("method").is_some_and(|v| v.is_string())
            })
        })
}

pub const MUTATE_METHOD: &str = "conform/mutate";

impl Scenario {
    /// Whether another step of this scenario walks the same request as
    /// `step` (the same method and parameters as written): such a scenario
    /// compares two walks of one server, so neither may be another
    /// scenario's walk.
    pub fn walks_request_again(&self, step: &Step) -> bool {
        let Action::Request { method, params, .. } = &step.action else {
            return false;
        };
        let generated = self.generate.iter().flat_map(|g| g.steps.iter());
        self.steps
            .iter()
            .chain(generated)
            .filter(|other| {
                matches!(&other.action, Action::Request { method: m, params: p, paginate: Some(_), .. }
                    if m == method && p == params)
            })
            .count()
            > 1
    }

    /// `file:line:col` of a place in this scenario's file.
    pub fn location(&self, place: &Place) -> String {
        place.location(&source_path(&self.origin))
    }

    /// The scenario's isolation in `era` (`reused_in_eras`).
    pub fn isolation_in(&self, era: &str) -> Isolation {
        if self.reused_in_eras.iter().any(|e| e == era) {
            Isolation::Reused
        } else {
            self.isolation
        }
    }

    /// Whether the scenario's `eras` (all when it names none) include `era`.
    pub fn written_for(&self, era: &str) -> bool {
        self.eras.is_empty() || self.eras.iter().any(|e| e == era)
    }

    /// Whether the scenario runs on a server of its own in `era` and hands
    /// it on when it is done (`hands_on`); one written for other eras only
    /// never runs there, so it hands nothing on.
    pub fn hands_on_in(&self, era: &str) -> bool {
        self.hands_on && self.isolation_in(era) == Isolation::Fresh && self.written_for(era)
    }

    /// Whether a step may leave the connection unusable (see
    /// `Step::may_break_connection`): a warm server that ran this scenario
    /// is checked before the next one gets it.
    pub fn may_break_connection(&self) -> bool {
        self.every_step().any(Step::may_break_connection)
    }

    /// Whether every step leaves the server as it found it (what
    /// `isolation: shared` asks of a scenario): a server that served it
    /// serves a shared scenario as well as any.
    pub fn only_reads(&self) -> bool {
        self.cleanup.is_empty() && self.every_step().all(|s| s.shares_badly().is_none())
    }

    /// Whether every step on the session `name` (one other than the main
    /// session) only reads, its opening `initialize` aside: a server that
    /// served that session, its lifecycle completed, is one a shared
    /// scenario could have left.
    pub fn only_reads_on(&self, name: &str) -> bool {
        self.every_step()
            .filter(|s| s.session.as_deref() == Some(name))
            .all(|s| s.changes_server().is_none())
    }

    /// Whether it opens a session without the era's handshake (its main
    /// session, or a step's), whose first message is the scenario's own.
    pub fn opens_unshaken(&self) -> bool {
        !self.handshake || self.every_step().any(|s| !s.handshake)
    }

    /// The sessions other than the main one that its steps name.
    pub fn own_sessions(&self) -> std::collections::BTreeSet<&str> {
        self.every_step()
            .filter_map(|s| s.session.as_deref())
            .filter(|name| *name != MAIN_SESSION)
            .collect()
    }

    /// The steps, the cleanup steps and every generated case's steps.
    fn every_step(&self) -> impl Iterator<Item = &Step> {
        let generated = self.generate.iter().flat_map(|g| g.steps.iter());
        self.steps.iter().chain(&self.cleanup).chain(generated)
    }

    /// Whether the scenario may spend most of its time waiting: a sleep, a
    /// notification awaited, a request that may use up the run's call
    /// budget, or a server started for each generated case (one after the
    /// other, each as long as a start takes). The run starts such
    /// scenarios early, so their waits overlap the rest of the work instead
    /// of ending the run.
    pub fn may_wait(&self) -> bool {
        let generated = self.generate.iter().flat_map(|g| g.steps.iter());
        let starts_per_case = generated.clone().any(|step| !step.handshake);
        starts_per_case
            || self.makes_bounded_requests()
            || self.steps.iter().chain(generated).any(|step| {
                matches!(
                    step.action,
                    Action::Sleep { .. } | Action::WaitNotification { .. }
                )
            })
    }

    /// Whether a step (of any kind) sends a `bounded: true` request, one
    /// that may use up the run's call budget.
    pub fn makes_bounded_requests(&self) -> bool {
        self.every_step().any(|step| step.bounded)
    }

    /// Whether the scenario reads what only the probe of every era tells:
    /// the eras the run tests or the server speaks (`versions.run`,
    /// `versions.spoken`), or whether the server serves the reference
    /// catalog (`fixture`, judged on its newest era's tools).
    pub fn reads_whole_probe(&self) -> bool {
        let versions = self.reads.get("versions");
        let reads = |field| versions.is_some_and(|v| v.member_read(field).is_some());
        self.fixture.is_some() || reads("run") || reads("spoken")
    }

    /// Whether a step talks over the main session. One whose steps all
    /// name sessions of their own (a property that starts a server per
    /// case) needs no main server: none is started or taken from a pool,
    /// and the scenario waits for no lane.
    pub fn uses_main_session(&self) -> bool {
        self.every_step().any(Step::uses_main_session)
    }

    /// Whether the scenario changes the server's state for every session
    /// (calls the control hook). On a server shared by concurrent scenarios
    /// (HTTP) such a scenario must run alone.
    pub fn mutates_server(&self) -> bool {
        self.steps
            .iter()
            .chain(&self.cleanup)
            .any(Step::is_control_hook)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requirement(source: &str) -> Requirement {
        Requirement {
            expr: Expr::unplaced(source).unwrap_or_else(|e| panic!("{e}")),
            reason: Template::compile("r").unwrap_or_else(|e| panic!("{e}")),
        }
    }

    #[test]
    fn a_scenario_whose_steps_all_name_other_sessions_needs_no_main_one() {
        let uses_main = |steps: &str| {
            let text =
                format!("id: base/sessions\ntitle: t\nprofile: base\nlevel: MUST\nsteps:\n{steps}");
            crate::scenario::load::load_str("t.yaml", &text)
                .unwrap_or_else(|e| panic!("{e}"))
                .uses_main_session()
        };
        assert!(uses_main("  - request: ping\n"));
        assert!(uses_main("  - request: ping\n    session: main\n"));
        assert!(uses_main(
            "  - request: ping\n    session: b\n  - notify: notifications/x\n"
        ));
        assert!(!uses_main(
            "  - capture: { x: \"1\" }\n  - request: ping\n    session: b\n  - sleep_ms: 5\n"
        ));
    }

    #[test]
    fn reading_the_eras_of_the_run_or_the_spoken_ones_waits_for_the_whole_probe() {
        let with = |expr: &str| {
            let text = format!(
                "id: base/reads\ntitle: reads\nprofile: base\nlevel: MUST\nrequires:\n  - expr: \"{expr}\"\n    reason: r\nsteps:\n  - request: ping\n"
            );
            crate::scenario::load::load_str("t.yaml", &text)
                .unwrap_or_else(|e| panic!("{e}"))
                .reads_whole_probe()
        };
        assert!(with("era in versions.run"));
        assert!(with("size(versions.spoken) > 0"));
        assert!(with("size(versions) > 0"), "the whole of versions");
        assert!(!with("era in versions.known"));
        assert!(!with("'versions.run' != ''"));
    }

    #[test]
    fn a_requirement_reads_the_probe_only_through_the_variable() {
        assert!(requirement("probe.tools.size() > 0").reads_probe());
        assert!(requirement("has(probe.search) && step.x == 1").reads_probe());
        assert!(!requirement("'probe.tools' != ''").reads_probe());
        assert!(!requirement("vars.probe_count > 0").reads_probe());
    }

    #[test]
    fn a_scenario_that_walks_one_request_twice_is_told_so() {
        let text = "id: base/x\ntitle: x\nprofile: base\nlevel: MUST\nrequirements: [BASE-ERR-01]\nsteps:\n  - id: a\n    request: tools/list\n    paginate: tools\n  - id: b\n    request: prompts/list\n    paginate: prompts\n  - id: c\n    request: tools/list\n    paginate: tools\n";
        let s = crate::scenario::load::load_str("x.yaml", text).unwrap_or_else(|e| panic!("{e}"));
        assert!(s.walks_request_again(&s.steps[0]));
        assert!(!s.walks_request_again(&s.steps[1]));
        assert!(s.walks_request_again(&s.steps[2]));
    }

    #[test]
    fn place_ids_read_like_paths_into_the_file() {
        assert_eq!(Place::id_of("/steps/2"), "steps[2]");
        assert_eq!(Place::id_of("/steps/2/assert/0/expr"), "steps[2].assert[0]");
        assert_eq!(Place::id_of("/assert/1"), "assert[1]");
        assert_eq!(Place::id_of("/requires/0/expr"), "requires[0]");
        assert_eq!(
            Place::id_of("/steps/0/capture/names"),
            "steps[0].capture.names"
        );
        assert_eq!(
            Place::id_of("/steps/1/expect/result/tools/0/name"),
            "steps[1].expect.result.tools[0].name"
        );
        assert_eq!(Place::id_of("/steps/1/expect/a~1b"), "steps[1].expect.a/b");
        assert_eq!(Place::id_of(""), "");
        assert_eq!(source_path("builtin:base/x.yaml"), "scenarios/base/x.yaml");
        assert_eq!(source_path("my/x.yaml"), "my/x.yaml");
    }

    #[test]
    fn a_spec_entry_applies_where_its_eras_and_transports_say() {
        let entry: SpecRef = serde_json::from_value(serde_json::json!({
            "doc": "MCP schema 2026-07-28",
            "applies": {"eras": ["2026-07-28"], "transports": ["http"]}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(entry.applies_to("2026-07-28", "http"));
        assert!(!entry.applies_to("2026-07-28", "stdio"));
        assert!(!entry.applies_to("2025-11-25", "http"));
        let everywhere = SpecRef {
            applies: None,
            ..entry.clone()
        };
        assert!(everywhere.applies_to("2025-06-18", "stdio"));
        let any_era = SpecRef {
            applies: Some(Applies {
                eras: Vec::new(),
                transports: vec!["stdio".into()],
            }),
            ..entry
        };
        assert!(any_era.applies_to("2025-06-18", "stdio"));
        let typo = serde_json::from_value::<SpecRef>(
            serde_json::json!({"doc": "x", "applies": {"era": ["2026-07-28"]}}),
        );
        assert!(typo.is_err());
    }
}
