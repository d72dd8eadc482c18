//! The table of the MCP 2026-07-28 server rules (docs/mcp-2026-server-rules.md)
//! cannot drift from the catalog: every requirement id it names is in the
//! registry, every scenario it names is built in, runs in the 2026-07-28
//! era and names that requirement, every row either names a scenario or
//! gives its reason, and at most five rules are left unchecked. Its quotes
//! are checked verbatim against the released pages by `quotes.rs`.

use std::collections::BTreeSet;

use libtest_mimic::Trial;

use crate::common;

const TABLE: &str = "docs/mcp-2026-server-rules.md";
const ERA: &str = "2026-07-28";
/// Rules the wire could show that no scenario checks yet.
const MOST_UNCHECKED: usize = 5;

/// One row of the table.
pub struct Row {
    pub line: usize,
    pub quote: String,
    pub requirements: Vec<String>,
    pub scenarios: Vec<String>,
    /// The last cell: scenarios, or the reason there is none.
    pub verdict: String,
}

/// The rows of every table in the document whose first cell links to a
/// page of the revision.
pub fn rows() -> Vec<Row> {
    let text = std::fs::read_to_string(common::root().join(TABLE))
        .unwrap_or_else(|e| panic!("{TABLE}: {e}"));
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("| [") && l.contains("/specification/2026-07-28/"))
        .map(|(i, l)| parse_row(i + 1, l))
        .collect()
}

fn parse_row(line: usize, text: &str) -> Row {
    let cells: Vec<&str> = text.trim().trim_matches('|').split(" | ").collect();
    assert_eq!(
        cells.len(),
        4,
        "{TABLE}:{line}: a row has 4 cells (page, rule, requirement, check), found {}",
        cells.len()
    );
    let quote = cells[1]
        .trim()
        .trim_start_matches('"')
        .trim_end_matches('"')
        .to_string();
    let verdict = cells[3].trim().to_string();
    // A reason may name a scenario of another era; only a check names ones
    // that run in this one.
    let scenarios = if verdict.starts_with("**") {
        Vec::new()
    } else {
        ticked(&verdict)
            .into_iter()
            .filter(|t| t.contains('/'))
            .collect()
    };
    Row {
        line,
        quote,
        requirements: ticked(cells[2]),
        scenarios,
        verdict,
    }
}

/// The `code` spans of a cell.
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn the_table_names_only_known_requirements_and_2026_scenarios() {
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    let known: BTreeSet<&str> = registry.iter().map(|r| r.id.as_str()).collect();
    let rows = rows();
    assert!(rows.len() >= 74, "{TABLE}: only {} rules", rows.len());
    let mut problems = Vec::new();
    let mut unchecked = 0;
    for row in &rows {
        let at = format!("{TABLE}:{}", row.line);
        for r in row
            .requirements
            .iter()
            .filter(|r| !known.contains(r.as_str()))
        {
            problems.push(format!("{at}: unknown requirement {r}"));
        }
        for id in &row.scenarios {
            let Some(s) = scenarios.iter().find(|s| &s.id == id) else {
                problems.push(format!("{at}: unknown scenario {id}"));
                continue;
            };
            if !s.eras.is_empty() && !s.eras.iter().any(|e| e.as_str() == ERA) {
                problems.push(format!("{at}: {id} does not run in {ERA}"));
            }
            if !row.requirements.iter().any(|r| s.requirements.contains(r)) {
                problems.push(format!(
                    "{at}: {id} names none of {:?} (it names {:?})",
                    row.requirements, s.requirements
                ));
            }
        }
        if row.scenarios.is_empty() {
            let reason = row.verdict.split_once(':').map(|(_, r)| r.trim());
            if reason.is_none_or(|r| r.len() <= 10) {
                problems.push(format!("{at}: no scenario and no reason"));
            }
            if row.verdict.starts_with("**not checked**") {
                unchecked += 1;
            } else if !row.verdict.starts_with("**not on the wire**") {
                problems.push(format!(
                    "{at}: a row without a scenario says **not checked**: or **not on the wire**:"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        unchecked <= MOST_UNCHECKED,
        "{TABLE}: {unchecked} rules the wire could show are unchecked (at most {MOST_UNCHECKED})"
    );
}

pub fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "server_rules::the_table_names_only_known_requirements_and_2026_scenarios",
        || {
            the_table_names_only_known_requirements_and_2026_scenarios();
            Ok(())
        },
    )]
}
