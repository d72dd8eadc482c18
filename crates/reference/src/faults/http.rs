//! Faults of the Streamable HTTP transport: status codes, headers and
//! sessions. Most are decisions of `Policy::http`, read by `http/`; those
//! that rewrite a response on its way out act on the wire layer (the
//! functions below).

use super::{Fault, Faults};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::borrow::Cow;

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

/// A POST's response as the faults send it: `http-notification-200`
/// answers an accepted message with 200 `{}`, `http-content-type-text`
/// labels JSON as text.
pub(super) fn post_response(faults: &Faults, mut response: Response) -> Response {
    let ok_for_notes = faults.has(Fault::HttpNotification200);
    let text_label = faults.has(Fault::HttpContentTypeText);
    if ok_for_notes && response.status() == StatusCode::ACCEPTED {
        response = (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            "{}",
        )
            .into_response();
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if text_label && is_json {
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
    }
    response
}

/// The session id handed out: `http-session-id-spaces` puts a space in
/// its middle.
pub(super) fn session_id_out(faults: &Faults, key: &str) -> String {
    if faults.has(Fault::HttpSessionIdSpaces) {
        let mid = key.len() / 2;
        match (key.get(..mid), key.get(mid..)) {
            (Some(a), Some(b)) => format!("{a} {b}"),
            _ => key.to_owned(),
        }
    } else {
        key.to_owned()
    }
}

/// The key a session id header names, with the space taken out again.
pub(super) fn session_id_in<'k>(faults: &Faults, header: &'k str) -> Cow<'k, str> {
    if faults.has(Fault::HttpSessionIdSpaces) {
        Cow::Owned(header.replace(' ', ""))
    } else {
        Cow::Borrowed(header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spaced_session_id_reads_back_as_its_key() {
        let spaced = Faults::parse(&["http-session-id-spaces"]).expect("known");
        let shown = session_id_out(&spaced, "abcd1234");
        assert_eq!(shown, "abcd 1234");
        assert_eq!(session_id_in(&spaced, &shown), "abcd1234");
        assert_eq!(session_id_out(&Faults::none(), "abcd1234"), "abcd1234");
    }

    #[test]
    fn an_accepted_message_gets_200_and_json_is_labelled_text() {
        let ok = Faults::parse(&["http-notification-200"]).expect("known");
        let r = post_response(&ok, StatusCode::ACCEPTED.into_response());
        assert_eq!(r.status(), StatusCode::OK);
        let text = Faults::parse(&["http-content-type-text"]).expect("known");
        let r = post_response(
            &text,
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/json")],
                "{}",
            )
                .into_response(),
        );
        assert_eq!(
            r.headers()[header::CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
        let r = post_response(&Faults::none(), StatusCode::ACCEPTED.into_response());
        assert_eq!(r.status(), StatusCode::ACCEPTED);
    }
}
