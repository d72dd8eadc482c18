//! The query and filter parsers: the input is `QUERY` alone, or
//! `QUERY\0FILTER-JSON`; a filter that is not JSON is sent as a string.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_conform::reference::fuzzing::check_query_filter;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let (query, filter) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &b""[..]),
    };
    let query = String::from_utf8_lossy(query);
    let filter = if filter.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(filter)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(filter).into_owned()))
    };
    if let Err(broken) = check_query_filter(&query, &filter) {
        panic!("{broken}");
    }
});
