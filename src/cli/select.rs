//! Which scenarios a run uses: the built-in catalog, `--scenarios` paths,
//! `-k` and `-p` selection.

use super::RunArgs;
use mcp_conform::builtin::{self, Indexed};
use mcp_conform::scenario::load::{load_path, LoadError, LoadErrors};
use mcp_conform::scenario::model::Scenario;
use mcp_conform::scenario::source::Position;

/// A catalog ready to select from, with notes for the console.
pub struct Loaded {
    pub scenarios: Vec<Scenario>,
    /// `--scenarios` files that replace a built-in scenario of the same id.
    pub replaced: Vec<String>,
}

/// What selection (`-p`, `-k`, `--skip`, `--shard`) reads of a scenario:
/// a compiled one, or a built-in one not compiled yet.
pub trait Selectable {
    fn id(&self) -> &str;
    fn profile(&self) -> &str;
    fn requirement_ids(&self) -> impl Iterator<Item = &str>;

    /// Whether it checks `requirement` (any case).
    fn checks(&self, requirement: &str) -> bool {
        self.requirement_ids()
            .any(|r| r.eq_ignore_ascii_case(requirement))
    }
}

impl Selectable for Scenario {
    fn id(&self) -> &str {
        &self.id
    }
    fn profile(&self) -> &str {
        &self.profile
    }
    fn requirement_ids(&self) -> impl Iterator<Item = &str> {
        self.requirements.iter().map(String::as_str)
    }
}

impl Selectable for Indexed {
    fn id(&self) -> &str {
        self.id
    }
    fn profile(&self) -> &str {
        self.profile
    }
    fn requirement_ids(&self) -> impl Iterator<Item = &str> {
        self.requirements.iter().copied()
    }
}

/// A scenario a run may select: a built-in one, compiled once selected,
/// or one of the user's, compiled already.
pub enum Candidate {
    Builtin(Indexed),
    User(Box<Scenario>),
}

impl Selectable for Candidate {
    fn id(&self) -> &str {
        match self {
            Self::Builtin(b) => b.id(),
            Self::User(s) => s.id(),
        }
    }
    fn profile(&self) -> &str {
        match self {
            Self::Builtin(b) => b.profile(),
            Self::User(s) => s.profile(),
        }
    }
    fn requirement_ids(&self) -> impl Iterator<Item = &str> {
        let (builtin, user) = match self {
            Self::Builtin(b) => (Some(b.requirement_ids()), None),
            Self::User(s) => (None, Some(s.requirement_ids())),
        };
        builtin
            .into_iter()
            .flatten()
            .chain(user.into_iter().flatten())
    }
}

/// The built-in catalog as indexed, with the user's scenarios in it
/// ([`with_user_files`]).
pub fn candidates(index: Vec<Indexed>, user: Vec<Scenario>) -> (Vec<Candidate>, Vec<String>) {
    let index = index.into_iter().map(Candidate::Builtin).collect();
    with_user_files(index, user, |s| Candidate::User(Box::new(s)))
}

/// The selected candidates compiled, in their order: the built-in ones
/// loaded now, the user's as they are.
pub fn compile(selected: Vec<Candidate>) -> Result<Vec<Scenario>, String> {
    let paths: Vec<&str> = selected
        .iter()
        .filter_map(|c| match c {
            Candidate::Builtin(b) => Some(b.path),
            Candidate::User(_) => None,
        })
        .collect();
    let mut compiled: std::collections::HashMap<String, Scenario> = builtin::scenarios_at(&paths)
        .map_err(|e| format!("the built-in scenarios did not load: {e}"))?
        .into_iter()
        .map(|s| (s.id.clone(), s))
        .collect();
    selected
        .into_iter()
        .map(|c| match c {
            Candidate::User(s) => Ok(*s),
            Candidate::Builtin(b) => compiled.remove(b.id).ok_or_else(|| {
                format!(
                    "internal: the built-in scenario {} was not compiled from {}",
                    b.id, b.path
                )
            }),
        })
        .collect()
}

/// Loads the catalog for a run; scenario files with errors stop everything.
pub fn load(args: &RunArgs) -> Result<Loaded, LoadErrors> {
    let builtin = if args.no_builtin {
        Vec::new()
    } else {
        builtin::scenarios()?
    };
    let (scenarios, replaced) = with_user_files(builtin, load_user_files(args)?, |s| s);
    Ok(Loaded {
        scenarios,
        replaced,
    })
}

/// Whether the run may compile the built-in scenarios it selects while its
/// server starts: it selects from the index of the built-in catalog (the
/// user's own files are loaded first), and a pattern that names nothing is
/// refused before anything starts all the same. Listing prints what only
/// compiling tells (levels, titles), and `--no-builtin` has nothing to
/// compile later.
pub fn builtins_may_load_later(args: &RunArgs) -> bool {
    !args.no_builtin && !args.list && !args.list_profiles
}

/// The scenarios of `--scenarios` paths, every file loaded; ids must be
/// unique among them (one may replace a built-in scenario).
pub fn load_user_files(args: &RunArgs) -> Result<Vec<Scenario>, LoadErrors> {
    let mut user: Vec<Scenario> = Vec::new();
    let mut errors = Vec::new();
    for path in &args.scenarios {
        match load_path(path) {
            Ok(mut extra) => {
                mcp_conform::sources::resolve_scenarios(&mut extra);
                for s in extra {
                    match user.iter().find(|u| u.id == s.id) {
                        Some(first) => errors.push(LoadError {
                            file: s.origin.clone(),
                            position: Position { line: 1, col: 1 },
                            message: format!(
                                "scenario id '{}' is already used by {}",
                                s.id, first.origin
                            ),
                        }),
                        None => user.push(s),
                    }
                }
            }
            Err(LoadErrors(mut e)) => errors.append(&mut e),
        }
    }
    if errors.is_empty() {
        Ok(user)
    } else {
        Err(LoadErrors(errors))
    }
}

/// The built-in catalog with the user's scenarios: one with a built-in id
/// takes its place (the notes say which), the others follow in their order.
pub fn with_user_files<T: Selectable>(
    mut catalog: Vec<T>,
    user: Vec<Scenario>,
    wrap: impl Fn(Scenario) -> T,
) -> (Vec<T>, Vec<String>) {
    let mut replaced = Vec::new();
    for s in user {
        match catalog.iter().position(|b| b.id() == s.id) {
            Some(i) => {
                replaced.push(format!(
                    "note: {} replaces the built-in scenario {}",
                    s.origin, s.id
                ));
                catalog[i] = wrap(s);
            }
            None => catalog.push(wrap(s)),
        }
    }
    (catalog, replaced)
}

/// Why a selection is refused: it would run nothing, or name what doesn't exist.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SelectionError {
    #[error("unknown profile {name:?}{}; the profiles are: {}", did_you_mean(.closest), .valid.join(", "))]
    UnknownProfile {
        name: String,
        valid: Vec<String>,
        closest: Option<String>,
    },
    #[error("-k {pattern:?} matches no scenario{}{} (see `mcp-conform --list`)", scope(.profiles), did_you_mean(.closest))]
    NoMatch {
        pattern: String,
        profiles: Vec<String>,
        closest: Option<String>,
    },
    #[error("the selection is empty: {0}; nothing would be tested")]
    Empty(String),
}

fn did_you_mean(closest: &Option<String>) -> String {
    closest
        .as_deref()
        .map(|c| format!(" (did you mean {c}?)"))
        .unwrap_or_default()
}

fn scope(profiles: &[String]) -> String {
    if profiles.is_empty() {
        String::new()
    } else {
        format!(" in profile {}", profiles.join(", "))
    }
}

/// The candidate closest to `word` when it is close enough to be a typo
/// (case is ignored: `SEP-1300` suggests `sep-1300`).
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let word = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&word, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_string())
}

/// Profiles of a catalog, sorted, each once.
pub fn profiles<T: Selectable>(scenarios: &[T]) -> Vec<String> {
    let set: std::collections::BTreeSet<&str> = scenarios.iter().map(|s| s.profile()).collect();
    set.into_iter().map(str::to_string).collect()
}

/// Whether `-k PATTERN` selects `s`: its id (substring or glob) or one of
/// its requirement ids (exact, any case).
pub fn selects(s: &impl Selectable, pattern: &str) -> bool {
    id_matches(s.id(), pattern) || s.checks(pattern)
}

/// Applies `-p`, `-k` and `--skip`; refuses a selection that names what
/// doesn't exist or would test nothing. (`--drafts-only` changes levels,
/// not the selection: `requirements::drafts_only_if`.)
pub fn select<T: Selectable>(scenarios: Vec<T>, args: &RunArgs) -> Result<Vec<T>, SelectionError> {
    let valid = profiles(&scenarios);
    for name in &args.profiles {
        if !valid.contains(name) {
            return Err(SelectionError::UnknownProfile {
                name: name.clone(),
                closest: closest(name, valid.iter().map(String::as_str)),
                valid,
            });
        }
    }
    let in_profiles: Vec<T> = scenarios
        .into_iter()
        .filter(|s| args.profiles.is_empty() || args.profiles.iter().any(|p| p == s.profile()))
        .collect();
    for pattern in &args.filters {
        if !in_profiles.iter().any(|s| selects(s, pattern)) {
            let ids = in_profiles.iter().map(|s| s.id());
            return Err(SelectionError::NoMatch {
                pattern: pattern.clone(),
                profiles: args.profiles.clone(),
                closest: closest(pattern, ids),
            });
        }
    }
    let selected: Vec<T> = in_profiles
        .into_iter()
        .filter(|s| args.filters.is_empty() || args.filters.iter().any(|f| selects(s, f)))
        .filter(|s| !args.skip.iter().any(|f| selects(s, f)))
        .collect();
    if selected.is_empty() {
        let why = if args.skip.is_empty() {
            "the catalog has no scenario".to_string()
        } else {
            format!(
                "--skip {} excludes every selected scenario",
                args.skip.join(", --skip ")
            )
        };
        return Err(SelectionError::Empty(why));
    }
    Ok(selected)
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

/// `--list`: one line per scenario, with the requirements it checks.
pub fn print_list(scenarios: &[Scenario]) {
    let width = scenarios.iter().map(|s| s.id.len()).max().unwrap_or(0);
    for s in scenarios {
        println!(
            "{:<width$}  {:<22} {:<6} {:<26} {}",
            s.id,
            s.profile,
            s.level.as_str(),
            s.requirements.join(","),
            s.title
        );
    }
    println!("{} scenarios", scenarios.len());
}

/// `--list --json`: the selection as data, for scripts.
pub fn print_list_json(scenarios: &[Scenario]) {
    let items: Vec<serde_json::Value> = scenarios
        .iter()
        .map(|s| {
            serde_json::json!({
                "id": s.id,
                "profile": s.profile,
                "level": s.level.as_str(),
                "title": s.title,
                "requirements": s.requirements,
                "eras": s.eras,
                "transports": s.transports,
                "fixture": s.fixture,
                "origin": s.origin,
            })
        })
        .collect();
    println!("{}", serde_json::Value::Array(items));
}

/// `--list-profiles`: each profile with its scenario count.
pub fn print_profiles(scenarios: &[Scenario], as_json: bool) {
    let counts: Vec<(String, usize)> = profiles(scenarios)
        .into_iter()
        .map(|p| {
            let n = scenarios.iter().filter(|s| s.profile == p).count();
            (p, n)
        })
        .collect();
    if as_json {
        let items: Vec<serde_json::Value> = counts
            .iter()
            .map(|(p, n)| serde_json::json!({"profile": p, "scenarios": n}))
            .collect();
        println!("{}", serde_json::Value::Array(items));
        return;
    }
    for (p, n) in &counts {
        println!("{p:<24} {n} scenarios");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user_scenario(id: &str, profile: &str) -> Scenario {
        let text = format!(
            "id: {id}\ntitle: mine\nprofile: {profile}\nlevel: MUST\nrequirements: []\nsteps:\n  - request: ping\n"
        );
        mcp_conform::scenario::load::load_sources(&[("mine.yaml".into(), text)])
            .unwrap_or_else(|e| panic!("{e}"))
            .remove(0)
    }

    fn ids(scenarios: &[impl Selectable]) -> Vec<&str> {
        scenarios.iter().map(Selectable::id).collect()
    }

    #[test]
    fn a_users_scenario_takes_its_built_in_namesakes_place_and_the_rest_follow() {
        let index = builtin::index().unwrap_or_default();
        let (all, replaced) = candidates(
            index.clone(),
            vec![
                user_scenario("core/ping", "core"),
                user_scenario("base/mine", "base"),
            ],
        );
        assert_eq!(
            replaced,
            ["note: mine.yaml replaces the built-in scenario core/ping"]
        );
        assert_eq!(all.len(), index.len() + 1);
        let ping = all.iter().position(|c| c.id() == "core/ping");
        assert_eq!(ping, index.iter().position(|b| b.id == "core/ping"));
        assert!(matches!(ping.map(|i| &all[i]), Some(Candidate::User(_))));
        assert_eq!(all.last().map(Selectable::id), Some("base/mine"));
    }

    #[test]
    fn a_requirement_id_selects_an_indexed_scenario_as_a_compiled_one() {
        let index = builtin::index().unwrap_or_default();
        let (all, _) = candidates(index, Vec::new());
        let by_requirement: Vec<&str> = all
            .iter()
            .filter(|c| selects(*c, "core-util-01"))
            .map(Selectable::id)
            .collect();
        let compiled = builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
        let expected: Vec<&str> = compiled
            .iter()
            .filter(|s| selects(*s, "core-util-01"))
            .map(Selectable::id)
            .collect();
        assert!(by_requirement.contains(&"core/ping"), "{by_requirement:?}");
        assert_eq!(by_requirement, expected);
    }

    #[test]
    fn compiling_a_selection_keeps_its_order_and_the_users_scenarios() {
        let index = builtin::index().unwrap_or_default();
        let pick = |id: &str| {
            index
                .iter()
                .find(|b| b.id == id)
                .copied()
                .map(Candidate::Builtin)
                .unwrap_or_else(|| panic!("no built-in {id}"))
        };
        let selected = vec![
            pick("core/ping"),
            Candidate::User(Box::new(user_scenario("base/mine", "base"))),
            pick("base/handshake"),
        ];
        let compiled = compile(selected).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ids(&compiled), ["core/ping", "base/mine", "base/handshake"]);
        assert_eq!(compiled[1].title, "mine");
    }

    #[test]
    fn suggests_the_closest_profile_ignoring_case() {
        let valid = ["base", "sep-1300", "sep-1821", "search"];
        assert_eq!(closest("SEP-1300", valid).as_deref(), Some("sep-1300"));
        assert_eq!(closest("serach", valid).as_deref(), Some("search"));
        assert_eq!(closest("nosuchprofile", valid), None);
    }

    #[test]
    fn filters_match_substrings_and_globs() {
        assert!(id_matches("sep-1300/filter-groups-any", "groups"));
        assert!(id_matches("sep-1300/filter-groups-any", "sep-1300/*-any"));
        assert!(!id_matches("sep-1300/filter-groups-any", "base/*"));
        assert!(id_matches("base/id-echo", "base/id-ech?"));
    }
}
