//! Faults of the Streamable HTTP transport: status codes, headers and
//! sessions. Each one is a decision of `Policy::http`, read by `http/`.
declare! {
    HttpOriginUnchecked = "http-origin-unchecked"
        breaks ["HTTP-ORIGIN-01"]:
        "HTTP: requests from any Origin are served (no DNS-rebinding protection)";
    HttpNotification200 = "http-notification-200"
        breaks ["HTTP-NOTIF-01"]:
        "HTTP: POSTed notifications get 200 with a `{}` body instead of 202";
    HttpVersionHeaderIgnored = "http-version-header-ignored"
        breaks ["HTTP-VER-01"]:
        "HTTP: an unsupported MCP-Protocol-Version header is ignored instead of 400";
    HttpSessionOptional = "http-session-optional"
        breaks ["HTTP-SESS-02"]:
        "HTTP: a stateful request without Mcp-Session-Id is served in a throwaway session instead of 400";
    HttpDeleteKeepsSession = "http-delete-keeps-session"
        breaks ["HTTP-SESS-03"]:
        "HTTP: DELETE answers 204 but the session lives on";
    HttpUnknownSession400 = "http-unknown-session-400"
        breaks ["HTTP-SESS-03", "HTTP-SESS-04"]:
        "HTTP: an unknown or ended Mcp-Session-Id gets 400 instead of 404";
    HttpSessionIdSpaces = "http-session-id-spaces"
        breaks ["HTTP-SESS-01"]:
        "HTTP: session ids contain a space (not visible ASCII)";
    HttpGetJson = "http-get-json"
        breaks ["HTTP-GET-01"]:
        "HTTP: GET answers 200 application/json instead of an event stream or 405";
    HttpHeaderMismatch500 = "http-header-mismatch-500"
        breaks ["HTTP-HDR-01"]:
        "HTTP (2026-07-28): HeaderMismatchError comes with status 500 instead of 400";
    HttpParamHeaderUnchecked = "http-param-header-unchecked"
        breaks ["HTTP-HDR-02"]:
        "HTTP (2026-07-28): Mcp-Param-{Name} headers of x-mcp-header parameters are not checked against the body";
    HttpNameNotDecoded = "http-name-not-decoded"
        breaks ["HTTP-HDR-03"]:
        "HTTP (2026-07-28): an Mcp-Name in the Base64 sentinel form is compared undecoded, so the request is refused with HeaderMismatch";
    HttpUnknownMethod200 = "http-unknown-method-200"
        breaks ["HTTP-METHOD-01"]:
        "HTTP (2026-07-28): an unknown method's -32601 comes with status 200 instead of 404";
    HttpSessionIdHonoured = "http-session-id-honoured"
        breaks ["HTTP-STATELESS-01"]:
        "HTTP (2026-07-28): an Mcp-Session-Id on a 2026-07-28 request is looked up (an unknown one gets 404) instead of ignored";
    HttpVersionMismatchOk = "http-version-mismatch-ok"
        breaks ["HTTP-VER-02"]:
        "HTTP (2026-07-28): an MCP-Protocol-Version header that differs from the body's `_meta` version is not refused";
    HttpDelete400 = "http-delete-400"
        breaks ["HTTP-STATELESS-01"]:
        "HTTP (2026-07-28): DELETE without a session gets 400 instead of 405 Method Not Allowed";
    HttpContentTypeText = "http-content-type-text"
        breaks ["HTTP-CT-01"]:
        "HTTP: JSON answers are labelled Content-Type: text/plain";
    HttpCapability200 = "http-capability-200"
        breaks ["HTTP-CAP-01"]:
        "HTTP (2026-07-28): MissingRequiredClientCapability (-32021) comes with status 200 instead of 400";
    HttpVersionHeaderOptional = "http-version-header-optional"
        breaks ["HTTP-VER-03"]:
        "HTTP (2026-07-28): a request without MCP-Protocol-Version is served (the body's `_meta` version is taken) instead of refused with HeaderMismatch";
    HttpNameUnchecked = "http-name-unchecked"
        breaks ["HTTP-HDR-01"]:
        "HTTP (2026-07-28): an Mcp-Name header is required but not compared with the body's name";
    HttpParamRawAccepted = "http-param-raw-accepted"
        breaks ["HTTP-HDR-04"]:
        "HTTP (2026-07-28): an Mcp-Param-{Name} header holding raw non-ASCII bytes is read as UTF-8 and accepted instead of refused";
    HttpParamHeaderExpected = "http-param-header-expected"
        breaks ["HTTP-HDR-05"]:
        "HTTP (2026-07-28): a tools/call whose x-mcp-header parameter is absent or null is refused for lacking its Mcp-Param header";
}
