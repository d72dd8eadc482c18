//! The many-server comparison (`mcp-conform matrix`): requirements as rows,
//! servers as columns, the outcome per cell, per-server totals.

use super::data::ReportData;
use crate::requirements::Requirement;
use crate::run::outcome::Outcome;

/// One server's run (or why it could not be reached).
pub struct Column {
    pub name: String,
    pub data: Option<ReportData>,
    pub unreachable: Option<String>,
}

/// The worst outcome among the scenarios covering `requirement`, if any ran.
fn cell(data: &ReportData, requirement: &str) -> Option<Outcome> {
    data.scenarios
        .iter()
        .filter(|r| r.requirements.iter().any(|q| q == requirement))
        .map(|r| r.outcome)
        .max_by_key(|o| o.severity())
}

fn symbol(o: Option<Outcome>) -> &'static str {
    match o {
        Some(Outcome::Pass) => "✅ pass",
        Some(Outcome::Fail) => "❌ fail",
        Some(Outcome::Error) => "💥 error",
        Some(Outcome::Warn) => "⚠️ warn",
        Some(Outcome::Info) => "ℹ️ info",
        Some(Outcome::Skip) => "➖ skip",
        None => "·",
    }
}

fn rows(
    requirements: &[Requirement],
    columns: &[Column],
) -> Vec<(String, String, Vec<Option<Outcome>>)> {
    // a requirement only the trace rules of `watch` check has no scenario,
    // so no server of a run has an outcome for it
    requirements
        .iter()
        .filter(|req| !req.scenarios.is_empty())
        .map(|req| {
            let cells = columns
                .iter()
                .map(|c| c.data.as_ref().and_then(|d| cell(d, &req.id)))
                .collect();
            (req.id.clone(), req.level.clone(), cells)
        })
        .collect()
}

/// The comparison as Markdown.
pub fn markdown(columns: &[Column], requirements: &[Requirement]) -> String {
    let mut md = String::from("# mcp-conform matrix\n\n| requirement | level |");
    for c in columns {
        md.push_str(&format!(" {} |", c.name));
    }
    md.push_str("\n|---|---|");
    md.push_str(&"---|".repeat(columns.len()));
    md.push('\n');
    md.push_str("| **totals** | |");
    for c in columns {
        let total = match (&c.data, &c.unreachable) {
            (Some(d), _) => d.summary.overall.line(),
            (None, Some(e)) => format!("unreachable: {e}"),
            _ => String::new(),
        };
        md.push_str(&format!(
            " {} |",
            total.replace('|', "\\|").replace('\n', " ")
        ));
    }
    md.push('\n');
    for (id, level, cells) in rows(requirements, columns) {
        md.push_str(&format!("| {id} | {level} |"));
        for c in cells {
            md.push_str(&format!(" {} |", symbol(c)));
        }
        md.push('\n');
    }
    md
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The comparison as one self-contained HTML page.
pub fn html(columns: &[Column], requirements: &[Requirement]) -> String {
    let mut head = String::from("<tr><th>requirement</th><th>level</th>");
    let mut totals = String::from("<tr class=\"totals\"><td>totals</td><td></td>");
    for c in columns {
        head.push_str(&format!("<th>{}</th>", escape(&c.name)));
        let total = match (&c.data, &c.unreachable) {
            (Some(d), _) => d.summary.overall.line(),
            (None, Some(e)) => format!("unreachable: {e}"),
            _ => String::new(),
        };
        totals.push_str(&format!("<td>{}</td>", escape(&total)));
    }
    head.push_str("</tr>");
    totals.push_str("</tr>");
    let mut body = String::new();
    for (id, level, cells) in rows(requirements, columns) {
        body.push_str(&format!(
            "<tr><td>{}</td><td>{}</td>",
            escape(&id),
            escape(&level)
        ));
        for c in cells {
            let class = c.map_or("none", Outcome::as_str);
            body.push_str(&format!("<td class=\"o-{class}\">{}</td>", symbol(c)));
        }
        body.push_str("</tr>\n");
    }
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>mcp-conform matrix</title><style>\
         body{{font:14px system-ui,sans-serif;margin:24px}}table{{border-collapse:collapse}}td,th{{border:1px solid #d8dce3;padding:3px 8px}}\
         .o-pass{{background:#e6f6ea}}.o-fail,.o-error{{background:#fde8e8}}.o-warn{{background:#fff4de}}.o-info{{background:#e7f1fb}}.o-skip,.o-none{{color:#8a909b}}\
         .totals td{{font-weight:600}}</style></head><body><h1>mcp-conform matrix</h1><table>{head}{totals}{body}</table></body></html>\n"
    )
}
