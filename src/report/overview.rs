//! What a run amounts to for the server under test, shared by the console,
//! Markdown and HTML reports: which scenarios applied (and how they went),
//! which profiles the server does not offer and the reason that decided it,
//! and each distinct problem once with the eras it occurred in.
//!
//! A scenario that does not apply to a server (a draft it does not
//! implement) is skipped; counting those next to the verdicts drowned them,
//! so they are folded into one count per reason here.

use std::collections::BTreeMap;

use crate::run::events::Counts;
use crate::run::outcome::{Outcome, ScenarioResult};

/// The facts of one result an overview needs (the console keeps only these
/// for passing and skipped scenarios).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Brief {
    pub id: String,
    pub profile: String,
    pub era: String,
    pub outcome: Outcome,
    /// The skip reason (empty for other outcomes).
    pub reason: String,
}

impl Brief {
    pub fn of(r: &ScenarioResult) -> Self {
        Self {
            id: r.id.clone(),
            profile: r.profile.clone(),
            era: r.era.clone(),
            outcome: r.outcome,
            reason: if r.outcome == Outcome::Skip {
                r.message.clone()
            } else {
                String::new()
            },
        }
    }
}

/// A profile none of whose scenarios applied, with the skip reason most of
/// them gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotOffered {
    pub profile: String,
    pub reason: String,
}

/// Skipped scenario runs sharing one reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkipGroup {
    pub reason: String,
    /// Distinct scenario ids, in order of first appearance.
    pub ids: Vec<String>,
    /// Runs (a scenario skipped in three eras counts three).
    pub runs: usize,
}

/// A run, summed up for its reader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overview {
    /// Distinct scenarios that applied (ran to a verdict) in at least one era.
    pub applied: usize,
    /// Counts of the runs that applied (no skips).
    pub runs: Counts,
    /// Skipped runs.
    pub skipped: usize,
    /// Eras tested, each with its counts (skips included), in the run's order.
    pub eras: Vec<(String, Counts)>,
    /// Profiles with at least one run that applied, with their counts over
    /// every era (skips included).
    pub profiles: Vec<(String, Counts)>,
    pub not_offered: Vec<NotOffered>,
    /// Skip reasons, most runs first.
    pub skips: Vec<SkipGroup>,
}

impl Overview {
    /// The overview of `results`, eras in the order of `eras` (others after).
    pub fn of<'a>(results: impl IntoIterator<Item = &'a Brief>, eras: &[String]) -> Self {
        let mut o = Overview::default();
        let mut applied_ids: Vec<&str> = Vec::new();
        let mut by_era: BTreeMap<(usize, &str), Counts> = BTreeMap::new();
        let mut by_profile: BTreeMap<&str, (Counts, BTreeMap<&str, usize>)> = BTreeMap::new();
        let mut skips: Vec<SkipGroup> = Vec::new();
        for b in results {
            let (counts, reasons) = by_profile.entry(b.profile.as_str()).or_default();
            counts.add(b.outcome);
            if !b.era.is_empty() {
                let rank = eras.iter().position(|e| *e == b.era).unwrap_or(usize::MAX);
                by_era
                    .entry((rank, b.era.as_str()))
                    .or_default()
                    .add(b.outcome);
            }
            if b.outcome != Outcome::Skip {
                o.runs.add(b.outcome);
                if !applied_ids.contains(&b.id.as_str()) {
                    applied_ids.push(b.id.as_str());
                }
                continue;
            }
            o.skipped += 1;
            *reasons.entry(b.reason.as_str()).or_default() += 1;
            match skips.iter_mut().find(|g| g.reason == b.reason) {
                Some(g) => {
                    g.runs += 1;
                    if !g.ids.contains(&b.id) {
                        g.ids.push(b.id.clone());
                    }
                }
                None => skips.push(SkipGroup {
                    reason: b.reason.clone(),
                    ids: vec![b.id.clone()],
                    runs: 1,
                }),
            }
        }
        o.applied = applied_ids.len();
        o.eras = by_era
            .into_iter()
            .map(|((_, era), c)| (era.to_string(), c))
            .collect();
        for (profile, (counts, reasons)) in by_profile {
            if counts.skipped < counts.total() {
                o.profiles.push((profile.to_string(), counts));
                continue;
            }
            // The reason most of its scenarios gave; ties go to the first in order.
            let reason = reasons
                .iter()
                .max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0)))
                .map(|(r, _)| r.to_string())
                .unwrap_or_default();
            o.not_offered.push(NotOffered {
                profile: profile.to_string(),
                reason,
            });
        }
        skips.sort_by_key(|s| std::cmp::Reverse(s.runs));
        o.skips = skips;
        o
    }

    /// "25 scenarios applied to this server in 3 eras (71 runs): 60 passed, 6 failed, 2 warned".
    pub fn headline(&self) -> String {
        let eras = match self.eras.len() {
            0 | 1 => String::new(),
            n => format!(" in {n} eras"),
        };
        let runs = if self.runs.total() == self.applied {
            String::new()
        } else {
            format!(" ({} runs)", self.runs.total())
        };
        // A client run's scenarios are all of the `client` profile.
        let graded =
            if !self.profiles.is_empty() && self.profiles.iter().all(|(p, _)| p == "client") {
                "this client"
            } else {
                "this server"
            };
        format!(
            "{} scenario{} applied to {graded}{eras}{runs}: {}",
            self.applied,
            if self.applied == 1 { "" } else { "s" },
            applied_line(&self.runs)
        )
    }

    /// The profiles not offered on one line: "not offered: a (reason); b (reason)".
    pub fn not_offered_line(&self) -> Option<String> {
        if self.not_offered.is_empty() {
            return None;
        }
        let items: Vec<String> = self
            .not_offered
            .iter()
            .map(|n| format!("{} ({})", n.profile, n.reason))
            .collect();
        Some(format!("not offered: {}", items.join("; ")))
    }
}

/// "60 passed, 6 failed, 2 warned" (+ info and errors when present): counts
/// of runs that applied, without skips.
pub fn applied_line(c: &Counts) -> String {
    let mut line = format!(
        "{} passed, {} failed, {} warned",
        c.passed, c.failed, c.warned
    );
    if c.info > 0 {
        line.push_str(&format!(", {} info", c.info));
    }
    if c.errors > 0 {
        line.push_str(&format!(", {} errors", c.errors));
    }
    line
}

/// A line of counts that adds up: "71 runs: 60 passed, …; 140 skipped".
pub fn counted_line(c: &Counts) -> String {
    format!(
        "{} runs: {}; {} skipped",
        c.total(),
        applied_line(c),
        c.skipped
    )
}

/// One distinct problem: results of one scenario with the same outcome and
/// message, in every era it occurred in.
#[derive(Debug, Clone)]
pub struct Problem<'a> {
    /// The first of them (the one shown).
    pub result: &'a ScenarioResult,
    pub eras: Vec<&'a str>,
}

/// Failures, errors and warnings (not those the baseline expects), each
/// distinct (scenario, outcome, message) once: failures and errors first,
/// then warnings, each by id.
pub fn problems<'a>(results: impl IntoIterator<Item = &'a ScenarioResult>) -> Vec<Problem<'a>> {
    let problems = results.into_iter().filter(|r| {
        matches!(r.outcome, Outcome::Fail | Outcome::Error | Outcome::Warn) && !r.expected_failure
    });
    let mut out: Vec<Problem<'a>> = merge_eras(problems)
        .into_iter()
        .map(|(result, eras)| Problem { result, eras })
        .collect();
    out.sort_by(|a, b| {
        (a.result.outcome == Outcome::Warn)
            .cmp(&(b.result.outcome == Outcome::Warn))
            .then(a.result.id.cmp(&b.result.id))
    });
    out
}

/// Identical results (scenario, outcome, message) of several eras as one,
/// in the order each first came: the result shown is the oldest era's, and
/// the eras are oldest first, whatever order the results finished in (a
/// run interleaves its eras).
fn merge_eras<'a>(
    results: impl IntoIterator<Item = &'a ScenarioResult>,
) -> Vec<(&'a ScenarioResult, Vec<&'a str>)> {
    let mut out: Vec<(&'a ScenarioResult, Vec<&'a str>)> = Vec::new();
    for r in results {
        let same = |(shown, _): &&mut (&'a ScenarioResult, Vec<&'a str>)| {
            shown.id == r.id
                && shown.outcome == r.outcome
                && same_problem(&shown.message, &r.message)
        };
        match out.iter_mut().find(same) {
            Some((shown, eras)) => {
                if !r.era.is_empty() && !eras.contains(&r.era.as_str()) {
                    eras.push(&r.era);
                    // Revisions are dates: their order is the text's.
                    eras.sort_unstable();
                }
                if !r.era.is_empty() && r.era < shown.era {
                    *shown = r;
                }
            }
            None => {
                let eras = [r.era.as_str()].into_iter().filter(|e| !e.is_empty());
                out.push((r, eras.collect()));
            }
        }
    }
    out
}

/// Whether two results' messages tell the same problem. A dropped message's
/// finding names the request the harness sent behind it ("the ping with id
/// 45") and the grace it then waited ("within 200 ms"): the id is the
/// harness's own counter, which differs with what the warm server served
/// before, and the grace follows the server's pace, so neither tells one
/// era's problem from another's.
fn same_problem(a: &str, b: &str) -> bool {
    a == b || without_sentinel_details(a) == without_sentinel_details(b)
}

fn without_sentinel_details(message: &str) -> std::borrow::Cow<'_, str> {
    static DETAILS: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?P<sentinel>the \S+) with id [^,]+(?P<after>, sent right after it, was answered, and nothing more came within )\d+ ms",
        )
        .ok()
    });
    match DETAILS.as_ref() {
        Some(re) => re.replace_all(message, "${sentinel}${after}the grace"),
        None => std::borrow::Cow::Borrowed(message),
    }
}

/// Where an outcome goes in a report that leads with what to fix:
/// failures (and errors), then warnings, info, passes, skips.
pub fn fix_first_rank(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Fail => 0,
        Outcome::Error => 1,
        Outcome::Warn => 2,
        Outcome::Info => 3,
        Outcome::Pass => 4,
        Outcome::Skip => 5,
    }
}

/// One row of a results list: identical results (scenario, outcome,
/// message) of several eras merged, the eras named.
#[derive(Debug, Clone)]
pub struct Row<'a> {
    pub result: &'a ScenarioResult,
    pub eras: Vec<&'a str>,
}

/// Every result as rows, what to fix first ([`fix_first_rank`]); within an
/// outcome, in the order given (catalog order).
pub fn rows<'a>(results: impl IntoIterator<Item = &'a ScenarioResult>) -> Vec<Row<'a>> {
    let mut out: Vec<Row<'a>> = merge_eras(results)
        .into_iter()
        .map(|(result, eras)| Row { result, eras })
        .collect();
    out.sort_by_key(|row| fix_first_rank(row.result.outcome));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief(id: &str, profile: &str, era: &str, outcome: Outcome, reason: &str) -> Brief {
        Brief {
            id: id.into(),
            profile: profile.into(),
            era: era.into(),
            outcome,
            reason: reason.into(),
        }
    }

    #[test]
    fn rows_lead_with_failures_and_keep_catalog_order_within_an_outcome() {
        let mut all = Vec::new();
        for era in ["2025-06-18", "2025-11-25"] {
            for (id, outcome) in [
                ("base/a", Outcome::Pass),
                ("base/b", Outcome::Skip),
                ("base/c", Outcome::Warn),
                ("base/d", Outcome::Fail),
                ("base/e", Outcome::Info),
                ("base/f", Outcome::Fail),
            ] {
                let mut r = ScenarioResult::for_test(id, outcome);
                r.era = era.into();
                all.push(r);
            }
        }
        let rows = rows(&all);
        let ids: Vec<&str> = rows.iter().map(|r| r.result.id.as_str()).collect();
        assert_eq!(
            ids,
            ["base/d", "base/f", "base/c", "base/e", "base/a", "base/b"]
        );
        assert!(rows.iter().all(|r| r.eras == ["2025-06-18", "2025-11-25"]));
    }

    #[test]
    fn a_dropped_message_is_one_problem_whatever_id_and_grace_its_sentinel_had() {
        let dropped = |era: &str, sentinel: &str, grace: u32| {
            let mut r = ScenarioResult::for_test("base/parse-error", Outcome::Fail);
            r.era = era.into();
            r.message = format!(
                "step 'garbage': no answer to the raw message: {sentinel}, sent right after it, was answered, and nothing more came within {grace} ms"
            );
            r
        };
        let all = [
            dropped("2025-06-18", "the ping with id 45", 200),
            dropped("2025-11-25", "the ping with id 2", 100),
            dropped("2026-07-28", "the server/discover with id 7", 100),
        ];
        let found = problems(&all);
        let eras: Vec<Vec<&str>> = found.iter().map(|p| p.eras.clone()).collect();
        assert_eq!(eras, [vec!["2025-06-18", "2025-11-25"], vec!["2026-07-28"]]);
        // Another answer is another problem, numbers and all.
        let mut other = ScenarioResult::for_test("base/parse-error", Outcome::Fail);
        other.era = "2025-11-25".into();
        other.message = "step 'garbage': at error.code: expected -32700, found 0".into();
        let mut first = other.clone();
        first.era = "2025-06-18".into();
        first.message = "step 'garbage': at error.code: expected -32700, found -32603".into();
        assert_eq!(problems(&[first, other]).len(), 2);
    }

    #[test]
    fn eras_of_a_problem_are_oldest_first_whatever_order_they_finished_in() {
        let mut all = Vec::new();
        for era in ["2026-07-28", "2025-06-18", "2025-11-25"] {
            let mut r = ScenarioResult::for_test("base/d", Outcome::Fail);
            r.era = era.into();
            all.push(r);
        }
        let found = problems(&all);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].eras, ["2025-06-18", "2025-11-25", "2026-07-28"]);
        assert_eq!(
            found[0].result.era, "2025-06-18",
            "the oldest era's is shown"
        );
        assert_eq!(rows(&all)[0].eras, found[0].eras);
    }

    #[test]
    fn skips_fold_into_profiles_not_offered_with_their_reason() {
        let eras = vec!["2025-06-18".to_string(), "2025-11-25".to_string()];
        let mut all = Vec::new();
        for era in &eras {
            all.push(brief("base/a", "base", era, Outcome::Pass, ""));
            all.push(brief("base/b", "base", era, Outcome::Fail, ""));
            all.push(brief("base/c", "base", era, Outcome::Skip, "needs tools"));
            all.push(brief(
                "sep-1/x",
                "sep-1",
                era,
                Outcome::Skip,
                "no x capability",
            ));
            all.push(brief(
                "sep-1/y",
                "sep-1",
                era,
                Outcome::Skip,
                "no x capability",
            ));
            all.push(brief("sep-1/z", "sep-1", era, Outcome::Skip, "needs tools"));
        }
        let o = Overview::of(&all, &eras);
        assert_eq!(o.applied, 2);
        assert_eq!((o.runs.passed, o.runs.failed, o.skipped), (2, 2, 8));
        assert_eq!(
            o.headline(),
            "2 scenarios applied to this server in 2 eras (4 runs): 2 passed, 2 failed, 0 warned"
        );
        assert_eq!(o.profiles.len(), 1);
        assert_eq!(
            counted_line(&o.profiles[0].1),
            "6 runs: 2 passed, 2 failed, 0 warned; 2 skipped"
        );
        assert_eq!(
            o.not_offered,
            vec![NotOffered {
                profile: "sep-1".into(),
                reason: "no x capability".into()
            }]
        );
        // The era lines add up to the whole run.
        let per_era: usize = o.eras.iter().map(|(_, c)| c.total()).sum();
        assert_eq!(per_era, o.runs.total() + o.skipped);
        // Two reasons, four runs each; one scenario per era counts once.
        let x = o.skips.iter().find(|g| g.reason == "no x capability");
        assert_eq!(x.map(|g| (g.runs, g.ids.len())), Some((4, 2)));
        assert_eq!(o.skips.len(), 2);
    }
}
