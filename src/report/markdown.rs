//! A Markdown summary (`--report-markdown`) fit for a GitHub job summary or a
//! pull-request comment: profiles × counts, then each failure with its quote
//! and a collapsed diff.

use super::data::ReportData;
use super::diff::{self, DEFAULT_DIFF_LINES, SENT_CHARS};
use crate::run::outcome::{Outcome, ScenarioResult};

fn escape_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn server_name(data: &ReportData) -> String {
    let info = &data.run.server;
    let name = info
        .pointer("/serverInfo/name")
        .and_then(|v| v.as_str())
        .unwrap_or("unnamed server");
    let version = info
        .pointer("/serverInfo/version")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    format!("{name} {version}")
}

/// The report as Markdown.
pub fn render(data: &ReportData) -> String {
    let s = &data.summary;
    let (icon, words) = data.verdict();
    let verdict = format!("{icon} {words}");
    let mut md = format!(
        "## mcp-conform: {} — {verdict}\n\n`{}` over {}, protocol {}; {}.\n\n",
        escape_cell(&server_name(data)),
        escape_cell(&data.run.target),
        data.run.transport,
        data.eras_text(),
        s.overall.line()
    );
    if s.eras.len() > 1 {
        md.push_str("| protocol | passed | failed | warned | info | skipped | errors |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for (era, c) in &s.eras {
            md.push_str(&format!(
                "| {era} | {} | {} | {} | {} | {} | {} |\n",
                c.passed, c.failed, c.warned, c.info, c.skipped, c.errors
            ));
        }
        md.push('\n');
    }
    md.push_str("| profile | passed | failed | warned | info | skipped | errors |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (profile, c) in &s.profiles {
        md.push_str(&format!(
            "| {profile} | {} | {} | {} | {} | {} | {} |\n",
            c.passed, c.failed, c.warned, c.info, c.skipped, c.errors
        ));
    }
    let o = &s.overall;
    md.push_str(&format!(
        "| **total** | **{}** | **{}** | **{}** | **{}** | **{}** | **{}** |\n",
        o.passed, o.failed, o.warned, o.info, o.skipped, o.errors
    ));
    let problems: Vec<&ScenarioResult> = data
        .scenarios
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Error | Outcome::Warn))
        .collect();
    if !problems.is_empty() {
        md.push_str("\n### Failures and warnings\n");
    }
    for r in problems {
        md.push_str(&problem(r));
    }
    md.push_str(&format!("\nconformance result: {words}\n"));
    md
}

fn problem(r: &ScenarioResult) -> String {
    let icon = match r.outcome {
        Outcome::Warn => "⚠️",
        _ => "❌",
    };
    let era = if r.era.is_empty() {
        String::new()
    } else {
        format!(" (protocol {})", r.era)
    };
    let mut md = format!(
        "\n#### {icon} `{}` [{}] {}{era}\n\n{}\n\n",
        r.id,
        r.level,
        r.outcome,
        escape_cell(&r.title)
    );
    if !r.requirements.is_empty() {
        md.push_str(&format!("Requirement: {}\n\n", r.requirements.join(", ")));
        if !r.bases.is_empty() {
            md.push_str(&format!(
                "Level basis (docs/interpretations.md#levels-on-a-basis): {}\n\n",
                r.bases.join(", ")
            ));
        }
    }
    for spec in &r.spec {
        if let Some(q) = &spec.quote {
            md.push_str(&format!(
                "> {} — *{}*\n\n",
                q.replace('\n', " "),
                spec.cite()
            ));
        }
    }
    md.push_str(&format!("**{}**\n", escape_cell(&r.message)));
    for f in r.findings.iter().filter(|f| f.outcome != Outcome::Pass) {
        if let Some(at) = &f.location {
            md.push_str(&format!("\nAt {}\n", code_span(at)));
        }
        if let Some(actual) = &f.actual {
            let (label, sent) = diff::server_sent(actual, SENT_CHARS);
            md.push_str(&format!(
                "\n{}: {}\n",
                upper_first(&label),
                code_span(&sent)
            ));
        }
    }
    let diffs: Vec<&str> = r
        .findings
        .iter()
        .filter_map(|f| f.diff.as_deref())
        .collect();
    if !diffs.is_empty() {
        md.push_str("\n<details><summary>diff</summary>\n\n```diff\n");
        for d in diffs {
            // A job summary or a comment has a size limit: the JSON and HTML
            // reports keep the whole diff.
            let capped = diff::cap(d, Some(DEFAULT_DIFF_LINES));
            for line in capped.lines {
                md.push_str(line);
                md.push('\n');
            }
            if capped.hidden > 0 {
                md.push_str(&format!(
                    "… {} more lines (whole in the JSON and HTML reports) …\n",
                    capped.hidden
                ));
            }
        }
        md.push_str("```\n\n</details>\n");
    }
    md
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Text as an inline code span, whatever backticks it holds.
fn code_span(text: &str) -> String {
    let text = text.replace('\n', " ");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}
