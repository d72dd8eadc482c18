//! Cursor decoding: forged cursors against every paginated method, and
//! round-trip / tamper checks of issued ones.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_conform::reference::fuzzing::check_cursor;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = check_cursor(data) {
        panic!("{broken}");
    }
});
