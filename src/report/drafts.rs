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

/// The worst outcome and the alternatives chosen, over every scenario (and
/// era) of one server that checks `requirement`.
fn cell(column: &Column, requirement: &str) -> String {
    let Some(data) = &column.data else {
        return "unreachable".into();
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
        return "·".into();
    };
    let chosen: BTreeSet<&str> = covering
        .iter()
        .flat_map(|r| r.alternatives.iter().map(String::as_str))
        .collect();
    let mut text = outcome_word(worst).to_string();
    if !chosen.is_empty() {
        text.push_str(&format!(
            " — chose: {}",
            chosen.into_iter().collect::<Vec<_>>().join("; ")
        ));
    }
    text
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

/// Whether any server chose among alternatives for `requirement`.
fn has_choices(columns: &[Column], requirement: &str) -> bool {
    columns.iter().filter_map(|c| c.data.as_ref()).any(|d| {
        d.scenarios
            .iter()
            .any(|r| !r.alternatives.is_empty() && r.requirements.iter().any(|q| q == requirement))
    })
}

/// One document's requirements × servers.
fn section(source: &Source, requirements: &[&Requirement], columns: &[Column]) -> String {
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
    for r in requirements {
        let whose = r.source.label();
        let words = r.quote.as_deref().unwrap_or(&r.text);
        md.push_str(&format!(
            "| {} | {} | {whose} | {} |",
            r.id,
            r.level,
            cell_text(words)
        ));
        for c in columns {
            md.push_str(&format!(" {} |", cell_text(&cell(c, &r.id))));
        }
        md.push('\n');
    }
    let open: Vec<&&Requirement> = requirements
        .iter()
        .filter(|r| has_choices(columns, &r.id))
        .collect();
    if !open.is_empty() {
        md.push_str("\nWhere the servers chose among accepted readings: ");
        md.push_str(
            &open
                .iter()
                .map(|r| r.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        );
        md.push_str(".\n");
    }
    md
}

/// The whole report as Markdown, documents in the order of `sources`.
pub fn markdown(columns: &[Column], requirements: &[Requirement], sources: &[Source]) -> String {
    let mut md = String::from(
        "# mcp-conform: requirements by source document\n\n\
         Each section lists one document's requirements (level, whose rule: the draft's, \
         the specification's or this project's own reading, and the words it rests on) \
         and, per server, the worst outcome over every scenario and protocol era that \
         checks it, with the alternative the server chose where a scenario accepts \
         several readings.\n",
    );
    for source in sources {
        let own: Vec<&Requirement> = requirements
            .iter()
            .filter(|r| r.document == source.id)
            .collect();
        if !own.is_empty() {
            md.push_str(&section(source, &own, columns));
        }
    }
    md
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
            .filter(|s| requirements.iter().any(|r| r.document == s.id))
            .count();
        assert_eq!(headings.len(), expected, "{md}");
        assert!(md.contains("| SEP1300-FLT-01 | MUST | draft |"), "{md}");
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
