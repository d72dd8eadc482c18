//! Faults of progressive disclosure: the `tool_descriptions` resource as it
//! is listed and read, and the per-session authorization `tools/call`
//! checks.

use super::Fault;
use super::{At, AtMut};
use crate::catalog_file::Tool;
use crate::error::RpcError;
use crate::live::{Snapshot, TOOL_DESCRIPTIONS_URI};
use serde_json::{json, Map, Value};

declare! {
    PdNoAuth = "pd-no-auth"
        breaks ["PD-AUTH-01"]:
        "tools/call works without fetching the tool's description first";
    PdSharedAuth = "pd-shared-auth"
        breaks ["PD-AUTH-04", "X-05"]:
        "description authorizations live in a temp file shared by every server process for this catalog";
    PdAuthorizeAny = "pd-authorize-any"
        breaks ["PD-AUTH-05"]:
        "one successful tool_descriptions read authorizes every tool";
    PdMissingSelectionOk = "pd-missing-selection-ok"
        breaks ["PD-READ-04"]:
        "a tool_descriptions read without `?tools=` returns every tool instead of MISSING_TOOL_SELECTION";
    PdExtraTools = "pd-extra-tools"
        breaks ["PD-READ-02"]:
        "a `?tools=A` read returns A plus one tool that was not asked for";
    PdSelectionCapped = "pd-selection-capped"
        breaks ["PD-READ-02"]:
        "a tool_descriptions read serves only the first 4 names of ?tools= (a fifth and later are left out of the answer and not authorized)";
    PdCaseInsensitive = "pd-case-insensitive"
        breaks ["PD-READ-03"]:
        "tool_descriptions matches tool names case-insensitively";
    PdNamesSuffix = "pd-names-suffix"
        breaks ["PD-READ-03"]:
        "tool_descriptions resolves a ?tools= name that ends a tool's name (a namespaced lookup: `create` describes `page_create`) instead of giving it an unknown-tool entry";
    PdAuthFilterScoped = "pd-auth-filter-scoped"
        breaks ["X-04"]:
        "tool_descriptions only describes and authorizes tools in the session's last filtered tools/list";
    PdAuthReplaced = "pd-auth-replaced"
        breaks ["PD-AUTH-02", "PD-AUTH-03"]:
        "each tool_descriptions read replaces the session's authorizations instead of adding to them";
    PdFirstNameOnly = "pd-first-name-only"
        breaks ["PD-AUTH-02"]:
        "only the first tool of ?tools=A,B,C is authorized";
    PdResourceUriBare = "pd-resource-uri-bare"
        breaks ["PD-AUTH-02"]:
        "TOOL_DESCRIPTION_REQUIRED names the bare resource URI, without ?tools=NAME";
    PdPlaceholderSchema = "pd-placeholder-schema"
        breaks ["PD-READ-01"]:
        "the full description carries the minimal placeholder schema of tools/list";
    PdTerseResource = "pd-terse-resource"
        breaks ["PD-RES-01"]:
        "the tool_descriptions resource is listed with a bare name and a one-line description without the workflow";
    PdDescribesHidden = "pd-describes-hidden"
        breaks ["PD-READ-05", "PD-AUTH-05"]:
        "tool_descriptions describes (and authorizes) tools hidden from the caller's tools/list";
}

/// What `pd-terse-resource` lists the resource as.
const TERSE_NAME: &str = "Schemas";
const TERSE_DESCRIPTION: &str = "Full schemas on demand.";

/// How many names `pd-selection-capped` serves.
const SELECTION_CAP: usize = 4;

/// `pd-terse-resource`: the resource (or its template) is listed with a
/// bare name and a description without the workflow.
pub fn rewrite_descriptions_entry(ctx: &At<'_, '_>, entry: &mut Value) {
    if ctx.has(Fault::PdTerseResource) {
        entry["name"] = json!(TERSE_NAME);
        entry["description"] = json!(TERSE_DESCRIPTION);
    }
}

/// `pd-selection-capped`: only the first names of `?tools=` are served.
pub fn rewrite_selection(ctx: &At<'_, '_>, names: &mut Vec<String>) {
    if ctx.has(Fault::PdSelectionCapped) {
        names.truncate(SELECTION_CAP);
    }
}

/// `pd-missing-selection-ok`: a read without `?tools=` describes every
/// tool; `None`: it is refused.
pub fn selection_when_missing(ctx: &At<'_, '_>) -> Option<Vec<String>> {
    ctx.has(Fault::PdMissingSelectionOk)
        .then(|| ctx.snap.tools().map(|t| t.name.to_string()).collect())
}

/// The tool a faulty lookup finds for a `?tools=` name, given the one the
/// catalog's visible tools hold (`found`): ignoring case
/// (`pd-case-insensitive`), by a name's last part (`pd-names-suffix`), only
/// within the last filtered view (`pd-auth-filter-scoped`), or among hidden
/// tools too (`pd-describes-hidden`).
pub fn rewrite_lookup<'s>(
    ctx: &At<'_, '_>,
    snap: &'s Snapshot,
    name: &str,
    found: Option<u32>,
) -> Option<&'s Tool> {
    let doc = if ctx.has(Fault::PdCaseInsensitive) {
        snap.docs_ignoring_case(name).first().copied()
    } else if ctx.has(Fault::PdNamesSuffix) && found.is_none() {
        // A lookup of namespaced names by their last part.
        snap.tools()
            .find(|t| t.name.ends_with(name))
            .and_then(|t| snap.doc(&t.name))
    } else {
        found
    };
    let doc = doc.filter(|_| {
        !ctx.has(Fault::PdAuthFilterScoped)
            || ctx.session.view.as_ref().is_none_or(|v| v.contains(name))
    });
    doc.map(|d| snap.tool(d)).or_else(|| {
        ctx.has(Fault::PdDescribesHidden)
            .then(|| snap.catalog.tools.iter().find(|t| &*t.name == name))
            .flatten()
    })
}

/// `pd-placeholder-schema`: the full description carries the minimal
/// schema of tools/list.
pub fn rewrite_description(ctx: &At<'_, '_>, description: &mut Value) {
    if ctx.has(Fault::PdPlaceholderSchema) {
        description["inputSchema"] = crate::handlers::minimal_schema();
    }
}

/// `pd-extra-tools`: the answer describes one tool more than was asked for.
pub fn rewrite_descriptions(
    ctx: &At<'_, '_>,
    snap: &Snapshot,
    out: &mut Map<String, Value>,
    describe: impl Fn(&Tool) -> Value,
) {
    if ctx.has(Fault::PdExtraTools) {
        if let Some(extra) = snap.tools().find(|t| !out.contains_key(&*t.name)) {
            out.insert(extra.name.to_string(), describe(extra));
        }
    }
}

/// The authorizations a read grants, as faults grant them: the first name
/// only (`pd-first-name-only`), in place of the earlier ones
/// (`pd-auth-replaced`), every tool at once (`pd-authorize-any`), or in a
/// file every server process shares (`pd-shared-auth`).
pub fn rewrite_authorization(ctx: &mut AtMut<'_, '_>, names: &mut Vec<String>) {
    if ctx.has(Fault::PdFirstNameOnly) {
        names.truncate(1);
    }
    if ctx.has(Fault::PdAuthReplaced) {
        ctx.session.authorized.clear();
    }
    if ctx.has(Fault::PdAuthorizeAny) {
        ctx.session.authorized_all = true;
    }
    if let Some(shared) = &ctx.server.shared_auth {
        shared.add(names);
    }
}

/// `pd-no-auth`: calls are not checked at all.
pub fn calls_unchecked(ctx: &At<'_, '_>) -> bool {
    ctx.has(Fault::PdNoAuth)
}

/// Whether a faulty server finds `name` authorized (`None`: it asks the
/// session, as the correct one does): from the shared file
/// (`pd-shared-auth`), or because any read authorized everything
/// (`pd-authorize-any`).
pub fn authorized(ctx: &At<'_, '_>, name: &str) -> Option<bool> {
    match &ctx.server.shared_auth {
        Some(shared) => Some(shared.contains(name)),
        None => ctx.session.authorized_all.then_some(true),
    }
}

/// `pd-resource-uri-bare`: TOOL_DESCRIPTION_REQUIRED names the resource
/// without `?tools=NAME`.
pub fn rewrite_auth_error(ctx: &At<'_, '_>, e: &mut RpcError) {
    if ctx.has(Fault::PdResourceUriBare) {
        if let Some(uri) = e.data.as_mut().and_then(|d| d.get_mut("resource_uri")) {
            *uri = json!(TOOL_DESCRIPTIONS_URI);
        }
    }
}
