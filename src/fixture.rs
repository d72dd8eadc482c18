//! Golden scenarios (`fixture: reference-catalog`) only apply to a server that
//! serves the reference catalog; this decides that from the server's tool names.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::Value;

/// The reference catalog, as shipped.
pub const REFERENCE_CATALOG: &str = include_str!("../fixtures/catalogs/reference.json");

/// Names of the tools an ordinary client sees in the reference catalog.
pub fn reference_tool_names() -> &'static BTreeSet<String> {
    static NAMES: OnceLock<BTreeSet<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let catalog: Value = serde_json::from_str(REFERENCE_CATALOG).unwrap_or(Value::Null);
        catalog["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t.get("audience").is_none())
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect()
    })
}

/// True when `names` (the server's tools/list) is exactly the reference catalog.
pub fn serves_reference_catalog(names: &[String]) -> bool {
    let served: BTreeSet<String> = names.iter().cloned().collect();
    !served.is_empty() && &served == reference_tool_names()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_catalog_matches_itself_only() {
        let names: Vec<String> = reference_tool_names().iter().cloned().collect();
        assert_eq!(names.len(), 106);
        assert!(serves_reference_catalog(&names));
        assert!(!serves_reference_catalog(&names[1..]));
        assert!(!serves_reference_catalog(&[]));
    }
}
