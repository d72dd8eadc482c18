//! Which scenarios a run uses: the built-in catalog, `--scenarios` paths,
//! `-k` and `-p` selection; and `explain`.

use anyhow::{bail, Result};

use super::RunArgs;
use mcp_conform::builtin;
use mcp_conform::scenario::load::{load_path, LoadErrors};
use mcp_conform::scenario::model::Scenario;

/// Loads the catalog for a run; scenario files with errors stop everything.
pub fn load(args: &RunArgs) -> Result<Vec<Scenario>, LoadErrors> {
    let mut scenarios = if args.no_builtin {
        Vec::new()
    } else {
        builtin::scenarios()?
    };
    let mut errors = Vec::new();
    for path in &args.scenarios {
        match load_path(path) {
            Ok(extra) => {
                for s in extra {
                    match scenarios.iter_mut().find(|b| b.id == s.id) {
                        Some(existing) => *existing = s,
                        None => scenarios.push(s),
                    }
                }
            }
            Err(LoadErrors(mut e)) => errors.append(&mut e),
        }
    }
    if errors.is_empty() {
        Ok(scenarios)
    } else {
        Err(LoadErrors(errors))
    }
}

/// Applies `-k` and `-p`.
pub fn select(scenarios: Vec<Scenario>, args: &RunArgs) -> Vec<Scenario> {
    scenarios
        .into_iter()
        .filter(|s| args.profiles.is_empty() || args.profiles.contains(&s.profile))
        .filter(|s| args.filters.is_empty() || args.filters.iter().any(|f| id_matches(&s.id, f)))
        .collect()
}

/// A filter matches an id as a substring, or as a glob when it has `*` or `?`.
pub fn id_matches(id: &str, filter: &str) -> bool {
    if filter.contains('*') || filter.contains('?') {
        glob_match(filter.as_bytes(), id.as_bytes())
    } else {
        id.contains(filter)
    }
}

fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    match (pattern.first(), text.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            glob_match(&pattern[1..], text) || (!text.is_empty() && glob_match(pattern, &text[1..]))
        }
        (Some(b'?'), Some(_)) => glob_match(&pattern[1..], &text[1..]),
        (Some(p), Some(t)) if p == t => glob_match(&pattern[1..], &text[1..]),
        _ => false,
    }
}

/// `--list`: one line per scenario.
pub fn print_list(scenarios: &[Scenario]) {
    let width = scenarios.iter().map(|s| s.id.len()).max().unwrap_or(0);
    for s in scenarios {
        println!(
            "{:<width$}  {:<24} {:<6} {}",
            s.id,
            s.profile,
            s.level.as_str(),
            s.title
        );
    }
    println!("{} scenarios", scenarios.len());
}

/// `explain ID`: a requirement (from scenarios/requirements.yaml) or a scenario.
pub fn explain(id: &str) -> Result<u8> {
    let scenarios = builtin::scenarios().map_err(|e| anyhow::anyhow!("{e}"))?;
    let covering: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| s.requirements.iter().any(|r| r == id))
        .collect();
    if let Some(req) = mcp_conform::requirements::find(id) {
        println!("{} [{}] ({})", req.id, req.level, req.profile);
        println!("{}", req.text);
        println!(
            "source: {}{}",
            req.document,
            req.section
                .as_deref()
                .map(|s| format!(", {s}"))
                .unwrap_or_default()
        );
        if let Some(q) = &req.quote {
            println!("quote: \"{q}\"");
        }
        println!("scenarios:");
        for s in &covering {
            println!("  {}  {}", s.id, s.title);
        }
        if covering.is_empty() {
            println!("  (none)");
        }
        return Ok(super::EXIT_OK);
    }
    if let Some(s) = scenarios.iter().find(|s| s.id == id) {
        println!("{} [{}] ({})", s.id, s.level, s.profile);
        println!("{}", s.title);
        if !s.requirements.is_empty() {
            println!("requirements: {}", s.requirements.join(", "));
        }
        for spec in &s.spec {
            println!(
                "spec: {}{}",
                spec.doc,
                spec.section
                    .as_deref()
                    .map(|x| format!(", {x}"))
                    .unwrap_or_default()
            );
            if let Some(q) = &spec.quote {
                println!("  \"{q}\"");
            }
        }
        return Ok(super::EXIT_OK);
    }
    if !covering.is_empty() {
        for s in &covering {
            println!("{}  {}", s.id, s.title);
        }
        return Ok(super::EXIT_OK);
    }
    bail!("no requirement or scenario named {id:?} (try `mcp-conform --list`)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_match_substrings_and_globs() {
        assert!(id_matches("sep-1300/filter-groups-any", "groups"));
        assert!(id_matches("sep-1300/filter-groups-any", "sep-1300/*-any"));
        assert!(!id_matches("sep-1300/filter-groups-any", "base/*"));
        assert!(id_matches("base/id-echo", "base/id-ech?"));
    }
}
