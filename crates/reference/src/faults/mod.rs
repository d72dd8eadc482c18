//! Injectable faults: each one is a small, honest deviation a real
//! implementer could make, so that every scenario can be shown to catch
//! something.
//!
//! The handlers implement the drafts and the MCP specification; the faults
//! live here, beside them, one module per profile. A fault acts in one of
//! two ways:
//! - it rewrites an answer (or an error) after the handler ran: the
//!   `rewrite_*` functions, applied around the handler call by `dispatch`;
//! - it changes a decision inside a handler: the handler calls a named hook
//!   (`tools::entry`, `filter::groups_all`, …) whose correct answer is the
//!   plain behaviour, and only the hook knows which fault bends it.
//!
//! Every hook asks [`Faults::has`] only where its fault can act, so a
//! [`FaultTrace`] names just the conversations a fault can change.

use std::fmt;
use std::str::FromStr;

pub mod base;
pub mod category;
pub mod client_input;
pub mod envelope;
pub mod filter;
pub mod grouping;
pub mod paging;
pub mod primitives;
pub mod progressive;
pub mod search;
pub mod tools;
mod trace;

pub use trace::{FaultTrace, Faults};

use crate::error::RpcError;
use crate::handlers::Ctx;
use serde_json::Value;

/// The faults that only rewrite a handler's answer (or error), applied by
/// `dispatch` right after the handler ran: `params` are the request's.
pub fn rewrite_answer(
    ctx: &mut Ctx<'_>,
    params: Option<&Value>,
    answer: &mut Result<Value, RpcError>,
) {
    match ctx.method {
        "initialize" | "server/discover" | "ping" => base::rewrite_answer(ctx, params, answer),
        "tools/call" => tools::rewrite_call(ctx, answer),
        _ => primitives::rewrite_answer(ctx, params, answer),
    }
}

macro_rules! faults {
    ($($variant:ident = $name:literal : $help:literal,)*) => {
        /// One documented defect.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Fault { $($variant,)* }

        impl Fault {
            pub const ALL: &'static [Fault] = &[$(Fault::$variant,)*];

            pub fn name(self) -> &'static str {
                match self { $(Fault::$variant => $name,)* }
            }

            pub fn help(self) -> &'static str {
                match self { $(Fault::$variant => $help,)* }
            }
        }
    };
}

faults! {
    IgnoreQuery = "ignore-query": "tools/list ignores `query` and returns every tool",
    QueryAsRegex = "query-as-regex": "tools/list compiles `query` as a regex over names and descriptions (`.*` returns everything; a bad regex gives -32603)",
    GroupsAll = "groups-all": "filter.groups requires ALL named groups instead of ANY",
    TagsAny = "tags-any": "filter.tags matches ANY named tag instead of ALL",
    TagsIgnoreGroups = "tags-ignore-groups": "when filter.tags is present, filter.groups is ignored",
    EmptyGroupsMatchNone = "empty-groups-match-none": "filter.groups: [] matches no tool instead of imposing no constraint",
    CursorDropsQuery = "cursor-drops-query": "the next-page cursor forgets the query and filter: page 2+ come from the unfiltered list",
    CursorDuplicates = "cursor-duplicates": "each next page repeats the last item of the previous page",
    SearchPageOverflow = "search-page-overflow": "*/search returns up to 25 items per page instead of 10",
    SearchUnranked = "search-unranked": "*/search returns matches in catalog order (an exact name is not ranked first)",
    SearchMissingQueryOk = "search-missing-query-ok": "*/search without `query` returns every item instead of -32602",
    SearchNotIdentical = "search-not-identical": "tools/search items drop `groups`, so they differ from their tools/list entries",
    UnknownMethodInternalError = "unknown-method-internal-error": "unknown methods get -32603 instead of -32601",
    BadParamsInternalError = "bad-params-internal-error": "params of the wrong JSON type get -32603 instead of -32602",
    ParseErrorExit = "parse-error-exit": "after answering an unparsable line with -32700 the server exits",
    ParseErrorSilent = "parse-error-silent": "an unparsable line on stdio is dropped without an answer",
    WrongId = "wrong-id": "responses to string ids made only of digits come back with a number id",
    TagsListDuplicates = "tags-list-duplicates": "tags/list repeats its first tag at the end",
    PdNoAuth = "pd-no-auth": "tools/call works without fetching the tool's description first",
    PdSharedAuth = "pd-shared-auth": "description authorizations live in a temp file shared by every server process for this catalog",
    PdAuthorizeAny = "pd-authorize-any": "one successful tool_descriptions read authorizes every tool",
    PdMissingSelectionOk = "pd-missing-selection-ok": "a tool_descriptions read without `?tools=` returns every tool instead of MISSING_TOOL_SELECTION",
    PdExtraTools = "pd-extra-tools": "a `?tools=A` read returns A plus one tool that was not asked for",
    PdSelectionCapped = "pd-selection-capped": "a tool_descriptions read serves only the first 4 names of ?tools= (a fifth and later are left out of the answer and not authorized)",
    PdCaseInsensitive = "pd-case-insensitive": "tool_descriptions matches tool names case-insensitively",
    PdFullSchemasInList = "pd-full-schemas-in-list": "tools/list entries carry the full input schema and examples",
    CategoryUnsorted = "category-unsorted": "tool_search results come in catalog order, not by score",
    CategoryNonAsciiUnsorted = "category-non-ascii-unsorted": "tool_search results for a query holding a non-ASCII character come in catalog order, not by score",
    CategoryLimitIgnored = "category-limit-ignored": "tool_search ignores `limit` and returns up to 50 results",
    CategoryCountsHidden = "category-counts-hidden": "list_categories counts tools hidden from the caller",
    ListChangedMissing = "list-changed-missing": "catalog mutations emit no list_changed notifications",
    ErrorCodeString = "error-code-string": "error codes are sent as strings (\"-32601\") instead of integers",
    NoServerInfo = "no-server-info": "the handshake answer carries no serverInfo",
    IdAsFloat = "id-as-float": "numeric ids are echoed as floats (4711 comes back as 4711.0)",
    IdLargeLossy = "id-large-lossy": "integer ids beyond 2^53 are stored as doubles and come back rounded",
    IdLargeDropped = "id-large-dropped": "requests whose integer id is beyond 2^53 are dropped without an answer",
    InvalidCursorOk = "invalid-cursor-ok": "an unreadable cursor restarts the list from the first page instead of -32602",
    CursorTrimmed = "cursor-trimmed": "whitespace around a cursor is trimmed before it is read: ` c ` resumes where `c` does instead of -32602",
    ListNoInputSchema = "list-no-input-schema": "tools/list entries omit inputSchema (only tool_descriptions has it)",
    ResourcesListNoName = "resources-list-no-name": "resources/list entries carry a title but no name",
    StdoutNoise = "stdout-noise": "the stdio server prints a log line on stdout for each unknown method",
    CategoryBadArgsInternalError = "category-bad-args-internal-error": "tool_search argument errors (bad limit, query, tags, unknown category) escape as -32603",
    CategoryMatchesTags = "category-matches-tags": "tool_search's category filter also admits tools carrying a tag of that name",
    CategoryFilterIgnoredWithQuery = "category-filter-ignored-with-query": "tool_search ignores `category` when a `query` is present",
    CategoryTagsAll = "category-tags-all": "tool_search's tags filter requires ALL named tags instead of ANY",
    CategoryTotalIsPage = "category-total-is-page": "tool_search's totalMatches counts the returned page, not every match",
    CategoryShape = "category-shape": "tool_search items lack matchedOn and list_categories gives toolCount as a string",
    CategoryDuplicateMatches = "category-duplicate-matches": "tool_search lists a tool once per field it matched on",
    FilterGroupsRepeatDropsNext = "filter-groups-repeat-drops-next": "a name repeated in filter.groups also drops the name after it (a faulty de-duplication)",
    QueryAstralInternalError = "query-astral-internal-error": "a tools/list query holding a character beyond the Basic Multilingual Plane (an emoji, a rare ideograph) gets -32603",
    QueryDropsFilter = "query-drops-filter": "tools/list ignores `filter` when a `query` is present",
    TagsTrimmed = "tags-trimmed": "filter.tags trims whitespace around each named tag (`tags: [\" stable\"]` selects the tools tagged `stable` instead of none)",
    PdNamesSuffix = "pd-names-suffix": "tool_descriptions resolves a ?tools= name that ends a tool's name (a namespaced lookup: `create` describes `page_create`) instead of giving it an unknown-tool entry",
    CategoryCaseFolded = "category-case-folded": "tool_search compares `category` case-insensitively (`PAGES` selects the category `pages` instead of being unknown)",
    CategoryLimitIgnoredWithCategory = "category-limit-ignored-with-category": "tool_search ignores `limit` when `category` is given without `query` (the category listing path skips the cut)",
    CategoryTagsIgnoredWithoutLimit = "category-tags-ignored-without-limit": "tool_search ignores `tags` when no `limit` is given",
    VersionEcho = "version-echo": "initialize answers with whatever non-empty protocolVersion the client asked for, even one the server does not speak",
    OldRevisionServed = "old-revision-served": "a request whose `_meta` protocol version is an older MCP revision (2024-11-05, 2025-03-26) is served as 2026-07-28 instead of refused with UnsupportedProtocolVersion (-32022)",
    PdAuthFilterScoped = "pd-auth-filter-scoped": "tool_descriptions only describes and authorizes tools in the session's last filtered tools/list",
    SessionVaryingResults = "session-varying-results": "tools/search breaks score ties with a per-process random salt",
    PdAuthReplaced = "pd-auth-replaced": "each tool_descriptions read replaces the session's authorizations instead of adding to them",
    PdFirstNameOnly = "pd-first-name-only": "only the first tool of ?tools=A,B,C is authorized",
    PdResourceUriBare = "pd-resource-uri-bare": "TOOL_DESCRIPTION_REQUIRED names the bare resource URI, without ?tools=NAME",
    PdPlaceholderSchema = "pd-placeholder-schema": "the full description carries the minimal placeholder schema of tools/list",
    PdTerseResource = "pd-terse-resource": "the tool_descriptions resource is listed with a bare name and a one-line description without the workflow",
    SearchCapabilityMissing = "search-capability-missing": "*/search methods answer but no feature declares search: true",
    SearchExposesHidden = "search-exposes-hidden": "tools/search also matches tools hidden from the caller",
    SearchMixedFeatures = "search-mixed-features": "prompts/search and resources/search fill their pages with matching tools from a shared index",
    SearchNonAsciiOffByOne = "search-non-ascii-off-by-one": "*/search pages after the first of a query holding a non-ASCII character start one item early, repeating the previous page's last item",
    SearchCursorDropsQuery = "search-cursor-drops-query": "*/search cursors are not bound to their query: later pages come from the whole unranked list",
    SearchCursorWithoutQueryOk = "search-cursor-without-query-ok": "*/search with a cursor but no query continues from the cursor instead of -32602",
    FilteringCapabilityMissing = "filtering-capability-missing": "groups/list and tags/list answer but capabilities.filtering is not declared",
    FilteringListChangedString = "filtering-list-changed-string": "capabilities.filtering.groups/tags.listChanged is the string \"true\"",
    EmptyTagsMatchNone = "empty-tags-match-none": "filter.tags: [] matches no tool instead of imposing no constraint",
    FilterRevealsHidden = "filter-reveals-hidden": "filter.groups / filter.tags also admit tools hidden from the caller",
    FilterEntriesStripped = "filter-entries-stripped": "tools/list entries under a filter drop their annotations",
    GroupsListDuplicates = "groups-list-duplicates": "groups/list repeats its first group at the end",
    QueryCapabilityMissing = "query-capability-missing": "tools/list honours `query` but capabilities.tools.filtering is not declared",
    QueryRevealsHidden = "query-reveals-hidden": "a tools/list query also matches tools hidden from the caller",
    NoInstructions = "no-instructions": "the handshake answer carries no instructions",
    QueryNulInternalError = "query-nul-internal-error": "a query containing a NUL character (raw or %00) gets -32603",
    MetaUnchecked = "meta-unchecked": "2026-07-28 requests whose `_meta` lacks the protocol version or the client capabilities are served instead of refused with -32602",
    DiscoverAnyVersion = "discover-any-version": "server/discover answers any `_meta` protocol version instead of UnsupportedProtocolVersion (-32022)",
    ResultTypeListsOnly = "result-type-lists-only": "2026-07-28 results carry resultType only on tools/list and server/discover",
    ReadNoCacheHints = "read-no-cache-hints": "2026-07-28 resources/read results carry no ttlMs or cacheScope",
    CacheScopeVaries = "cache-scope-varies": "2026-07-28 list pages after the first say cacheScope private while the first says public",
    ResourceMissingEmpty = "resource-missing-empty": "resources/read of a resource that does not exist returns an empty contents array instead of -32602",
    ListenAckNoSubscriptionId = "listen-ack-no-subscription-id": "the subscriptions/listen acknowledgement carries no io.modelcontextprotocol/subscriptionId",
    ListenSendsUnrequested = "listen-sends-unrequested": "a subscriptions/listen stream also gets the list_changed notifications it did not ask for",
    ToolsListOrderVaries = "tools-list-order-varies": "every second tools/list walk serves its first page in reverse order",
    ToolsListPerConnection = "tools-list-per-connection": "2026-07-28 tools/list leaves out the tools whose name hashes odd with a salt drawn per process (per connection on stdio)",
    ServerPing2026 = "server-ping-2026": "in 2026-07-28 the server sends a ping request of its own before each tools/list answer",
    HttpOriginUnchecked = "http-origin-unchecked": "HTTP: requests from any Origin are served (no DNS-rebinding protection)",
    HttpNotification200 = "http-notification-200": "HTTP: POSTed notifications get 200 with a `{}` body instead of 202",
    HttpVersionHeaderIgnored = "http-version-header-ignored": "HTTP: an unsupported MCP-Protocol-Version header is ignored instead of 400",
    HttpSessionOptional = "http-session-optional": "HTTP: a stateful request without Mcp-Session-Id is served in a throwaway session instead of 400",
    HttpDeleteKeepsSession = "http-delete-keeps-session": "HTTP: DELETE answers 204 but the session lives on",
    HttpUnknownSession400 = "http-unknown-session-400": "HTTP: an unknown or ended Mcp-Session-Id gets 400 instead of 404",
    HttpSessionIdSpaces = "http-session-id-spaces": "HTTP: session ids contain a space (not visible ASCII)",
    HttpGetJson = "http-get-json": "HTTP: GET answers 200 application/json instead of an event stream or 405",
    HttpHeaderMismatch500 = "http-header-mismatch-500": "HTTP (2026-07-28): HeaderMismatchError comes with status 500 instead of 400",
    HttpParamHeaderUnchecked = "http-param-header-unchecked": "HTTP (2026-07-28): Mcp-Param-{Name} headers of x-mcp-header parameters are not checked against the body",
    HttpNameNotDecoded = "http-name-not-decoded": "HTTP (2026-07-28): an Mcp-Name in the Base64 sentinel form is compared undecoded, so the request is refused with HeaderMismatch",
    HttpUnknownMethod200 = "http-unknown-method-200": "HTTP (2026-07-28): an unknown method's -32601 comes with status 200 instead of 404",
    HttpSessionIdHonoured = "http-session-id-honoured": "HTTP (2026-07-28): an Mcp-Session-Id on a 2026-07-28 request is looked up (an unknown one gets 404) instead of ignored",
    HttpVersionMismatchOk = "http-version-mismatch-ok": "HTTP (2026-07-28): an MCP-Protocol-Version header that differs from the body's `_meta` version is not refused",
    HttpDelete400 = "http-delete-400": "HTTP (2026-07-28): DELETE without a session gets 400 instead of 405 Method Not Allowed",
    HttpContentTypeText = "http-content-type-text": "HTTP: JSON answers are labelled Content-Type: text/plain",
    PdDescribesHidden = "pd-describes-hidden": "tool_descriptions describes (and authorizes) tools hidden from the caller's tools/list",
    RateLimitNoRecovery = "rate-limit-no-recovery": "with --rate-limit, a session's spent token bucket never refills: every request after the burst is refused",
    RateLimitInternalError = "rate-limit-internal-error": "with --rate-limit, requests over the limit get a bare -32603 \"Internal error\" that does not say why",
    GroupingCapabilityMissing = "grouping-capability-missing": "`_meta` group membership is served but capabilities.extensions[\"io.modelcontextprotocol/grouping\"] is not declared",
    GroupingListChangedString = "grouping-list-changed-string": "capabilities.extensions[\"io.modelcontextprotocol/grouping\"].listChanged is the string \"true\"",
    GroupingDanglingName = "grouping-dangling-name": "the first tool's `_meta` membership also names `retired_group`, which groups/list does not list",
    GroupingSelfMember = "grouping-self-member": "the first group of groups/list names itself in its `_meta` membership (against this project's nested-groups rule: the extension's current text no longer forbids it)",
    GroupingCycle = "grouping-cycle": "nested groups run in a cycle: the first group nested two deep (g -> p -> q) is also made q's parent (against this project's nested-groups rule: the extension's current text no longer forbids it)",
    GroupingNoPromptMembership = "grouping-no-prompt-membership": "prompts/list entries carry no `_meta` group membership",
    GroupingCursorIgnored = "grouping-cursor-ignored": "groups/list ignores `cursor` and answers the first page again (against this project's rule for a server that pages groups/list)",
    GroupingListChangedUndeclared = "grouping-list-changed-undeclared": "groups listChanged is declared false (extension and filtering.groups), yet group changes still emit notifications/groups/list_changed",
    GroupingMembershipString = "grouping-membership-string": "`_meta` membership is one comma-separated string instead of an array of group names",
    GroupingTaskMembershipTopLevel = "grouping-task-membership-top-level": "tasks/list entries state their groups in a top-level `groups` field instead of `_meta[\"io.modelcontextprotocol/groups\"]`",
    GroupingMembershipUnstable = "grouping-membership-unstable": "every second walk of tools/list drops the `_meta` membership of its pages after the first (a membership cache emptied when a walk starts)",
    ReadWrongUri = "read-wrong-uri": "resources/read answers contents naming another URI (the one read with `#contents` appended)",
    ReadBadBlob = "read-bad-blob": "resources/read gives a resource's contents as a `blob` holding the raw text, which is not base64",
    ReadNoText = "read-no-text": "resources/read contents carry neither `text` nor `blob`",
    ResourceNotFoundInternal = "resource-not-found-internal": "resources/read of an unknown URI gets -32603 instead of -32002 (before 2026-07-28)",
    TemplateNoUriTemplate = "template-no-uri-template": "resources/templates/list entries carry `uri` instead of `uriTemplate`",
    PromptBadRole = "prompt-bad-role": "prompts/get messages have the role `system`, which MCP does not define",
    PromptMissingArgOk = "prompt-missing-arg-ok": "prompts/get without a required argument renders it empty instead of -32602",
    ToolNameSpace = "tool-name-space": "tools/list shows the first tool's name with spaces instead of underscores",
    InputSchemaInvalid = "input-schema-invalid": "tools/list gives the first tool an inputSchema whose `type` is \"objekt\", which JSON Schema does not know",
    OutputSchemaUnmet = "output-schema-unmet": "tools/list declares for every read-only tool an outputSchema requiring a `summary` its structured results never carry",
    UnknownToolResult = "unknown-tool-result": "tools/call of an unknown tool answers a result with isError: true instead of a JSON-RPC error",
    PingNotEmpty = "ping-not-empty": "ping answers {\"status\": \"ok\"} instead of an empty result",
    CancelAnswered = "cancel-answered": "notifications/cancelled for a request id the server never saw is answered with an error (id null)",
    ProgressNotIncreasing = "progress-not-increasing": "tools/call progress notifications repeat the same progress value",
    SetLevelEcho = "set-level-echo": "logging/setLevel answers {\"level\": …} instead of an empty result",
    SetLevelUnknownOk = "set-level-unknown-ok": "logging/setLevel accepts a level that does not exist",
    LogBelowLevel = "log-below-level": "logging/setLevel is acknowledged with a debug-level notifications/message whatever level was set",
    CompletionOverflow = "completion-overflow": "completion/complete answers 101 values (at most 100 are allowed)",
    StatelessNeedsDiscover = "stateless-needs-discover": "2026-07-28: a connection's requests other than server/discover are refused (-32600) until it has sent server/discover (relies on an earlier request)",
    InputRequestsUndeclared = "input-requests-undeclared": "2026-07-28: tools/call of a tool that needs the client's sampling answers an InputRequiredResult asking for it although the request's clientCapabilities does not declare it, instead of -32021",
    RequiredCapabilityNoData = "required-capability-no-data": "2026-07-28: the -32021 for an undeclared client capability has no data.requiredCapabilities",
    LogWithoutLogLevel = "log-without-log-level": "2026-07-28: resources/list is preceded by a notifications/message although the request carries no io.modelcontextprotocol/logLevel",
    NotificationAnswered = "notification-answered": "a notification the server does not handle (an unknown method, or a request method sent without an id) is answered with -32601 (id null)",
    InvalidRequestSilent = "invalid-request-silent": "a message that is not a valid Request (`method` not a string, `jsonrpc` not \"2.0\") is dropped without an answer",
    InvalidRequestNoIdSilent = "invalid-request-no-id-silent": "a message that is not a valid Request and carries no id (`method` not a string) is dropped without an answer, as if it were a notification",
    IdNonAsciiMangled = "id-non-ascii-mangled": "string ids holding non-ASCII characters come back mangled: their UTF-8 bytes read as Latin-1 (`é` becomes `Ã©`)",
    IdZeroDropped = "id-zero-dropped": "a request whose id is 0 is taken for a notification (a falsy id) and gets no answer",
    PingNeedsInitialized = "ping-needs-initialized": "ping before notifications/initialized is refused (-32600) instead of answered",
    CompletionUnknownRefOk = "completion-unknown-ref-ok": "completion/complete for a prompt that does not exist answers an empty completion instead of -32602",
    ToolInvalidArgsOk = "tool-invalid-args-ok": "tools/call with arguments its inputSchema refuses (a required one missing) answers a success: the arguments are not validated",
    StructuredNoText = "structured-no-text": "tools/call results carry structuredContent, but their text content is a sentence instead of the serialized JSON",
    ProgressUnrequested = "progress-unrequested": "tools/call without a progressToken still sends a notifications/progress (with progressToken 0)",
    ReservedCodeUndefined = "reserved-code-undefined": "2026-07-28: tools/call of an unknown tool is refused with -32050, a code of the range the specification reserves that it does not define",
    ResourceNotFoundLegacyCode = "resource-not-found-legacy-code": "2026-07-28: resources/read of a resource that does not exist is refused with -32002, the code 2026-07-28 retires",
    ResultTypeUnknown = "result-type-unknown": "2026-07-28: tools/call results carry resultType \"done\", a value neither the core protocol nor an advertised extension defines",
    InputRequiredOnCompletion = "input-required-on-completion": "2026-07-28: completion/complete answers an InputRequiredResult (asking for a root list), a request that may not carry one",
    InputRequiredHollow = "input-required-hollow": "2026-07-28: prompts/get answers an InputRequiredResult with neither inputRequests nor requestState",
    CompletionsUndeclared = "completions-undeclared": "completion/complete answers, but the completions capability is not declared; a `_meta` key of the discover answer is named `mcp conform` (a space, against the naming rules)",
    ListsPerConnection = "lists-per-connection": "2026-07-28 prompts/list and resources/list leave out the entries whose name hashes odd with a salt drawn per process (per connection on stdio)",
    ServerCancels = "server-cancels": "2026-07-28: tools/list is preceded by a notifications/cancelled naming the request itself, although no subscription is torn down",
    HttpCapability200 = "http-capability-200": "HTTP (2026-07-28): MissingRequiredClientCapability (-32021) comes with status 200 instead of 400",
    HttpVersionHeaderOptional = "http-version-header-optional": "HTTP (2026-07-28): a request without MCP-Protocol-Version is served (the body's `_meta` version is taken) instead of refused with HeaderMismatch",
    HttpNameUnchecked = "http-name-unchecked": "HTTP (2026-07-28): an Mcp-Name header is required but not compared with the body's name",
    HttpParamRawAccepted = "http-param-raw-accepted": "HTTP (2026-07-28): an Mcp-Param-{Name} header holding raw non-ASCII bytes is read as UTF-8 and accepted instead of refused",
    HttpParamHeaderExpected = "http-param-header-expected": "HTTP (2026-07-28): a tools/call whose x-mcp-header parameter is absent or null is refused for lacking its Mcp-Param header",
    HttpXMcpHeaderInvalid = "http-x-mcp-header-invalid": "2026-07-28: the first tool of tools/list marks a `number` parameter with x-mcp-header \"Bad Header\" (not a token, on a type the constraints forbid)",
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fault {0:?}; `--fault help` lists them")]
pub struct UnknownFault(pub String);

impl FromStr for Fault {
    type Err = UnknownFault;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Fault::ALL
            .iter()
            .copied()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFault(s.to_string()))
    }
}

/// The params of each notification of `method` that the request caused, to
/// rewrite in place.
fn notification_params<'a>(
    ctx: &'a mut Ctx<'_>,
    method: &'a str,
) -> impl Iterator<Item = &'a mut Value> + 'a {
    ctx.after
        .iter_mut()
        .filter(move |m| m["method"] == method)
        .filter_map(|m| m.get_mut("params"))
}

/// The text printed by `--fault help`.
pub fn help_text() -> String {
    let width = Fault::ALL.iter().map(|f| f.name().len()).max().unwrap_or(0);
    let mut out = String::from("Faults (--fault NAME, repeatable):\n");
    for f in Fault::ALL {
        out.push_str(&format!("  {:width$}  {}\n", f.name(), f.help()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = BTreeSet::new();
        for f in Fault::ALL {
            assert_eq!(f.name().parse::<Fault>(), Ok(*f));
            assert!(seen.insert(f.name()));
        }
        assert!(Faults::parse(&["nope"]).is_err());
        let set = Faults::parse(&["wrong-id", "pd-no-auth"]).expect("known");
        assert!(set.has(Fault::WrongId) && !set.has(Fault::IgnoreQuery));
        assert_eq!(help_text().lines().count(), Fault::ALL.len() + 1);
    }
}
