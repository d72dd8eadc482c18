//! The decisions a faulty server takes differently: one value, built once
//! per server, whose default is what the specification requires.
//!
//! A fault that changes a decision (a status code, whether a check runs)
//! is a named [`Decision`] here; the code that decides reads
//! `policy.group.decision.on()` and knows nothing of faults. A fault that
//! rewrites an answer is a layer instead (`server::layer`).

use std::fmt;
use std::sync::Arc;

/// One decision: `on` when the server departs from the specification.
/// Reading it calls its note (a fault trace records which decisions a
/// conversation reached).
#[derive(Clone, Default)]
pub struct Decision {
    on: bool,
    note: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl Decision {
    /// A decision that is `on` or not, noting each read with `note`.
    pub fn new(on: bool, note: impl Fn() + Send + Sync + 'static) -> Self {
        Decision {
            on,
            note: Some(Arc::new(note)),
        }
    }

    /// Whether the server departs from the specification here.
    pub fn on(&self) -> bool {
        if let Some(note) = &self.note {
            note();
        }
        self.on
    }
}

impl fmt::Debug for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", if self.on { "bent" } else { "as specified" })
    }
}

macro_rules! decisions {
    ($($(#[$doc:meta])* $group:ident { $($(#[$fdoc:meta])* $field:ident,)* })*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Default)]
            pub struct $group {
                $($(#[$fdoc])* pub $field: Decision,)*
            }
        )*
    };
}

decisions! {
    /// Streamable HTTP (MCP 2025-11-25 and 2026-07-28, Transports).
    Http {
        /// Requests from any Origin are served.
        origin_unchecked,
        /// An unsupported MCP-Protocol-Version header is not refused.
        version_header_ignored,
        /// A 2026-07-28 request's Mcp-Session-Id is looked up.
        session_id_honoured,
        /// A stateful request without a session id gets a throwaway one.
        session_optional,
        /// An unknown session gets 400 instead of 404.
        unknown_session_400,
        /// An Mcp-Name in the Base64 form is compared undecoded.
        name_not_decoded,
        /// A version header that differs from the body's is accepted.
        version_mismatch_ok,
        /// A request without a version header is served.
        version_header_optional,
        /// Mcp-Name is not compared with the body.
        name_unchecked,
        /// Raw non-ASCII Mcp-Param values are accepted.
        param_raw_accepted,
        /// HeaderMismatch comes with 500.
        header_mismatch_500,
        /// MissingRequiredClientCapability comes with 200.
        capability_200,
        /// An unknown method's -32601 comes with 200.
        unknown_method_200,
        /// Mcp-Param headers are not checked against the body.
        param_header_unchecked,
        /// An absent or null x-mcp-header parameter wants its header.
        param_header_expected,
        /// GET answers JSON.
        get_json,
        /// DELETE without a session gets 400 instead of 405.
        delete_400,
        /// DELETE leaves the session alive.
        delete_keeps_session,
    }

    /// The stdio transport.
    Stdio {
        /// An unparsable line gets no answer.
        parse_error_silent,
        /// The server exits after answering an unparsable line.
        parse_error_exit,
    }

    /// Sessions and the catalog they share.
    Sessions {
        /// Description authorizations live in a file every process shares.
        shared_auth,
        /// A spent rate-limit bucket never refills.
        bucket_never_refills,
        /// Catalog changes are not announced.
        list_changed_missing,
    }

    /// Checks a request handler makes.
    Requests {
        /// 2026-07-28 `_meta` without its required keys is served.
        meta_unchecked,
        /// tools/list shows full input schemas.
        full_schemas_in_list,
        /// tools/call does not validate its arguments.
        invalid_arguments_accepted,
        /// tools/call needs no tool description first.
        calls_unchecked,
        /// prompts/get renders a missing required argument empty.
        missing_argument_rendered,
        /// logging/setLevel takes an unknown level.
        unknown_level_accepted,
        /// completion/complete answers for an unknown reference.
        unknown_ref_answered,
        /// An input request is made although the client did not declare it.
        undeclared_input_requested,
        /// */search without a query lists everything.
        missing_query_ok,
    }
}

/// Every decision of one server.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub http: Http,
    pub stdio: Stdio,
    pub sessions: Sessions,
    pub requests: Requests,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn the_default_is_the_specification_and_reads_are_noted() {
        assert!(!Policy::default().http.origin_unchecked.on());
        let reads = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&reads);
        let d = Decision::new(true, move || {
            counted.fetch_add(1, Ordering::Relaxed);
        });
        assert!(d.on() && d.on());
        assert_eq!(reads.load(Ordering::Relaxed), 2);
    }
}
