//! The top of the HTML report: each distinct problem as a card (what `-q`
//! prints, one line each), failures first, with the level and requirement
//! it broke, the quoted rule and the evidence. Rendered as plain HTML, so
//! the page leads with what to fix before its script has run.

use super::evidence::{self, html_escape as escape, SENT_CHARS};
use super::overview::{self, Problem};
use crate::run::outcome::{Outcome, ScenarioResult};

/// Diff lines a card shows (around the first change); the whole diff is in
/// the result's row below.
const CARD_DIFF_LINES: usize = 12;

/// The "What to fix" section: one card per distinct failure or warning.
pub fn section(results: &[ScenarioResult]) -> String {
    let problems = overview::problems(results);
    if problems.is_empty() {
        return "<section id=\"problems\"><h2>Nothing to fix</h2>\
                <p>No failure and no warning.</p></section>"
            .to_string();
    }
    let failures = problems
        .iter()
        .filter(|p| p.result.outcome != Outcome::Warn)
        .count();
    let warnings = problems.len() - failures;
    let mut html = format!(
        "<section id=\"problems\"><h2>What to fix: {failures} failure{}, {warnings} warning{}</h2>",
        plural(failures),
        plural(warnings)
    );
    for (i, p) in problems.iter().enumerate() {
        html.push_str(&card(i + 1, p));
    }
    html.push_str("</section>");
    html
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// One problem: outcome, level, scenario, requirements, eras; the reason;
/// the shared-finding note; the quoted rule; where and what the server sent.
fn card(n: usize, p: &Problem) -> String {
    let r = p.result;
    let shown = r.shown();
    let eras = if p.eras.is_empty() {
        String::new()
    } else {
        format!(
            "<span class=\"eras\">protocol {}</span>",
            escape(&p.eras.join(", "))
        )
    };
    let mut html = format!(
        "<div class=\"problem o-{outcome}\" id=\"problem-{n}\" data-id=\"{id}\" data-outcome=\"{outcome}\">\
         <div class=\"p-head\"><span class=\"badge\">{outcome}</span> <span class=\"level\">{level}</span> \
         <span class=\"id\">{id}</span> <span class=\"reqs\">{reqs}</span> {eras}</div>\
         <div class=\"p-msg\">{message}</div>",
        outcome = r.outcome,
        id = escape(&r.id),
        level = shown.level,
        reqs = escape(&shown.requirements.join(", ")),
        message = escape(&r.message),
    );
    if let Some(note) = r.shared_note() {
        html.push_str(&format!("<div class=\"shared\">{}</div>", escape(&note)));
    }
    for spec in &r.spec {
        if let Some(q) = &spec.quote {
            html.push_str(&format!(
                "<blockquote>{}<div class=\"cite\">— {}</div></blockquote>",
                escape(q),
                escape(&spec.cite())
            ));
        }
    }
    html.push_str(&evidence_of(r));
    html.push_str("</div>");
    html
}

/// The first finding that did not pass: where, what the server sent, the
/// first change of its diff.
fn evidence_of(r: &ScenarioResult) -> String {
    let Some(f) = r.findings.iter().find(|f| f.outcome != Outcome::Pass) else {
        return String::new();
    };
    let mut html = String::from("<div class=\"evidence\">");
    if let Some(at) = &f.location {
        html.push_str(&format!("<div>at <code>{}</code></div>", escape(at)));
    }
    if let Some(actual) = &f.actual {
        let (label, sent) = evidence::sent(actual, f.sent_by.as_deref(), SENT_CHARS);
        html.push_str(&format!(
            "<div>{}: <code>{}</code></div>",
            escape(&label),
            escape(&sent)
        ));
    }
    if let Some(diff) = &f.diff {
        let capped = evidence::first_change(diff, Some(CARD_DIFF_LINES));
        html.push_str("<pre class=\"diff\">");
        for line in capped.lines {
            let class = if line.starts_with("@@") {
                "hunk"
            } else if line.starts_with('+') && !line.starts_with("+++") {
                "add"
            } else if line.starts_with('-') && !line.starts_with("---") {
                "del"
            } else {
                ""
            };
            html.push_str(&format!(
                "<span class=\"{class}\">{}\n</span>",
                escape(line)
            ));
        }
        html.push_str("</pre>");
    }
    html.push_str("</div>");
    html
}
