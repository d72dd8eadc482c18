//! Which scenarios a run uses: the built-in catalog, `--scenarios` paths,
//! `-k` and `-p` selection.

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
    mcp_conform::requirements::drafts_only_if(args.drafts_only, scenarios)
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
