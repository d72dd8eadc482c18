use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::handshake::{modern_refusal, normalise_discover};
use super::incoming::MAX_NOTIFICATIONS;
use super::*;
use crate::transport::stdio::StdioConnection;
use crate::transport::{HttpConnection, HttpSpec, StdioSpec};

fn note(size: usize) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "x".repeat(size)}})
}

/// A session of `era` with the server `spec` starts.
fn over_stdio(spec: &StdioSpec, era: &str) -> Session {
    let conn = StdioConnection::spawn(spec).expect("the server runs");
    Session::new(
        "main",
        Connection::Stdio(Box::new(conn)),
        Era::new(era),
        Duration::from_secs(1),
        Transcript::new(),
    )
}

/// A session with `cat` for a server: every message comes back as sent.
async fn session() -> Session {
    over_stdio(&StdioSpec::new("cat", Vec::new()), "2025-11-25")
}

/// A 2025-11-25 session over Streamable HTTP to `url`.
fn over_http(url: String) -> Session {
    let conn = HttpConnection::new(&HttpSpec::new(url), false, "2025-11-25").expect("a client");
    Session::new(
        "main",
        Connection::Http(Box::new(conn), None),
        Era::new("2025-11-25"),
        Duration::from_secs(5),
        Transcript::new(),
    )
}

/// An HTTP/1.1 answer with `body`.
fn http_reply(status: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// An HTTP server on loopback that answers every POST with `status` and
/// a plain-text `body`, the way many servers refuse an unparsable body.
async fn refusing_http_server(status: &'static str, body: &'static str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = vec![0u8; 4096];
            let _ = socket.read(&mut request).await;
            let answer = http_reply(status, "text/plain", body);
            let _ = socket.write_all(answer.as_bytes()).await;
        }
    });
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn a_post_refused_without_a_json_rpc_answer_ends_the_wait_at_once() {
    let url = refusing_http_server("415 Unsupported Media Type", "cannot parse the body").await;
    let mut s = over_http(url);
    let started = Instant::now();
    let answer = s.send_raw("{\"jsonrpc\": ", true, None).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the wait went on after the POST's whole answer: {:?}",
        started.elapsed()
    );
    let message = answer.expect_err("no answer").to_string();
    assert!(
        message.contains("415 Unsupported Media Type and no JSON-RPC response")
            && message.contains("cannot parse the body"),
        "{message}"
    );
}

#[tokio::test]
async fn a_late_second_answer_to_an_earlier_scenario_is_seen_as_one() {
    let mut s = session().await;
    s.answered_ids.insert(json!(3).to_string());
    s.answered_ids.insert(json!(7).to_string());
    s.adopt("next", Transcript::new());
    let late = json!({"jsonrpc": "2.0", "id": 3, "result": {}});
    assert!(s.stray(Some(&json!(9)), &late).is_some());
    assert_eq!(s.violations.len(), 1, "a second answer is a violation");
    // The scenario's own string id "7" answered as the number 7 is its
    // answer, to be judged by its expect.
    let own = json!({"jsonrpc": "2.0", "id": 7, "result": {}});
    assert!(s.stray(Some(&json!("7")), &own).is_none());
    s.close().await;
}

#[tokio::test]
async fn an_answer_to_an_earlier_scenarios_request_is_never_the_current_answer() {
    let mut s = session().await;
    // The earlier scenario sent 10 and 11 (11 a sentinel, answered) and
    // ended before 10's answer came.
    for id in [10, 11] {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        s.send_raw(&msg.to_string(), false, None)
            .await
            .expect("cat reads");
    }
    s.note_answered(&json!(11));
    s.adopt("next", Transcript::new());
    let late = json!({"jsonrpc": "2.0", "id": 10, "result": {}});
    let reason = s.stray(Some(&json!(12)), &late).expect("not 12's answer");
    assert!(reason.contains("late answer to request 10"), "{reason}");
    assert!(s.violations.is_empty(), "a late answer is no violation");
    assert!(
        s.stray(None, &late).is_some(),
        "nor is it a raw message's answer"
    );
    assert_eq!(s.violations.len(), 1, "its second copy is a second answer");
    let sentinel_again = json!({"jsonrpc": "2.0", "id": 11, "result": {}});
    assert!(s.stray(Some(&json!(12)), &sentinel_again).is_some());
    assert_eq!(s.violations.len(), 2, "so is a sentinel's second answer");
    s.close().await;
}

#[tokio::test]
async fn a_server_that_answers_with_one_wrong_id_gets_a_wrong_id_answer_each_time() {
    let mut s = session().await;
    // `cat` hands back what is sent: the answer of a server whose answers
    // all carry id 987654.
    let wrong = json!({"jsonrpc": "2.0", "id": 987654, "result": {}});
    for (scenario, awaited) in [("first", 5), ("next", 6)] {
        s.adopt(scenario, Transcript::new());
        s.send_raw(&wrong.to_string(), false, None)
            .await
            .expect("cat reads");
        let answer = s
            .await_response(Some(&json!(awaited)), "ping", Duration::from_secs(2))
            .await
            .unwrap_or_else(|e| panic!("{scenario}: {e}"));
        assert_eq!(answer["id"], 987654, "{scenario}: the wrong-id answer");
    }
    assert!(s.violations.is_empty(), "never a second answer");
    s.close().await;
}

#[tokio::test]
async fn answers_with_id_null_are_never_second_answers() {
    let mut s = session().await;
    let parse_error =
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "x"}});
    s.note_answered(&json!(null));
    s.adopt("next", Transcript::new());
    assert!(
        s.stray(None, &parse_error).is_none(),
        "the raw message's own answer"
    );
    s.note_answered(&json!(null));
    assert!(s.stray(None, &parse_error).is_none(), "and the next one's");
    assert!(s.violations.is_empty());
    s.close().await;
}

#[tokio::test]
async fn a_raw_message_may_reuse_an_earlier_scenarios_id() {
    let mut s = session().await;
    s.send_raw(
        r#"{"jsonrpc": "2.0", "id": 4711, "method": "ping"}"#,
        false,
        None,
    )
    .await
    .expect("cat reads");
    s.note_answered(&json!(4711));
    s.adopt("next", Transcript::new());
    s.send_raw(
        r#"{"jsonrpc": "2.0", "id": 4711, "method": "ping"}"#,
        false,
        None,
    )
    .await
    .expect("cat reads");
    let answer = json!({"jsonrpc": "2.0", "id": 4711, "result": {}});
    assert!(s.stray(None, &answer).is_none(), "its own answer");
    assert!(s.violations.is_empty());
    s.close().await;
}

#[tokio::test]
async fn a_request_on_a_later_line_of_a_raw_write_is_known_when_its_answer_comes_late() {
    let mut s = session().await;
    // A notification and a ping on one write (core/cancel-unknown): the
    // ping's answer that comes after the scenario ended was taken for the
    // next scenario's answer.
    s.send_raw(
        "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/cancelled\", \"params\": {\"requestId\": \"x\"}}\n{\"jsonrpc\": \"2.0\", \"id\": \"after-cancel\", \"method\": \"ping\"}",
        false,
        None,
    )
    .await
    .expect("cat reads");
    s.adopt("next", Transcript::new());
    let late = json!({"jsonrpc": "2.0", "id": "after-cancel", "result": {}});
    assert_eq!(
        s.stray(Some(&json!(5)), &late).as_deref(),
        Some("late answer to request \"after-cancel\" of an earlier scenario ignored")
    );
    s.close().await;
}

#[tokio::test]
async fn a_warm_session_never_sends_a_request_id_twice() {
    let mut s = session().await;
    assert_eq!(s.fresh_id(), json!(1));
    s.send_request("tools/list", None, Some(json!(2)), false)
        .await
        .expect("cat reads");
    s.adopt("next", Transcript::new());
    let later: Vec<Value> = (0..3).map(|_| s.fresh_id()).collect();
    assert_eq!(later, vec![json!(3), json!(4), json!(5)]);
    s.close().await;
}

#[tokio::test]
async fn large_notifications_are_bounded_by_bytes() {
    let mut s = session().await;
    for _ in 0..500 {
        s.keep_notification(note(16 * 1024));
    }
    let kept: usize = s
        .notification_log
        .iter()
        .map(transcript::approx_heap_bytes)
        .sum();
    assert!(kept <= MAX_NOTIFICATION_BYTES, "{kept}");
    assert!(
        s.notification_log.len() < 70,
        "{}",
        s.notification_log.len()
    );
    assert_eq!(s.notification_log.len() + s.notifications_dropped, 500);
    // Once dropping started, later small ones are dropped too: the log stays a prefix.
    s.keep_notification(note(1));
    assert_eq!(s.notification_log.len() + s.notifications_dropped, 501);
    s.close().await;
    let (entries, _) = s.transcript.entries();
    let texts: Vec<String> = entries.iter().map(|e| e.message.to_string()).collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("notification limit reached")),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.contains("notifications dropped")),
        "{texts:?}"
    );
}

#[tokio::test]
async fn a_timeout_quotes_what_the_server_wrote_instead_of_an_answer() {
    let mut s = session().await;
    // `cat` echoes the line back: not a JSON-RPC message.
    let err = s
        .send_raw("HTTP error page", true, Some(Duration::from_millis(300)))
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("no answer to the raw message within 300 ms")
            && err.contains(": \"HTTP error page\""),
        "{err}"
    );
    s.close().await;
}

async fn session_2026() -> Session {
    over_stdio(&StdioSpec::new("cat", Vec::new()), era::V2026_07_28)
}

#[tokio::test]
async fn a_2026_server_request_is_recorded_not_answered() {
    let mut s = session_2026().await;
    let ping = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"});
    assert_eq!(s.dispatch(ping).await, Ok(None));
    assert_eq!(s.violations.len(), 1);
    assert!(s.violations[0].reason.starts_with(SERVER_REQUEST_2026));
    let (entries, _) = s.transcript.entries();
    assert!(
        entries.iter().all(|e| e.direction != Direction::Sent),
        "the harness answered the server's request"
    );
    // An error without an id is a valid 2026-07-28 answer, not a violation.
    let idless = json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "x"}});
    assert_eq!(s.dispatch(idless.clone()).await, Ok(Some(idless)));
    assert_eq!(s.violations.len(), 1);
    s.close().await;
}

#[test]
fn a_modern_discover_error_is_a_refusal_naming_the_offer() {
    let r = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "no",
        "data": {"supported": ["2030-01-01"], "requested": "2026-07-28"}}});
    let Some(SessionError::ModernRefusal {
        code, supported, ..
    }) = modern_refusal("server/discover", &r)
    else {
        panic!("not a refusal");
    };
    assert_eq!((code, supported), (-32022, vec!["2030-01-01".to_string()]));
    let text = modern_refusal("server/discover", &r)
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        text.contains("UnsupportedProtocolVersion (-32022)") && text.contains("2030-01-01"),
        "{text}"
    );
    let legacy = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}});
    assert!(modern_refusal("server/discover", &legacy).is_none());
}

#[test]
fn discover_answers_are_not_given_a_protocol_version() {
    let r = json!({"supportedVersions": ["2026-07-28"],
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}});
    let n = normalise_discover(&r);
    assert!(n.get("protocolVersion").is_none());
    assert_eq!(n["serverInfo"]["name"], "s");
}

#[tokio::test]
async fn small_notifications_are_bounded_by_count() {
    let mut s = session().await;
    for _ in 0..MAX_NOTIFICATIONS + 10 {
        s.keep_notification(note(10));
    }
    assert_eq!(s.notification_log.len(), MAX_NOTIFICATIONS);
    assert_eq!(s.notifications_dropped, 10);
    s.close().await;
}

#[tokio::test]
async fn two_sessions_in_one_process_carry_their_own_client_fault() {
    use super::client_fault::ClientFault;
    let faulty = session()
        .await
        .with_client_fault(Some(ClientFault::DuplicateId));
    let mut sessions = [faulty, session().await];
    for s in &mut sessions {
        s.send_request("tools/list", None, None, false)
            .await
            .expect("cat reads");
    }
    let sent: Vec<usize> = sessions
        .iter()
        .map(|s| {
            let (entries, _) = s.transcript.entries();
            entries
                .iter()
                .filter(|e| e.direction == Direction::Sent)
                .count()
        })
        .collect();
    assert_eq!(
        sent,
        vec![2, 1],
        "the fault doubles only its session's request"
    );
    for s in &mut sessions {
        s.close().await;
    }
}

/// A session with a server that runs `script` (sh) on its stdin.
fn scripted(script: &str) -> Session {
    let spec = StdioSpec::new("sh", vec!["-c".to_string(), script.to_string()]);
    over_stdio(&spec, "2025-11-25")
}

/// A ping sent and left in flight, sent within a second.
async fn ping_in_flight(s: &mut Session) -> InFlight {
    s.start_request("ping", None, false, Duration::from_secs(1))
        .await
        .expect("the ping is sent")
        .expect("sent within a second")
}

#[tokio::test]
async fn answers_in_flight_are_kept_for_their_own_wait_whatever_order_they_come_in() {
    // Reads two requests, answers the second first, then the first twice.
    let mut s = scripted(
        r#"read a; read b
        echo '{"jsonrpc":"2.0","id":2,"result":{"n":2}}'
        echo '{"jsonrpc":"2.0","id":1,"result":{"n":1}}'
        echo '{"jsonrpc":"2.0","id":1,"result":{"n":1}}'
        sleep 5"#,
    );
    let first = ping_in_flight(&mut s).await;
    let second = ping_in_flight(&mut s).await;
    let deadline = Instant::now() + Duration::from_secs(2);
    let (one, _) = s.finish_request(&first, deadline).await.unwrap().unwrap();
    assert_eq!(one["result"]["n"], 1, "{one}");
    let (two, _) = s.finish_request(&second, deadline).await.unwrap().unwrap();
    assert_eq!(two["result"]["n"], 2, "the earlier answer was kept: {two}");
    // The next wait reads on: the first request's second answer.
    let third = ping_in_flight(&mut s).await;
    let soon = Instant::now() + Duration::from_millis(300);
    assert!(s.finish_request(&third, soon).await.unwrap().is_none());
    assert_eq!(
        s.violations.len(),
        1,
        "a second answer is a violation: {:?}",
        s.violations
    );
}

#[tokio::test]
async fn a_request_given_up_in_flight_has_its_late_answer_ignored() {
    let mut s = scripted(
        r#"read request; read cancelled; read next
        case "$cancelled" in *notifications/cancelled*) ;; *) exit 1;; esac
        echo '{"jsonrpc":"2.0","id":1,"result":{}}'
        echo '{"jsonrpc":"2.0","id":2,"result":{"n":2}}'
        sleep 5"#,
    );
    let slow = ping_in_flight(&mut s).await;
    let soon = Instant::now() + Duration::from_millis(50);
    assert!(
        s.finish_request(&slow, soon).await.unwrap().is_none(),
        "not answered yet"
    );
    s.abandon_request(slow, Some(Duration::from_millis(50)))
        .await;
    let next = ping_in_flight(&mut s).await;
    let deadline = Instant::now() + Duration::from_secs(2);
    let (answer, _) = s.finish_request(&next, deadline).await.unwrap().unwrap();
    assert_eq!(answer["result"]["n"], 2, "{answer}");
    assert!(
        s.violations.is_empty(),
        "a late answer is no violation: {:?}",
        s.violations
    );
}

/// An HTTP server on loopback that answers each POST in plain JSON with
/// `{"n": id}`, but holds the answer to request 1 until request 2 came:
/// a client that waits for one POST's answer before it sends the next
/// never gets either.
async fn held_http_server() -> String {
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    let second_came = Arc::new(tokio::sync::Notify::new());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let second_came = Arc::clone(&second_came);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut chunk = [0u8; 4096];
                let body = loop {
                    let Ok(n) = socket.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&request).to_string();
                    let body = text.split_once("\r\n\r\n").map(|(_, body)| body);
                    if let Some(Ok(body)) = body.map(serde_json::from_str::<Value>) {
                        break body;
                    }
                };
                let id = body["id"].as_i64().unwrap_or(0);
                match id {
                    1 => second_came.notified().await,
                    2 => second_came.notify_one(),
                    _ => {}
                }
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"n": id}}).to_string();
                let reply = http_reply("200 OK", "application/json", &answer);
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn over_http_a_request_in_flight_does_not_hold_up_the_next_one() {
    let url = held_http_server().await;
    let mut s = over_http(url);
    let within = Duration::from_secs(2);
    let first = s.start_request("ping", None, false, within).await.unwrap();
    let first = first.expect("the first POST does not hold up the session");
    let second = s.start_request("ping", None, false, within).await.unwrap();
    let second = second.expect("sent while the first is held");
    let deadline = Instant::now() + Duration::from_secs(3);
    let (two, _) = s
        .finish_request(&second, deadline)
        .await
        .unwrap()
        .expect("answered");
    assert_eq!(two["result"]["n"], 2, "{two}");
    let (one, _) = s
        .finish_request(&first, deadline)
        .await
        .unwrap()
        .expect("answered");
    assert_eq!(one["result"]["n"], 1, "{one}");
}

#[tokio::test]
async fn a_request_in_flight_whose_post_is_refused_says_what_the_body_said() {
    let url = refusing_http_server("500 Internal Server Error", "the tool table is locked").await;
    let mut s = over_http(url);
    let within = Duration::from_secs(2);
    let call = s.start_request("tools/call", None, false, within).await;
    let call = call.unwrap().expect("sent");
    let deadline = Instant::now() + Duration::from_secs(3);
    let err = s
        .finish_request(&call, deadline)
        .await
        .expect_err("no JSON-RPC answer came")
        .to_string();
    assert!(
        err.contains("500") && err.contains("the tool table is locked"),
        "{err}"
    );
}

/// A 2025-11-25 session with the in-process reference, opened without the
/// handshake.
fn with_reference() -> Session {
    super::with_in_process_reference(crate::reference::Config::default(), "2025-11-25")
}

/// A 2025-11-25 session with the in-process reference whose own
/// `initialize` (no handshake) asked for `version`.
async fn initialized_for(version: &str) -> Session {
    let mut s = with_reference();
    let params = json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}});
    s.request("initialize", Some(params), None, None)
        .await
        .expect("initialize is answered");
    s
}

/// Whether the session's transcript shows `notifications/initialized` sent.
fn sent_initialized(s: &Session) -> usize {
    s.transcript
        .entries()
        .0
        .iter()
        .filter(|e| e.direction == transcript::Direction::Sent)
        .filter(|e| e.message.get("method") == Some(&json!("notifications/initialized")))
        .count()
}

#[tokio::test]
async fn a_session_whose_own_initialize_settled_the_era_completes_its_lifecycle() {
    let mut s = initialized_for("2025-11-25").await;
    assert_eq!(sent_initialized(&s), 0);
    assert!(s.complete_lifecycle().await, "its initialize named the era");
    assert_eq!(
        sent_initialized(&s),
        1,
        "the handshake's notification went out"
    );
    let (entries, _) = s.transcript.entries();
    assert!(
        entries
            .iter()
            .any(|e| e.message.to_string().contains("the scenario is over")),
        "the transcript says why it was sent"
    );
    assert_eq!(s.server["protocolVersion"], "2025-11-25");
    let answer = s
        .request("tools/list", None, None, None)
        .await
        .expect("listed");
    assert!(answer.pointer("/result/tools").is_some(), "{answer}");
    assert!(s.complete_lifecycle().await, "done once, it stays done");
    assert_eq!(sent_initialized(&s), 1, "and is not sent twice");
}

#[tokio::test]
async fn a_session_whose_initialize_settled_another_version_or_none_is_not_completed() {
    let mut s = initialized_for("2025-06-18").await;
    assert!(
        !s.complete_lifecycle().await,
        "2025-06-18 is not the session's era"
    );
    assert_eq!(sent_initialized(&s), 0);
    let mut never = with_reference();
    assert!(!never.complete_lifecycle().await, "no initialize at all");
}

/// A shell function for scripted servers: the numeric id of the JSON-RPC
/// message in `$1`.
const ID_OF: &str = r#"id_of() { printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }"#;

#[tokio::test]
async fn a_request_the_server_dropped_leaves_the_session_reusable_and_its_late_answer_ignored() {
    // Answers the sentinel behind the first request, not the request; then,
    // once the next request comes, the first one late and the next one.
    let mut s = scripted(&format!(
        r#"{ID_OF}
        read request; read sentinel
        echo "{{\"jsonrpc\":\"2.0\",\"id\":$(id_of "$sentinel"),\"result\":{{}}}}"
        read next
        echo '{{"jsonrpc":"2.0","id":"dropped","result":{{"late":true}}}}'
        echo "{{\"jsonrpc\":\"2.0\",\"id\":$(id_of "$next"),\"result\":{{\"n\":2}}}}"
        sleep 5"#
    ));
    s.arm_sentinel();
    let wait = Some(Duration::from_secs(3));
    let dropped = s
        .request_with("ping", None, Some(json!("dropped")), wait, false)
        .await;
    assert!(
        matches!(dropped, Err(SessionError::Dropped { .. })),
        "{dropped:?}"
    );
    assert!(
        s.reusable(),
        "the server read past the dropped request: it can serve the next scenario"
    );
    s.adopt("next", Transcript::new());
    let answer = s
        .request_with("ping", None, None, wait, false)
        .await
        .expect("the next request is answered");
    assert_eq!(answer["result"]["n"], 2, "{answer}");
    assert!(
        s.violations.is_empty(),
        "a late answer is no violation: {:?}",
        s.violations
    );
}

#[test]
fn a_sentinels_grace_is_ten_of_its_round_trips_in_tenths_of_a_second_within_bounds() {
    use super::answers::{sentinel_grace, SENTINEL_GRACE_MIN};
    let ms = Duration::from_millis;
    assert_eq!(
        sentinel_grace(ms(0)),
        SENTINEL_GRACE_MIN,
        "a prompt answer: the floor"
    );
    assert_eq!(sentinel_grace(ms(3)), ms(100));
    assert_eq!(sentinel_grace(ms(11)), ms(200), "110 ms, rounded up");
    assert_eq!(sentinel_grace(ms(30)), ms(300));
    assert_eq!(
        sentinel_grace(ms(60)),
        SENTINEL_GRACE,
        "a slow answer: the ceiling"
    );
    assert_eq!(sentinel_grace(Duration::MAX), SENTINEL_GRACE);
}

/// A session whose server reads a request and the sentinel behind it,
/// sleeps `before` seconds, answers the sentinel, sleeps `after` seconds,
/// then answers the request.
fn answering_after_the_sentinel(before: &str, after: &str) -> Session {
    scripted(&format!(
        r#"{ID_OF}
        read request; read sentinel
        sleep {before}
        echo "{{\"jsonrpc\":\"2.0\",\"id\":$(id_of "$sentinel"),\"result\":{{}}}}"
        sleep {after}
        echo '{{"jsonrpc":"2.0","id":"late","result":{{"n":1}}}}'
        sleep 5"#
    ))
}

async fn request_behind_a_sentinel(s: &mut Session) -> Result<Value, SessionError> {
    s.arm_sentinel();
    let wait = Some(Duration::from_secs(3));
    s.request_with("ping", None, Some(json!("late")), wait, false)
        .await
}

#[tokio::test]
async fn an_answer_soon_after_the_sentinels_is_the_requests_not_a_drop() {
    // Right behind the sentinel's answer: well within the 100 ms floor,
    // however loaded the machine running the test.
    let mut s = answering_after_the_sentinel("0", "0");
    let answer = request_behind_a_sentinel(&mut s).await;
    assert_eq!(answer.map(|a| a["result"]["n"].clone()), Ok(json!(1)));
}

#[tokio::test]
async fn a_server_slow_to_answer_the_sentinel_gets_a_longer_grace() {
    // The sentinel took at least 60 ms: the grace is the ceiling, 500 ms,
    // and an answer 200 ms after the sentinel's still counts (the floor,
    // 100 ms, would have called the request dropped).
    let mut s = answering_after_the_sentinel("0.06", "0.2");
    let answer = request_behind_a_sentinel(&mut s).await;
    assert_eq!(answer.map(|a| a["result"]["n"].clone()), Ok(json!(1)));
}

#[tokio::test]
async fn a_drop_names_the_grace_it_waited() {
    let mut s = answering_after_the_sentinel("0.06", "2");
    let dropped = request_behind_a_sentinel(&mut s).await;
    assert!(
        matches!(dropped, Err(SessionError::Dropped { grace_ms: 500, .. })),
        "{dropped:?}"
    );
}

/// A session with the in-process reference echoing numeric ids as floats
/// (4711 comes back as 4711.0), opened without the handshake.
fn with_float_ids() -> Session {
    let config = crate::reference::Config {
        faults: [crate::reference::Fault::IdAsFloat].into_iter().collect(),
        ..Default::default()
    };
    super::with_in_process_reference(config, "2025-11-25")
}

/// An answer whose id is the request's number written as a float is that
/// request's answer, its sentinel's too: the session stays fit for the
/// next scenario. Before, every sentinel was waited out and abandoned, the
/// checkup's ping never answered, and a run of the reference under
/// `id-as-float` started 430 servers and took 447 s (now 65 and 1.3 s).
#[tokio::test]
async fn an_answer_with_the_id_written_as_a_float_is_the_requests_own() {
    let mut s = with_float_ids();
    let asked = Instant::now();
    let answer = s.request("ping", None, None, None).await.expect("answered");
    assert_eq!(answer["id"], json!(1.0), "{answer}");
    assert!(
        asked.elapsed() < Duration::from_millis(400),
        "no sentinel waited out"
    );
    assert!(s.reusable(), "nothing abandoned");
    assert!(s.checkup(Duration::from_secs(1)).await, "the ping answered");
    let first = ping_in_flight(&mut s).await;
    let second = ping_in_flight(&mut s).await;
    let deadline = Instant::now() + Duration::from_secs(1);
    for request in [&first, &second] {
        let landed = s.finish_request(request, deadline).await.expect("no error");
        assert!(landed.is_some(), "each answer in flight lands");
    }
}

#[test]
fn ids_match_as_numbers_but_never_across_types_or_past_double_precision() {
    use super::answers::id_key;
    assert_eq!(id_key(&json!(4711.0)), id_key(&json!(4711)));
    assert_eq!(id_key(&json!(-3.0)), id_key(&json!(-3)));
    assert_ne!(id_key(&json!(1.5)), id_key(&json!(1)));
    assert_ne!(
        id_key(&json!("7")),
        id_key(&json!(7)),
        "a string is not a number"
    );
    let beyond: Value = serde_json::from_str("9007199254740993").expect("an integer");
    let rounded: Value = serde_json::from_str("9007199254740992.0").expect("a float");
    assert_ne!(
        id_key(&beyond),
        id_key(&rounded),
        "rounded through a double"
    );
}

#[tokio::test]
async fn the_tools_a_session_read_descriptions_of_are_kept_across_the_scenarios_it_serves() {
    let mut s = session().await;
    s.note_sent(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "page_get", "arguments": {}}}));
    s.note_sent(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
        "params": {"uri": "resource:///tool_descriptions?tools=task_get,TASK_LIST"}}),
    );
    s.note_sent(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
        "params": {"filter": {"groups": ["tasks"]}}}));
    s.adopt("next", Transcript::new());
    s.note_sent(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "resources/read",
        "params": {"uri": "docs://glossary"}}),
    );
    let named: Vec<&str> = s.touched_tools().iter().map(String::as_str).collect();
    assert_eq!(
        named,
        ["TASK_LIST", "task_get"],
        "a call authorizes nothing"
    );
    s.close().await;
}
