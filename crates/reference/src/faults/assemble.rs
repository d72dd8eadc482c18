//! A server with faults: its decisions (a [`Policy`] whose bent decisions
//! are the faults that are on) and its layer ([`FaultLayer`]). The correct
//! server is the same assembly with no fault on.

use super::{Fault, FaultLayer, Faults};
use crate::catalog_file::Catalog;
use crate::policy::{Decision, Http, Policy, Requests, Sessions, Stdio};
use crate::rate::RateSpec;
use crate::server::{Server, Settings};
use std::sync::Arc;

/// A server's configuration: the faults it has on, and how it runs (the
/// fields of [`Settings`], which a server keeps).
#[derive(Debug, Clone)]
pub struct Config {
    pub faults: Faults,
    pub control: bool,
    pub rate: Option<RateSpec>,
    pub max_line: usize,
    pub ping_client: bool,
    pub list_changed_after_query: bool,
    pub modern_only: bool,
    pub hold_calls: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config::from(Settings::default())
    }
}

impl From<Settings> for Config {
    fn from(s: Settings) -> Self {
        Config {
            faults: Faults::none(),
            control: s.control,
            rate: s.rate,
            max_line: s.max_line,
            ping_client: s.ping_client,
            list_changed_after_query: s.list_changed_after_query,
            modern_only: s.modern_only,
            hold_calls: s.hold_calls,
        }
    }
}

impl Config {
    /// How the server runs, without its faults.
    pub fn settings(&self) -> Settings {
        Settings {
            control: self.control,
            rate: self.rate,
            max_line: self.max_line,
            ping_client: self.ping_client,
            list_changed_after_query: self.list_changed_after_query,
            modern_only: self.modern_only,
            hold_calls: self.hold_calls,
        }
    }
}

impl Server {
    /// A server of `catalog` with `config`'s faults layered on.
    pub fn new(catalog: Catalog, config: Config) -> Self {
        let settings = config.settings();
        let policy = policy(&config.faults);
        let layer = Arc::new(FaultLayer::new(config.faults));
        Server::assemble(catalog, settings, policy, layer)
    }
}

/// The decisions `faults` bend; reading one notes its fault in the
/// faults' trace, as [`Faults::has`] does.
pub fn policy(faults: &Faults) -> Policy {
    let d = |fault: Fault| {
        let f = faults.clone();
        Decision::new(faults.is_on(fault), move || {
            f.note(fault);
        })
    };
    Policy {
        http: Http {
            origin_unchecked: d(Fault::HttpOriginUnchecked),
            version_header_ignored: d(Fault::HttpVersionHeaderIgnored),
            session_id_honoured: d(Fault::HttpSessionIdHonoured),
            session_optional: d(Fault::HttpSessionOptional),
            unknown_session_400: d(Fault::HttpUnknownSession400),
            name_not_decoded: d(Fault::HttpNameNotDecoded),
            version_mismatch_ok: d(Fault::HttpVersionMismatchOk),
            version_header_optional: d(Fault::HttpVersionHeaderOptional),
            name_unchecked: d(Fault::HttpNameUnchecked),
            param_raw_accepted: d(Fault::HttpParamRawAccepted),
            header_mismatch_500: d(Fault::HttpHeaderMismatch500),
            capability_200: d(Fault::HttpCapability200),
            unknown_method_200: d(Fault::HttpUnknownMethod200),
            param_header_unchecked: d(Fault::HttpParamHeaderUnchecked),
            param_header_expected: d(Fault::HttpParamHeaderExpected),
            get_json: d(Fault::HttpGetJson),
            delete_400: d(Fault::HttpDelete400),
            delete_keeps_session: d(Fault::HttpDeleteKeepsSession),
        },
        stdio: Stdio {
            parse_error_silent: d(Fault::ParseErrorSilent),
            parse_error_exit: d(Fault::ParseErrorExit),
        },
        sessions: Sessions {
            shared_auth: d(Fault::PdSharedAuth),
            bucket_never_refills: d(Fault::RateLimitNoRecovery),
            list_changed_missing: d(Fault::ListChangedMissing),
        },
        requests: Requests {
            meta_unchecked: d(Fault::MetaUnchecked),
            full_schemas_in_list: d(Fault::PdFullSchemasInList),
            invalid_arguments_accepted: d(Fault::ToolInvalidArgsOk),
            calls_unchecked: d(Fault::PdNoAuth),
            missing_argument_rendered: d(Fault::PromptMissingArgOk),
            unknown_level_accepted: d(Fault::SetLevelUnknownOk),
            unknown_ref_answered: d(Fault::CompletionUnknownRefOk),
            undeclared_input_requested: d(Fault::InputRequestsUndeclared),
            missing_query_ok: d(Fault::SearchMissingQueryOk),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::FaultTrace;

    #[test]
    fn a_decision_is_its_fault_and_reading_it_is_traced() {
        let trace = FaultTrace::new();
        let faults = Faults::parse(&["http-get-json"])
            .expect("known")
            .traced(trace.clone());
        let p = policy(&faults);
        assert!(trace.consulted().is_empty(), "building reads nothing");
        assert!(p.http.get_json.on());
        assert!(!p.http.delete_400.on());
        assert_eq!(
            trace.consulted(),
            [Fault::HttpGetJson, Fault::HttpDelete400].into()
        );
    }
}
