//! A Markdown summary (`--report-markdown`) fit for a GitHub job summary or a
//! pull-request comment. It leads with what to fix: each distinct failure,
//! then each warning, with its quote and a collapsed diff; then what applied
//! to the server, counts per era and per profile, the profiles it does not
//! offer, and every result (collapsed), failures first.

use super::data::ReportData;
use super::evidence::{self, DEFAULT_DIFF_LINES, SENT_CHARS};
use super::overview;
use crate::run::events::Counts;
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
    let view = data.overview();
    let skipped = if view.skipped > 0 {
        format!("; {} skipped as not applicable", view.skipped)
    } else {
        String::new()
    };
    let mut md = format!(
        "## mcp-conform: {} — {icon} {words}\n\n`{}` over {}, protocol {}.\n\n**{}**{skipped}.\n\n",
        escape_cell(&server_name(data)),
        escape_cell(&data.run.target),
        data.run.transport,
        data.eras_text(),
        view.headline(),
    );
    // What to fix comes first: each distinct failure, then each warning.
    let problems = overview::problems(&data.scenarios);
    if !problems.is_empty() {
        md.push_str("### Failures and warnings\n");
    }
    for p in problems {
        md.push_str(&problem(p.result, &p.eras.join(", ")));
    }
    if !md.ends_with("\n\n") {
        md.push('\n');
    }
    const HEAD: &str = "| runs | passed | failed | warned | info | errors | skipped |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
    if view.eras.len() > 1 {
        md.push_str(&format!("| protocol {HEAD}"));
        for (era, c) in &view.eras {
            md.push_str(&counts_row(era, c));
        }
        md.push_str(&counts_row("**all eras**", &s.overall));
        md.push('\n');
    }
    let across = if view.eras.len() > 1 {
        " (all eras)"
    } else {
        ""
    };
    md.push_str(&format!("| profile{across} {HEAD}"));
    for (profile, c) in &view.profiles {
        md.push_str(&counts_row(profile, c));
    }
    if !view.not_offered.is_empty() {
        md.push_str("\nNot offered by this server (its scenarios were skipped):\n\n");
        for n in &view.not_offered {
            md.push_str(&format!("- {}: {}\n", n.profile, escape_cell(&n.reason)));
        }
    }
    md.push_str(&results_list(data));
    md.push_str(&format!("\nconformance result: {words}\n"));
    md
}

/// Every result, collapsed: failures first, then warnings, info, passes
/// and skips, identical results of several eras on one row.
fn results_list(data: &ReportData) -> String {
    let rows = overview::rows(&data.scenarios);
    let mut md = format!(
        "\n<details><summary>All results ({} rows; identical results in several eras are one row)</summary>\n\n\
         | outcome | scenario | level | requirement | protocol | message |\n|---|---|---|---|---|---|\n",
        rows.len()
    );
    for row in rows {
        let r = row.result;
        let shown = r.shown();
        md.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {} |\n",
            r.outcome,
            r.id,
            shown.level,
            shown.requirements.join(", "),
            row.eras.join(", "),
            escape_cell(&super::console::one_line(&r.message, 160))
        ));
    }
    md.push_str("\n</details>\n");
    md
}

/// A table row of counts that add up: runs, then each outcome.
fn counts_row(label: &str, c: &Counts) -> String {
    format!(
        "| {label} | {} | {} | {} | {} | {} | {} | {} |\n",
        c.total(),
        c.passed,
        c.failed,
        c.warned,
        c.info,
        c.errors,
        c.skipped
    )
}

/// One distinct problem, naming every era (comma-separated) it occurred in.
fn problem(r: &ScenarioResult, eras: &str) -> String {
    let icon = match r.outcome {
        Outcome::Warn => "⚠️",
        _ => "❌",
    };
    let era = if eras.is_empty() {
        String::new()
    } else {
        format!(" (protocol {eras})")
    };
    let shown = r.shown();
    let mut md = format!(
        "\n#### {icon} `{}` [{}] {}{era}\n\n{}\n\n",
        r.id,
        shown.level,
        r.outcome,
        escape_cell(&r.title)
    );
    if let Some(note) = r.shared_note() {
        md.push_str(&format!("ℹ️ {}\n\n", escape_cell(&note)));
    }
    if !shown.requirements.is_empty() {
        md.push_str(&format!(
            "Requirement: {}\n\n",
            shown.requirements.join(", ")
        ));
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
            let (label, sent) = evidence::sent(actual, f.sent_by.as_deref(), SENT_CHARS);
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
            let capped = evidence::cap(d, Some(DEFAULT_DIFF_LINES));
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
