//! `explain ID` (a requirement or a built-in scenario: its rule, whose rule
//! it is, where to read it) and `show ID` (a built-in scenario's YAML with
//! that context), so a verdict can be judged without the source tree.

use anyhow::{bail, Result};

use mcp_conform::builtin;
use mcp_conform::requirements::{self, Requirement};
use mcp_conform::scenario::model::{Scenario, SpecRef};
use mcp_conform::sources;

/// What an id named, found case-insensitively.
enum Found<'a> {
    Requirement(&'a Requirement),
    Scenario(&'a Scenario),
}

fn lookup<'a>(
    id: &str,
    registry: &'a [Requirement],
    scenarios: &'a [Scenario],
) -> Option<Found<'a>> {
    if let Some(r) = registry.iter().find(|r| r.id.eq_ignore_ascii_case(id)) {
        return Some(Found::Requirement(r));
    }
    scenarios
        .iter()
        .find(|s| s.id.eq_ignore_ascii_case(id))
        .map(Found::Scenario)
}

/// `explain --document ID`: a source document and every requirement resting on it.
pub fn document(id: &str) -> Result<u8> {
    let all = sources::all().map_err(|e| anyhow::anyhow!("{e}"))?;
    let Some(source) = all.iter().find(|s| s.id.eq_ignore_ascii_case(id)) else {
        let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
        bail!(
            "no source document {id:?}; the documents are: {}",
            ids.join(", ")
        );
    };
    let registry = requirements::all().map_err(|e| anyhow::anyhow!("{e}"))?;
    print!(
        "{}",
        mcp_conform::report::drafts::document_text(source, &registry)
    );
    Ok(super::EXIT_OK)
}

/// `explain ID`.
pub fn explain(id: &str) -> Result<u8> {
    let (registry, scenarios) = catalog()?;
    match lookup(id, &registry, &scenarios) {
        Some(Found::Requirement(req)) => {
            print!("{}", explain_requirement(req, &scenarios));
            Ok(super::EXIT_OK)
        }
        Some(Found::Scenario(s)) => {
            print!("{}", explain_scenario(s, &registry));
            Ok(super::EXIT_OK)
        }
        None => bail!("{}", not_found(id, &registry, &scenarios)),
    }
}

/// `show ID`: the scenario file as shipped, after a header naming its
/// requirements, level, whose rule each is, their quotes and where to read them.
pub fn show(id: &str) -> Result<u8> {
    let (registry, scenarios) = catalog()?;
    let scenario = match lookup(id, &registry, &scenarios) {
        Some(Found::Scenario(s)) => s,
        Some(Found::Requirement(r)) => bail!(
            "{} is a requirement, not a scenario: `mcp-conform explain {}` lists the scenarios that check it",
            r.id,
            r.id
        ),
        None => bail!("{}", not_found(id, &registry, &scenarios)),
    };
    let path = scenario
        .origin
        .strip_prefix(mcp_conform::scenario::model::BUILTIN_PREFIX)
        .unwrap_or(&scenario.origin);
    let Some(text) = builtin::file(path) else {
        bail!("the text of {} ({path}) is not embedded", scenario.id);
    };
    print!("{}", show_header(scenario, &registry));
    print!("{text}");
    if !text.ends_with('\n') {
        println!();
    }
    Ok(super::EXIT_OK)
}

fn catalog() -> Result<(Vec<Requirement>, Vec<Scenario>)> {
    let registry = requirements::all()?;
    let scenarios = builtin::scenarios().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((registry, scenarios))
}

/// The requirement's document as a reader finds it: public name, status, link.
fn document_line(req: &Requirement) -> String {
    match sources::find(&req.document) {
        Some(src) => {
            let place = src
                .location(req.section.as_deref())
                .map(|l| format!(" <{l}>"))
                .unwrap_or_default();
            format!("{} ({}){place}", src.title, src.status.as_str())
        }
        None => req.document.clone(),
    }
}

fn explain_requirement(req: &Requirement, scenarios: &[Scenario]) -> String {
    let mut out = format!(
        "{} [{}] ({})\n{}\n",
        req.id,
        req.level_label(),
        req.profile,
        req.text
    );
    out.push_str(&format!("rule of: {}\n", req.source.as_str()));
    if let Some(basis) = req.basis {
        out.push_str(&format!(
            "basis: {} (docs/interpretations.md#{}): {}\n",
            basis.as_str(),
            requirements::BASIS_ANCHOR,
            req.basis_reason()
                .unwrap_or_else(|| "no reason written down".into())
        ));
    }
    out.push_str(&format!("source: {}\n", document_line(req)));
    if let Some(section) = &req.section {
        out.push_str(&format!("section: {section}\n"));
    }
    if let Some(q) = &req.quote {
        out.push_str(&format!("quote: \"{q}\"\n"));
    }
    if req.document == sources::INTERPRETATIONS {
        out.push_str(&reasoning(req.section.as_deref()));
    }
    out.push_str("scenarios:\n");
    let covering: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| s.requirements.contains(&req.id))
        .collect();
    for s in &covering {
        out.push_str(&format!("  {}  [{}] {}\n", s.id, s.level, s.title));
    }
    if covering.is_empty() {
        out.push_str("  (none)\n");
    }
    if !req.rules.is_empty() {
        out.push_str("trace rules (watch, client):\n");
        for id in &req.rules {
            out.push_str(&format!("  {id}\n"));
        }
    }
    out
}

/// This project's reasoning for a rule, from the shipped interpretations document.
fn reasoning(anchor: Option<&str>) -> String {
    let Some(text) = anchor.and_then(sources::interpretation) else {
        return String::new();
    };
    // the section starts inside its anchor line: skip that line
    let body = text.split_once('\n').map_or("", |(_, rest)| rest).trim();
    let mut out = String::from("reasoning (docs/interpretations.md):\n");
    for line in body.lines() {
        if line.trim().is_empty() {
            out.push('\n');
        } else {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

fn requirement_line(id: &str, registry: &[Requirement]) -> String {
    match registry.iter().find(|r| r.id == *id) {
        Some(r) => format!(
            "{} [{}, {} rule]: {}",
            r.id,
            r.level_label(),
            r.source.as_str(),
            r.text
        ),
        None => format!("{id} (not in the registry)"),
    }
}

fn spec_lines(spec: &SpecRef, prefix: &str) -> String {
    let mut out = format!("{prefix}spec: {}\n", spec.cite());
    if let Some(q) = &spec.quote {
        out.push_str(&format!("{prefix}  \"{q}\"\n"));
    }
    out
}

/// A scenario's requirements and the sources it quotes, a line each (and
/// the quote's), every line after `prefix`.
fn grounds(s: &Scenario, registry: &[Requirement], prefix: &str) -> String {
    let mut out = String::new();
    for id in &s.requirements {
        let line = requirement_line(id, registry);
        out.push_str(&format!("{prefix}requirement: {line}\n"));
    }
    for spec in &s.spec {
        out.push_str(&spec_lines(spec, prefix));
    }
    out
}

fn explain_scenario(s: &Scenario, registry: &[Requirement]) -> String {
    let mut out = format!("{} [{}] ({})\n{}\n", s.id, s.level, s.profile, s.title);
    out.push_str(&grounds(s, registry, ""));
    if let Some(d) = &s.description {
        out.push_str(&format!("description: {}\n", d.trim()));
    }
    out.push_str(&format!(
        "file: {} (`mcp-conform show {}` prints it)\n",
        s.origin, s.id
    ));
    out
}

fn show_header(s: &Scenario, registry: &[Requirement]) -> String {
    let mut out = format!("# {} [{}] ({}), {}\n", s.id, s.level, s.profile, s.origin);
    out.push_str(&grounds(s, registry, "# "));
    out.push_str("#\n");
    out
}

/// The miss message, with the closest known id.
fn not_found(id: &str, registry: &[Requirement], scenarios: &[Scenario]) -> String {
    let ids = registry
        .iter()
        .map(|r| r.id.as_str())
        .chain(scenarios.iter().map(|s| s.id.as_str()));
    match closest(id, ids) {
        Some(best) => format!(
            "no requirement or scenario named {id:?}; did you mean {best:?}? (`mcp-conform --list` lists the scenarios)"
        ),
        None => format!("no requirement or scenario named {id:?} (try `mcp-conform --list`)"),
    }
}

/// The candidate most like `wanted`, case-insensitively: one that contains
/// it (the shortest), else the smallest edit distance.
fn closest<'a>(wanted: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let wanted = wanted.to_lowercase();
    let candidates: Vec<&str> = candidates.collect();
    let containing = candidates
        .iter()
        .filter(|c| !wanted.is_empty() && c.to_lowercase().contains(&wanted))
        .min_by_key(|c| c.len());
    if let Some(c) = containing {
        return Some(c);
    }
    candidates
        .into_iter()
        .min_by_key(|c| edit_distance(&wanted, &c.to_lowercase()))
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closest_id_contains_the_query_or_is_fewest_edits_away() {
        let ids = [
            "SEP1300-FLT-01",
            "SEP1300-FLT-02",
            "sep-1300/filter-each-group",
        ];
        assert_eq!(
            closest("sep1300-flt-1", ids.iter().copied()),
            Some("SEP1300-FLT-01")
        );
        assert_eq!(
            closest("each-group", ids.iter().copied()),
            Some("sep-1300/filter-each-group")
        );
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(closest("x", std::iter::empty()), None);
    }
}
