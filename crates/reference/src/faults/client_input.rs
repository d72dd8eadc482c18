//! Faults of what a 2026-07-28 tool needs from the client: input asked for
//! although the client did not declare the capability, and a -32021 that
//! does not say which capabilities are missing.

use super::At;
use super::Fault;
use crate::error::RpcError;

declare! {
    InputRequestsUndeclared = "input-requests-undeclared"
        breaks ["MCP26-CAP-01", "MCP26-CAP-02"]:
        "2026-07-28: tools/call of a tool that needs the client's sampling answers an InputRequiredResult asking for it although the request's clientCapabilities does not declare it, instead of -32021";
    RequiredCapabilityNoData = "required-capability-no-data"
        breaks ["MCP26-CAP-01"]:
        "2026-07-28: the -32021 for an undeclared client capability has no data.requiredCapabilities";
}

/// `input-requests-undeclared`: the input is asked for all the same,
/// instead of -32021.
pub fn asks_anyway(ctx: &At<'_, '_>) -> bool {
    ctx.has(Fault::InputRequestsUndeclared)
}

/// `required-capability-no-data`: the -32021 has no
/// `data.requiredCapabilities`.
pub fn rewrite_missing_capability(ctx: &At<'_, '_>, error: &mut RpcError) {
    if ctx.has(Fault::RequiredCapabilityNoData) {
        error.data = None;
    }
}
