//! The JSON-RPC entry point: bytes, split into lines, into the reference
//! server's `handle_line` (what its stdio transport does with each line).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_conform::reference::fuzzing::check_rpc_lines;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = check_rpc_lines(data) {
        panic!("{broken}");
    }
});
