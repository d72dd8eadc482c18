//! The boundaries ARCHITECTURE.md draws, kept: the reference server depends
//! on no crate of this workspace but the protocol crate, and where it reads
//! the same text as the harness it has its own reading, which agrees with
//! the harness's on the text's own examples.

use std::path::Path;

use mcp_conform::reference::http::param_values;
use mcp_conform::transport::param_headers;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The workspace crates a manifest names among its dependencies.
fn workspace_dependencies(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("mcp-conform-"))
        .filter_map(|line| line.split(['.', ' ', '=']).next())
        .map(str::to_owned)
        .collect()
}

fn the_reference_server_depends_on_the_protocol_crate_only() {
    let manifest = read("crates/reference/Cargo.toml");
    assert_eq!(
        workspace_dependencies(&manifest),
        vec!["mcp-conform-protocol".to_owned()],
        "crates/reference/Cargo.toml may name no workspace crate but the protocol crate"
    );
    let protocol = read("crates/protocol/Cargo.toml");
    assert!(
        workspace_dependencies(&protocol).is_empty(),
        "the protocol crate depends on no workspace crate"
    );
}

fn the_workspace_members_are_the_crates_architecture_md_lists() {
    let manifest = read("Cargo.toml");
    let architecture = read("ARCHITECTURE.md");
    for member in ["crates/protocol", "crates/reference"] {
        assert!(
            manifest.contains(&format!("\"{member}\"")),
            "{member} is not a workspace member"
        );
        assert!(
            architecture.contains(&format!("`{member}`")),
            "ARCHITECTURE.md does not map {member}"
        );
    }
}

/// MCP 2026-07-28, Basic, Transports, Streamable HTTP, Value Encoding: the
/// "Encoding examples" table. The harness encodes each original value into
/// the header the text shows, and the reference server decodes that header
/// back to the original, each with its own code.
fn both_sides_read_the_sentinel_examples_of_the_text_alike() {
    let examples = [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ];
    for (original, header) in examples {
        assert_eq!(
            param_headers::encode_value(original),
            header,
            "harness encoding {original:?}"
        );
        assert_eq!(
            param_headers::decode_value(header).as_deref(),
            Some(original),
            "harness decoding {header}"
        );
        assert_eq!(
            param_values::decoded(header).as_deref(),
            Some(original),
            "reference server decoding {header}"
        );
    }
}

/// The text's `execute_sql` example: both sides find the one header a call
/// must carry, with the same value.
fn both_sides_mirror_the_texts_tool_example_alike() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"}
        },
        "required": ["region", "query"]
    });
    let arguments = serde_json::json!({"region": "us-west1", "query": "SELECT * FROM users"});
    let expected = vec![("Region".to_owned(), "us-west1".to_owned())];
    assert_eq!(
        param_headers::annotated_values(&schema, Some(&arguments)),
        expected
    );
    assert_eq!(param_values::expected(&schema, Some(&arguments)), expected);
}

pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        the_reference_server_depends_on_the_protocol_crate_only,
        the_workspace_members_are_the_crates_architecture_md_lists,
        both_sides_read_the_sentinel_examples_of_the_text_alike,
        both_sides_mirror_the_texts_tool_example_alike,
    ]
}
