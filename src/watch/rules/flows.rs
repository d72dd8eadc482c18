//! Checks on what came before a message: the handshake's order, the
//! modern era's `_meta`, version retries, cursors and their queries, the
//! progressive-disclosure read before a retry, progress and cancellation.

use serde_json::Value;

use super::params::{string, strings};
use super::{describe, Ctx, Hit};
use crate::watch::trace::{Conversation, Msg, Side, MODERN};

#[derive(Debug, Clone, PartialEq)]
pub enum Flow {
    InitializeFirst,
    InitializedBeforeRequests,
    NoRequestsBeforeInitAnswer,
    NoServerRequestsBeforeInitialized,
    MetaField {
        key: String,
    },
    NoInitializeAfterModern,
    RetrySupportedVersion,
    CursorWithQuery {
        methods: Vec<String>,
        fields: Vec<String>,
    },
    DescriptionReadBeforeRetry,
    RelistSameQuery {
        fields: Vec<String>,
    },
    ProgressTokenKnown,
    CancelInFlight {
        forbid: Vec<String>,
        only: Vec<String>,
    },
    /// Checked once the client has ended on its own (see [`Flow::at_end`]).
    CancelNotified {
        methods: Vec<String>,
    },
    LogLevelRequested,
}

pub fn parse(kind: &str, with: &Value) -> Result<Option<Flow>, String> {
    let list = |key: &str| -> Result<Vec<String>, String> {
        if with.get(key).is_none() {
            Ok(Vec::new())
        } else {
            strings(with, key)
        }
    };
    let flow = match kind {
        "initialize-first" => Flow::InitializeFirst,
        "initialized-before-requests" => Flow::InitializedBeforeRequests,
        "no-requests-before-init-answer" => Flow::NoRequestsBeforeInitAnswer,
        "no-server-requests-before-initialized" => Flow::NoServerRequestsBeforeInitialized,
        "meta-field" => Flow::MetaField {
            key: string(with, "key")?,
        },
        "no-initialize-after-modern" => Flow::NoInitializeAfterModern,
        "retry-supported-version" => Flow::RetrySupportedVersion,
        "cursor-with-query" => Flow::CursorWithQuery {
            methods: strings(with, "methods")?,
            fields: strings(with, "fields")?,
        },
        "description-read-before-retry" => Flow::DescriptionReadBeforeRetry,
        "relist-same-query" => Flow::RelistSameQuery {
            fields: strings(with, "fields")?,
        },
        "progress-token-known" => Flow::ProgressTokenKnown,
        "cancel-in-flight" => Flow::CancelInFlight {
            forbid: list("forbid")?,
            only: list("only")?,
        },
        "cancel-notified" => Flow::CancelNotified {
            methods: strings(with, "methods")?,
        },
        "log-level-requested" => Flow::LogLevelRequested,
        _ => return Ok(None),
    };
    Ok(Some(flow))
}

impl Flow {
    pub fn run(&self, ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
        match self {
            Flow::InitializeFirst => initialize_first(ctx, msg),
            Flow::InitializedBeforeRequests => initialized_before_requests(ctx, msg),
            Flow::NoRequestsBeforeInitAnswer => no_requests_before_init_answer(ctx, msg),
            Flow::NoServerRequestsBeforeInitialized => server_requests_early(ctx, msg),
            Flow::MetaField { key } => meta_field(ctx, msg, key),
            Flow::NoInitializeAfterModern => no_initialize_after_modern(ctx, msg),
            Flow::RetrySupportedVersion => retry_supported_version(ctx, msg),
            Flow::CursorWithQuery { methods, fields } => {
                cursor_with_query(ctx, msg, methods, fields)
            }
            Flow::DescriptionReadBeforeRetry => description_read_before_retry(ctx, msg),
            Flow::RelistSameQuery { fields } => relist_same_query(ctx, msg, fields),
            Flow::ProgressTokenKnown => progress_token_known(ctx, msg),
            Flow::CancelInFlight { forbid, only } => cancel_in_flight(ctx, msg, forbid, only),
            Flow::CancelNotified { .. } => None,
            Flow::LogLevelRequested => log_level_requested(ctx, msg),
        }
    }

    /// The checks that need the whole conversation of a client that ended
    /// on its own: the positions of the messages examined, and each hit with
    /// the position of the message it is about.
    pub fn at_end(&self, conv: &Conversation) -> (Vec<usize>, Vec<(usize, Hit)>) {
        match self {
            Flow::CancelNotified { methods } => abandoned_uncancelled(conv, methods),
            _ => (Vec::new(), Vec::new()),
        }
    }
}

/// Client requests of `methods` left unanswered while the client went on
/// (a later request of its own was answered) and never named by a
/// notifications/cancelled: the client stopped waiting without cancelling.
/// Only whole conversations are judged: while one is still being watched,
/// or when a recording was cut short, an unanswered request proves nothing.
/// The requests examined are those left unanswered while the client went on.
fn abandoned_uncancelled(
    conv: &Conversation,
    methods: &[String],
) -> (Vec<usize>, Vec<(usize, Hit)>) {
    let client = |m: &&Msg| m.from == Side::Client;
    let cancelled: Vec<&Value> = conv
        .msgs
        .iter()
        .filter(client)
        .filter(|m| m.method() == Some("notifications/cancelled") && m.is_notification())
        .filter_map(|m| m.params()?.get("requestId"))
        .collect();
    let mut examined = Vec::new();
    let mut hits: Vec<(usize, Hit)> = conv
        .pending_of(Side::Client)
        .filter(|p| methods.contains(&p.method))
        .filter_map(|p| {
            let request = conv.msgs.iter().find(|m| m.pos == p.pos)?;
            let id = request.id()?;
            let (later, (answer, _)) = conv
                .msgs
                .iter()
                .filter(client)
                .filter(|m| m.pos > p.pos && m.is_request())
                .find_map(|m| Some((m.pos, conv.answered(Side::Client, m.id()?)?)))?;
            examined.push(p.pos);
            if cancelled.contains(&id) {
                return None;
            }
            let hit = Hit::new(
                format!(
                    "{} got no answer, and the client went on (its request at #{later} was answered at #{answer}) without a notifications/cancelled naming it",
                    describe(request)
                ),
                vec![later],
            );
            Some((p.pos, hit))
        })
        .collect();
    hits.sort_by_key(|(pos, _)| *pos);
    examined.sort_unstable();
    (examined, hits)
}

/// A client that speaks the modern era (or is probing for it) has no handshake.
fn speaks_modern(ctx: &Ctx<'_>, msg: &Msg) -> bool {
    ctx.conv.modern
        || msg.meta_version().is_some_and(|v| v >= MODERN)
        || msg.method() == Some("server/discover")
        || ctx
            .conv
            .msgs
            .iter()
            .any(|m| m.from == Side::Client && m.method() == Some("server/discover"))
}

fn initialize_first(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    if !msg.is_request() || ctx.conv.initialize_sent.is_some() || speaks_modern(ctx, msg) {
        return None;
    }
    let method = msg.method()?;
    (method != "initialize").then(|| {
        Hit::new(
            format!("{} comes before any initialize request", describe(msg)),
            vec![],
        )
    })
}

fn initialized_before_requests(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    let answered = ctx.conv.initialize_answered?;
    if !msg.is_request() || ctx.conv.initialized_sent.is_some() || ctx.conv.modern {
        return None;
    }
    (msg.method()? != "ping").then(|| {
        Hit::new(
            format!(
                "{} is sent after the initialize answer at #{answered} but before notifications/initialized",
                describe(msg)
            ),
            vec![answered],
        )
    })
}

fn no_requests_before_init_answer(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    let sent = ctx.conv.initialize_sent?;
    if !msg.is_request() || ctx.conv.initialize_answered.is_some() || init_answered(ctx, sent) {
        return None;
    }
    early_request(msg, sent)
}

/// Whether the server sent anything that answers the initialize request at
/// `sent`, even a malformed answer: an id equal in value but not in form
/// (`0.0` for `0`) is the server's fault (server/response-matches-request),
/// and a rule on the client must not blame the client for it.
fn init_answered(ctx: &Ctx<'_>, sent: usize) -> bool {
    // Over HTTP a session's messages keep the whole conversation's positions.
    let Some(at) = ctx.conv.msgs.iter().position(|m| m.pos == sent) else {
        return false;
    };
    let Some(id) = ctx.conv.msgs[at].id() else {
        return false;
    };
    let same = |other: &Value| {
        other == id || matches!((other.as_f64(), id.as_f64()), (Some(a), Some(b)) if a == b)
    };
    ctx.conv.msgs[at + 1..]
        .iter()
        .any(|m| m.from == Side::Server && m.is_response() && m.id().is_some_and(same))
}

fn early_request(msg: &Msg, sent: usize) -> Option<Hit> {
    let method = msg.method()?;
    if matches!(method, "ping" | "initialize") {
        return None;
    }
    Some(Hit::new(
        format!(
            "{} is sent before the server answered the initialize request at #{sent}",
            describe(msg)
        ),
        vec![sent],
    ))
}

fn server_requests_early(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    let sent = ctx.conv.initialize_sent?;
    if !msg.is_request() || ctx.conv.initialized_sent.is_some() || ctx.conv.modern {
        return None;
    }
    (msg.method()? != "ping").then(|| {
        Hit::new(
            format!(
                "{} is sent before the client's notifications/initialized",
                describe(msg)
            ),
            vec![sent],
        )
    })
}

fn meta_field(ctx: &Ctx<'_>, msg: &Msg, key: &str) -> Option<Hit> {
    if !msg.is_request() || (!ctx.conv.modern && msg.meta_version().is_none()) {
        return None;
    }
    msg.meta(key).is_none().then(|| {
        Hit::new(
            format!("{} has no `_meta[\"{key}\"]`", describe(msg)),
            vec![],
        )
    })
}

fn no_initialize_after_modern(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    if msg.method() != Some("initialize") || !msg.is_request() {
        return None;
    }
    let versions = ctx.conv.discovered.as_ref()?;
    if versions.is_empty() || versions.iter().any(|v| v.as_str() < MODERN) {
        return None;
    }
    let at = discover_answer(ctx)?;
    Some(Hit::new(
        format!(
            "initialize is sent to a server whose server/discover answer at #{at} supports only {}",
            versions.join(", ")
        ),
        vec![at],
    ))
}

fn discover_answer(ctx: &Ctx<'_>) -> Option<usize> {
    ctx.conv
        .msgs
        .iter()
        .filter(|m| m.from == Side::Server && m.result().is_some())
        .find(|m| {
            m.result()
                .is_some_and(|r| r.get("supportedVersions").is_some())
        })
        .map(|m| m.pos)
}

fn retry_supported_version(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    if !msg.is_request() {
        return None;
    }
    let version = msg.meta_version()?;
    let (_, supported, at) = ctx
        .conv
        .refused_versions
        .iter()
        .rev()
        .find(|(v, supported, _)| v == version && !supported.iter().any(|s| s == version))?;
    Some(Hit::new(
        format!(
            "{} names protocol version {version} again after the server refused it at #{at} (UnsupportedProtocolVersion, supported: {})",
            describe(msg),
            supported.join(", ")
        ),
        vec![*at],
    ))
}

fn cursor_with_query(
    ctx: &Ctx<'_>,
    msg: &Msg,
    methods: &[String],
    fields: &[String],
) -> Option<Hit> {
    let method = msg.method()?;
    if !msg.is_request() || !methods.iter().any(|m| m == method) {
        return None;
    }
    let params = msg.params()?;
    let cursor = params.get("cursor")?.as_str()?;
    let origin = ctx.conv.cursor_origin(msg.from, cursor)?;
    if origin.method != method {
        return None;
    }
    let changed: Vec<String> = fields
        .iter()
        .filter(|f| origin.params.get(f.as_str()) != params.get(f.as_str()))
        .map(|f| {
            let was = shown(origin.params.get(f.as_str()));
            let now = shown(params.get(f.as_str()));
            format!("{f} {now} (the cursor came for {f} {was})")
        })
        .collect();
    (!changed.is_empty()).then(|| {
        Hit::new(
            format!(
                "{} sends the cursor of the answer at #{} with {}",
                describe(msg),
                origin.pos,
                changed.join(", ")
            ),
            vec![origin.pos],
        )
    })
}

/// The first tools/list after a notifications/tools/list_changed carries
/// the `fields` (query, filter) of the client's last tools/list before it.
fn relist_same_query(ctx: &Ctx<'_>, msg: &Msg, fields: &[String]) -> Option<Hit> {
    let is_list = |m: &Msg| m.is_request() && m.method() == Some("tools/list");
    if !is_list(msg) || msg.params().and_then(|p| p.get("cursor")).is_some() {
        return None;
    }
    let msgs = &ctx.conv.msgs;
    let changed = msgs.iter().rposition(|m| {
        m.from != msg.from && m.method() == Some("notifications/tools/list_changed")
    })?;
    let fresh = |m: &Msg| {
        m.from == msg.from && is_list(m) && m.params().and_then(|p| p.get("cursor")).is_none()
    };
    if msgs[changed..].iter().any(fresh) {
        return None;
    }
    let before = msgs[..changed]
        .iter()
        .rev()
        .find(|m| m.from == msg.from && is_list(m))?;
    let was = before.params().cloned().unwrap_or(Value::Null);
    let now = msg.params().cloned().unwrap_or(Value::Null);
    let lost: Vec<String> = fields
        .iter()
        .filter(|f| was.get(f.as_str()).is_some() && was.get(f.as_str()) != now.get(f.as_str()))
        .map(|f| {
            format!(
                "{f} {} (it listed with {f} {})",
                shown(now.get(f.as_str())),
                shown(was.get(f.as_str()))
            )
        })
        .collect();
    (!lost.is_empty()).then(|| {
        Hit::new(
            format!(
                "{}, the first after the list_changed at #{}, has {}",
                describe(msg),
                msgs[changed].pos,
                lost.join(", ")
            ),
            vec![before.pos, msgs[changed].pos],
        )
    })
}

fn shown(v: Option<&Value>) -> String {
    v.map_or_else(|| "absent".to_string(), Value::to_string)
}

fn description_read_before_retry(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    if msg.method() != Some("tools/call") || !msg.is_request() {
        return None;
    }
    let name = msg.params()?.get("name")?.as_str()?;
    let refused = *ctx.conv.pd_required.get(name)?;
    if ctx
        .conv
        .pd_read
        .get(name)
        .is_some_and(|read| *read > refused)
    {
        return None;
    }
    Some(Hit::new(
        format!(
            "tools/call of {name} is retried after TOOL_DESCRIPTION_REQUIRED at #{refused} without a read of its tool_descriptions resource in between"
        ),
        vec![refused],
    ))
}

fn progress_token_known(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    if msg.method() != Some("notifications/progress") {
        return None;
    }
    let token = msg.params()?.get("progressToken")?;
    let requester = msg.from.other();
    let carried = ctx
        .conv
        .pending_of(requester)
        .any(|p| p.params.pointer("/_meta/progressToken") == Some(token));
    (!carried).then(|| {
        Hit::new(
            format!(
                "notifications/progress names token {token}, which no request of the {requester} still in progress carried"
            ),
            vec![],
        )
    })
}

fn cancel_in_flight(ctx: &Ctx<'_>, msg: &Msg, forbid: &[String], only: &[String]) -> Option<Hit> {
    if msg.method() != Some("notifications/cancelled") || msg.is_request() {
        return None;
    }
    let id = msg.params()?.get("requestId")?;
    let Some(p) = ctx.conv.pending(msg.from, id) else {
        let why = match ctx.conv.answered(msg.from, id) {
            Some((at, _)) => format!("was already answered at #{at}"),
            None => format!("was never sent by the {}", msg.from),
        };
        return Some(Hit::new(
            format!("notifications/cancelled names request {id}, which {why}"),
            vec![],
        ));
    };
    if forbid.contains(&p.method) {
        return Some(Hit::new(
            format!(
                "notifications/cancelled names the {} request at #{}",
                p.method, p.pos
            ),
            vec![p.pos],
        ));
    }
    (!only.is_empty() && !only.contains(&p.method)).then(|| {
        Hit::new(
            format!(
                "notifications/cancelled names a {} request (#{}); only {} may be cancelled by the {}",
                p.method,
                p.pos,
                only.join(", "),
                msg.from
            ),
            vec![p.pos],
        )
    })
}

fn log_level_requested(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    if msg.method() != Some("notifications/message") || !ctx.conv.modern {
        return None;
    }
    let asked = ctx.conv.pending_of(Side::Client).any(|p| {
        p.params
            .pointer("/_meta/io.modelcontextprotocol~1logLevel")
            .is_some()
    });
    (!asked).then(|| {
        Hit::new(
            "notifications/message is sent while no request in progress carries io.modelcontextprotocol/logLevel".to_string(),
            vec![],
        )
    })
}
