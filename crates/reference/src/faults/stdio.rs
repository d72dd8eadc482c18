//! Faults of the stdio transport: what happens to an unparsable line and
//! what else reaches stdout. Each one is a decision of `Policy::stdio`.
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
