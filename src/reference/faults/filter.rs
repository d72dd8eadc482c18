//! Faults of SEP-1300 filtering outside `filter` itself (whose decisions
//! take [`Faults`](super::Faults) in `reference::filter`): `tags/list`.

use super::Fault;
use crate::reference::handlers::Ctx;
use serde_json::Value;

/// `tags-list-duplicates`: tags/list repeats its first tag at the end.
pub fn rewrite_tags(ctx: &Ctx<'_>, items: &mut Vec<Value>) {
    if ctx.has(Fault::TagsListDuplicates) {
        if let Some(first) = items.first().cloned() {
            items.push(first);
        }
    }
}
