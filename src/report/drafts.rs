//! The spec editor's view of a `matrix` run (`drafts.md`): one section per
//! source document (each draft, the MCP specification, this project's own
//! rules), listing each requirement with its level, whose rule it is and its
//! words, and per server the outcome and the alternative it chose wherever a
//! scenario accepts more than one reading (`$one_of` … `$label`). A draft's
//! open questions show up as the servers' choices.

use std::collections::BTreeSet;

use super::matrix::Column;
use crate::requirements::Requirement;
use crate::run::outcome::Outcome;
use crate::sources::Source;

fn cell_text(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// One server's result for one requirement.
enum Cell {
    Unreachable,
    /// No scenario of this server's run checks the requirement.
    NotChecked,
    /// The worst outcome over every scenario (and era) that checks it, and
    /// the alternatives chosen where a scenario accepts several readings.
    Checked {
        worst: Outcome,
        chosen: BTreeSet<String>,
    },
}

impl Cell {
    fn of(column: &Column, requirement: &str) -> Cell {
        let Some(data) = &column.data else {
            return Cell::Unreachable;
        };
        let covering: Vec<_> = data
            .scenarios
            .iter()
            .filter(|r| r.requirements.iter().any(|q| q == requirement))
            .collect();
        let Some(worst) = covering
            .iter()
            .map(|r| r.outcome)
            .max_by_key(|o| o.severity())
        else {
            return Cell::NotChecked;
        };
        let chosen = covering
            .iter()
            .flat_map(|r| r.alternatives.iter().cloned())
            .collect();
        Cell::Checked { worst, chosen }
    }

    fn chose(&self) -> bool {
        matches!(self, Cell::Checked { chosen, .. } if !chosen.is_empty())
    }

    fn chosen_text(chosen: &BTreeSet<String>) -> String {
        chosen
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn markdown(&self) -> String {
        match self {
            Cell::Unreachable => "unreachable".into(),
            Cell::NotChecked => "·".into(),
            Cell::Checked { worst, chosen } if chosen.is_empty() => outcome_word(*worst).into(),
            Cell::Checked { worst, chosen } => format!(
                "{} — chose: {}",
                outcome_word(*worst),
                Self::chosen_text(chosen)
            ),
        }
    }

    fn html(&self) -> String {
        match self {
            Cell::Unreachable => "<td class=\"o-none\">unreachable</td>".into(),
            Cell::NotChecked => "<td class=\"o-none\">·</td>".into(),
            Cell::Checked { worst, chosen } => {
                let choice = if chosen.is_empty() {
                    String::new()
                } else {
                    format!(
                        "<div class=\"chose\">chose: {}</div>",
                        escape(&Self::chosen_text(chosen))
                    )
                };
                format!(
                    "<td class=\"o-{}\">{}{choice}</td>",
                    worst.as_str(),
                    worst.as_str()
                )
            }
        }
    }
}

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::Fail => "**fail**",
        Outcome::Error => "**error**",
        Outcome::Warn => "warn",
        Outcome::Info => "info",
        Outcome::Skip => "skip",
    }
}

/// One requirement's row: its words and every server's cell.
struct Row<'a> {
    requirement: &'a Requirement,
    cells: Vec<Cell>,
}

impl Row<'_> {
    fn words(&self) -> &str {
        self.requirement
            .quote
            .as_deref()
            .unwrap_or(&self.requirement.text)
    }
}

/// One source document with its requirements × servers.
struct Section<'a> {
    source: &'a Source,
    rows: Vec<Row<'a>>,
}

impl Section<'_> {
    /// The requirements where some server chose among accepted readings.
    fn open_questions(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|r| r.cells.iter().any(Cell::chose))
            .map(|r| r.requirement.id.as_str())
            .collect()
    }
}

/// Every document with requirements, in the order of `sources`.
fn sections<'a>(
    columns: &[Column],
    requirements: &'a [Requirement],
    sources: &'a [Source],
) -> Vec<Section<'a>> {
    sources
        .iter()
        .map(|source| Section {
            source,
            // a requirement only the trace rules of `watch` check has no
            // scenario, so no server of a run has an outcome for it
            rows: requirements
                .iter()
                .filter(|r| r.document == source.id && !r.scenarios.is_empty())
                .map(|requirement| Row {
                    requirement,
                    cells: columns
                        .iter()
                        .map(|c| Cell::of(c, &requirement.id))
                        .collect(),
                })
                .collect(),
        })
        .filter(|s| !s.rows.is_empty())
        .collect()
}

const INTRO: &str = "Each section lists one document's requirements (level, whose rule: the \
    draft's, the specification's or this project's own reading, and the words it rests on) \
    and, per server, the worst outcome over every scenario and protocol era that checks it, \
    with the alternative the server chose where a scenario accepts several readings.";

fn section_markdown(section: &Section, columns: &[Column]) -> String {
    let source = section.source;
    let mut md = format!(
        "\n## {} ({})\n\n",
        cell_text(&source.title),
        source.status.as_str()
    );
    if let Some(url) = &source.url {
        md.push_str(&format!("<{url}>\n\n"));
    }
    md.push_str("| requirement | level | whose rule | words |");
    for c in columns {
        md.push_str(&format!(" {} |", cell_text(&c.name)));
    }
    md.push_str("\n|---|---|---|---|");
    md.push_str(&"---|".repeat(columns.len()));
    md.push('\n');
    for row in &section.rows {
        let r = row.requirement;
        md.push_str(&format!(
            "| {} | {} | {} | {} |",
            r.id,
            r.level,
            r.source.label(),
            cell_text(row.words())
        ));
        for cell in &row.cells {
            md.push_str(&format!(" {} |", cell_text(&cell.markdown())));
        }
        md.push('\n');
    }
    let open = section.open_questions();
    if !open.is_empty() {
        md.push_str(&format!(
            "\nWhere the servers chose among accepted readings: {}.\n",
            open.join(", ")
        ));
    }
    md
}

/// The whole report as Markdown, documents in the order of `sources`.
pub fn markdown(columns: &[Column], requirements: &[Requirement], sources: &[Source]) -> String {
    let mut md = format!("# mcp-conform: requirements by source document\n\n{INTRO}\n");
    for section in sections(columns, requirements, sources) {
        md.push_str(&section_markdown(&section, columns));
    }
    md
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn section_html(section: &Section, columns: &[Column]) -> String {
    let source = section.source;
    let mut html = format!(
        "<section><h2>{} <small>({})</small></h2>",
        escape(&source.title),
        escape(source.status.as_str())
    );
    if let Some(url) = &source.url {
        html.push_str(&format!("<p><a href=\"{0}\">{0}</a></p>", escape(url)));
    }
    html.push_str("<table><tr><th>requirement</th><th>level</th><th>whose rule</th><th>words</th>");
    for c in columns {
        html.push_str(&format!("<th>{}</th>", escape(&c.name)));
    }
    html.push_str("</tr>\n");
    for row in &section.rows {
        let r = row.requirement;
        let open = if row.cells.iter().any(Cell::chose) {
            " class=\"open\""
        } else {
            ""
        };
        html.push_str(&format!(
            "<tr{open}><td id=\"{0}\">{0}</td><td>{1}</td><td>{2}</td><td class=\"words\">{3}</td>",
            escape(&r.id),
            escape(&r.level),
            escape(r.source.label()),
            escape(row.words())
        ));
        for cell in &row.cells {
            html.push_str(&cell.html());
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>");
    let open = section.open_questions();
    if !open.is_empty() {
        let links: Vec<String> = open
            .iter()
            .map(|id| format!("<a href=\"#{0}\">{0}</a>", escape(id)))
            .collect();
        html.push_str(&format!(
            "<p class=\"open-list\">Where the servers chose among accepted readings: {}.</p>",
            links.join(", ")
        ));
    }
    html.push_str("</section>\n");
    html
}

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:24px;max-width:1400px}\
    table{border-collapse:collapse;margin-bottom:8px}td,th{border:1px solid #d8dce3;padding:3px 8px;vertical-align:top}\
    th{background:#f3f5f8;text-align:left}td.words{max-width:420px;color:#333}\
    .o-pass{background:#e6f6ea}.o-fail,.o-error{background:#fde8e8;font-weight:600}.o-warn{background:#fff4de}\
    .o-info{background:#e7f1fb}.o-skip,.o-none{color:#8a909b}.chose{font-size:12px;color:#444;font-weight:400}\
    tr.open td:first-child{border-left:4px solid #b07cc6}h2 small{color:#8a909b;font-weight:400}";

/// The same report as one self-contained HTML page (no script, no network):
/// rows where a server chose among readings are marked and linked.
pub fn html(columns: &[Column], requirements: &[Requirement], sources: &[Source]) -> String {
    let mut body = String::new();
    for section in sections(columns, requirements, sources) {
        body.push_str(&section_html(&section, columns));
    }
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>mcp-conform: requirements by source document</title><style>{STYLE}</style></head>\
         <body><h1>mcp-conform: requirements by source document</h1><p>{}</p>\n{body}</body></html>\n",
        escape(INTRO)
    )
}

/// `explain --document ID`: one document's requirements, without servers.
pub fn document_text(source: &Source, requirements: &[Requirement]) -> String {
    let own: Vec<&Requirement> = requirements
        .iter()
        .filter(|r| r.document == source.id)
        .collect();
    let mut out = format!(
        "{} ({}; {})\n",
        source.title,
        source.status.as_str(),
        source.provenance.label()
    );
    if let Some(url) = &source.url {
        out.push_str(&format!("{url}\n"));
    }
    out.push_str(&format!("{} requirement(s):\n", own.len()));
    for r in own {
        let whose = r.source.label();
        out.push_str(&format!("  {} [{}] ({whose}) {}\n", r.id, r.level, r.text));
        if let Some(q) = &r.quote {
            out.push_str(&format!("    \"{q}\"\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> (Vec<Requirement>, &'static [Source]) {
        (
            crate::requirements::all().unwrap_or_else(|e| panic!("{e}")),
            crate::sources::all().unwrap_or_else(|e| panic!("{e}")),
        )
    }

    #[test]
    fn every_document_with_requirements_gets_a_section_in_source_order() {
        let (requirements, sources) = registry();
        let md = markdown(&[], &requirements, sources);
        let headings: Vec<&str> = md.lines().filter(|l| l.starts_with("## ")).collect();
        let expected = sources
            .iter()
            .filter(|s| {
                requirements
                    .iter()
                    .any(|r| r.document == s.id && !r.scenarios.is_empty())
            })
            .count();
        assert_eq!(headings.len(), expected, "{md}");
        assert!(md.contains("| SEP1300-FLT-01 | MUST | draft |"), "{md}");
        // a requirement of trace rules only is no row of a run's report
        assert!(requirements.iter().any(|r| r.id == "MCP-LIFE-01"));
        assert!(!md.contains("| MCP-LIFE-01 |"), "{md}");
    }

    #[test]
    fn the_html_page_has_the_same_sections_and_escapes_the_words() {
        let (requirements, sources) = registry();
        let md = markdown(&[], &requirements, sources);
        let html = html(&[], &requirements, sources);
        assert_eq!(
            html.matches("<section>").count(),
            md.lines().filter(|l| l.starts_with("## ")).count()
        );
        assert!(
            html.contains("<td id=\"SEP1300-FLT-01\">SEP1300-FLT-01</td>"),
            "{html}"
        );
        assert!(!html.contains("<script"), "self-contained, no script");
    }

    #[test]
    fn a_document_lists_its_requirements_with_whose_rule() {
        let (requirements, sources) = registry();
        let source = sources
            .iter()
            .find(|s| s.id == "interpretations")
            .unwrap_or_else(|| panic!("no interpretations source"));
        let text = document_text(source, &requirements);
        assert!(text.contains("(project rule)"), "{text}");
        assert!(!text.contains("(draft)"), "{text}");
    }
}
