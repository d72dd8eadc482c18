//! Resource URI parsing: `resources/read` of the input as a URI (the
//! `tool_descriptions` `?tools=` list and the catalog's own resources).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_conform::reference::fuzzing::check_resource_uri;

fuzz_target!(|data: &[u8]| {
    let uri = String::from_utf8_lossy(data);
    if let Err(broken) = check_resource_uri(&uri) {
        panic!("{broken}");
    }
});
