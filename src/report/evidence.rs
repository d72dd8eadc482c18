//! How reports show a finding's evidence within a size a reader can take in:
//! a diff capped at a number of lines, and what the server sent on one line.
//! (The diff itself, bounded around the mismatch, is made by
//! [`crate::scenario::diff`] when the finding is recorded.)

use serde_json::Value;

use crate::scenario::diff::without_harness_keys;

/// Diff lines a finding shows on the console by default (`--diff-lines`).
pub const DEFAULT_DIFF_LINES: usize = 40;

/// Text escaped for HTML content and attribute values.
pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Characters of the server's answer shown on one line.
pub const SENT_CHARS: usize = 300;

/// A diff cut to at most `max` lines (None: whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped<'a> {
    pub lines: Vec<&'a str>,
    /// Lines left out at the end.
    pub hidden: usize,
}

/// The first `max` lines of `diff`, and how many more there are.
pub fn cap(diff: &str, max: Option<usize>) -> Capped<'_> {
    let all: Vec<&str> = diff.lines().collect();
    match max {
        Some(max) if all.len() > max => Capped {
            hidden: all.len() - max,
            lines: all[..max].to_vec(),
        },
        _ => Capped {
            lines: all,
            hidden: 0,
        },
    }
}

/// A diff cut after its first run of changed lines (the first mismatch),
/// then to at most `max` lines: a warning is read at a glance, and its
/// whole diff is in the JSON and HTML reports.
pub fn first_change(diff: &str, max: Option<usize>) -> Capped<'_> {
    let all: Vec<&str> = diff.lines().collect();
    let changed = |l: &&str| {
        (l.starts_with('+') && !l.starts_with("+++"))
            || (l.starts_with('-') && !l.starts_with("---"))
    };
    let end = all
        .iter()
        .position(changed)
        .map(|start| {
            start
                + all[start..]
                    .iter()
                    .position(|l| !changed(l))
                    .unwrap_or(all.len() - start)
        })
        .unwrap_or(all.len());
    let kept = match max {
        Some(max) => end.min(max),
        None => end,
    };
    Capped {
        lines: all[..kept].to_vec(),
        hidden: all.len() - kept,
    }
}

/// What the server sent, on one line of at most `max` characters, with a
/// label that says how the harness got it: `server sent`, `server sent
/// (3 pages, joined)`, or for a raw HTTP exchange `server answered HTTP 400`.
/// What the harness added (the request it sent, its page bookkeeping) is left out.
///
/// `sender` names who sent it when it was not the server (`client`).
pub fn sent(actual: &Value, sender: Option<&str>, max: usize) -> (String, String) {
    let who = sender.unwrap_or("server");
    if let (Some(status), Some(text)) = (
        actual.get("status").and_then(Value::as_u64),
        actual.get("text").and_then(Value::as_str),
    ) {
        let kind = actual
            .get("content_type")
            .and_then(Value::as_str)
            .map(|t| format!(" ({t})"))
            .unwrap_or_default();
        return (
            format!("{who} answered HTTP {status}{kind}"),
            one_line(text, max),
        );
    }
    let pages = actual
        .get("page_count")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let label = if pages > 1 {
        format!("{who} sent ({pages} pages, joined)")
    } else {
        format!("{who} sent")
    };
    let sent = without_harness_keys(actual, |_| false);
    // Compact JSON is one line already; its strings keep their spaces.
    (label, cut(&sent.to_string(), max))
}

/// A text on one line (runs of white space made one space), cut to `max`
/// characters with a count of the rest.
pub fn one_line(text: &str, max: usize) -> String {
    cut(&text.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count > max {
        let kept: String = text.chars().take(max).collect();
        format!("{kept} … {} more characters", count - max)
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_diff_is_capped_with_a_count_of_what_is_left_out() {
        let diff = (1..=100).map(|i| format!("line {i}\n")).collect::<String>();
        let capped = cap(&diff, Some(40));
        assert_eq!(capped.lines.len(), 40);
        assert_eq!(capped.lines[39], "line 40");
        assert_eq!(capped.hidden, 60);
        let whole = cap(&diff, None);
        assert_eq!((whole.lines.len(), whole.hidden), (100, 0));
        let short = cap("a\nb\n", Some(40));
        assert_eq!((short.lines, short.hidden), (vec!["a", "b"], 0));
    }

    #[test]
    fn a_warning_diff_ends_after_its_first_mismatch() {
        let diff = "--- expected\n+++ actual\n@@ -1,9 +1,9 @@\n {\n-  \"a\": 1,\n+  \"a\": 2,\n   \"b\": 3,\n-  \"c\": 4\n+  \"c\": 5\n }\n";
        let cut = first_change(diff, Some(40));
        assert_eq!(cut.lines.last(), Some(&"+  \"a\": 2,"));
        assert_eq!((cut.lines.len(), cut.hidden), (6, 4));
        assert_eq!(first_change(diff, Some(2)).lines.len(), 2);
        assert_eq!(first_change("same\n", None).hidden, 0);
    }

    #[test]
    fn a_clients_message_is_labelled_as_the_clients() {
        let (label, _) = sent(&json!({"id": 1}), Some("client"), 300);
        assert_eq!(label, "client sent");
    }

    #[test]
    fn what_the_server_sent_leaves_out_what_the_harness_added() {
        let answer = json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": -32700, "message": "Parse error"},
            "request": {"method": "ping"}});
        let (label, text) = sent(&answer, None, 300);
        assert_eq!(label, "server sent");
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
        );
        let walked = json!({"result": {"tools": []}, "page_count": 3, "pages": [1, 2, 3]});
        assert_eq!(
            sent(&walked, None, 300),
            (
                "server sent (3 pages, joined)".into(),
                r#"{"result":{"tools":[]}}"#.into()
            )
        );
        let long = json!({"result": "x".repeat(1000)});
        let (_, cut) = sent(&long, None, 50);
        assert!(cut.ends_with("… 963 more characters"), "{cut}");
        let http = json!({"status": 400, "content_type": "application/json", "text": "{\"error\": 1}",
                          "headers": {}, "messages": [], "body": null});
        assert_eq!(
            sent(&http, None, 300),
            (
                "server answered HTTP 400 (application/json)".into(),
                "{\"error\": 1}".into()
            )
        );
    }
}
