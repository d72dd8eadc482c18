//! Faults of the stdio transport: what happens to an unparsable line (a
//! decision of `Policy::stdio`) and what else reaches stdout (the wire
//! layer, [`stdout_before`]).

use super::{Fault, Faults};
use serde_json::Value;

declare! {
    ParseErrorExit = "parse-error-exit"
        breaks ["BASE-ERR-03"]:
        "after answering an unparsable line with -32700 the server exits";
    ParseErrorSilent = "parse-error-silent"
        breaks ["BASE-ERR-03"]:
        "an unparsable line on stdio is dropped without an answer";
    StdoutNoise = "stdout-noise"
        breaks ["BASE-STDIO-01"]:
        "the stdio server prints a log line on stdout for each unknown method";
}

/// What `stdout-noise` writes ahead of an unknown method's -32601.
const NOISE: &[u8] = b"[warn] request for an unknown method\n";

/// The bytes the faults write on stdout ahead of `messages`.
pub(super) fn stdout_before(faults: &Faults, messages: &[Value]) -> Option<&'static [u8]> {
    let unknown_method = |m: &Value| m.pointer("/error/code") == Some(&Value::from(-32601));
    (faults.has(Fault::StdoutNoise) && messages.iter().any(unknown_method)).then_some(NOISE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn noise_goes_only_ahead_of_an_unknown_method() {
        let noisy = Faults::parse(&["stdout-noise"]).expect("known");
        let unknown =
            [json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}})];
        let known = [json!({"jsonrpc": "2.0", "id": 1, "result": {}})];
        assert_eq!(stdout_before(&noisy, &unknown), Some(NOISE));
        assert_eq!(stdout_before(&noisy, &known), None);
        assert_eq!(stdout_before(&Faults::none(), &unknown), None);
    }
}
