//! A surface's figures from its answers: every query with the rank of each
//! expected item, server and baseline side by side.

use serde::Serialize;

use super::bm25::Baseline;
use super::metrics::{per_query, percentile, rank_of, Figures, PerQuery};
use super::{Feature, Query, QueryKind, Relevant, Surface};

/// How many results of each query are read (two pages of the search
/// draft): ranks beyond are "not found".
pub const DEPTH: usize = 20;

/// What the server answered to one query.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Item names, best first, and how long the first request took.
    Ranked { names: Vec<String>, latency_ms: f64 },
    /// No usable answer (an error, a timeout): every metric is 0.
    Failed(String),
}

/// One query's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryResult {
    pub query: String,
    pub kind: QueryKind,
    pub relevant: Vec<Relevant>,
    /// The rank of each relevant item in the server's answer (null: not
    /// within the first [`DEPTH`]).
    pub ranks: Vec<Option<usize>>,
    pub baseline_ranks: Vec<Option<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub server: PerQuery,
    pub baseline: PerQuery,
}

/// Figures of one kind of query (name, rare, sentence, or a labelled style).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KindFigures {
    pub kind: String,
    pub queries: usize,
    pub server: Figures,
    pub baseline: Figures,
}

/// Everything measured on one surface.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SurfaceReport {
    pub surface: Surface,
    pub feature: Feature,
    /// Items in the catalog the surface searches.
    pub items: usize,
    pub requirement: &'static str,
    pub server: Option<Figures>,
    pub baseline: Option<Figures>,
    pub by_kind: Vec<KindFigures>,
    pub latency_p50_ms: Option<f64>,
    pub latency_p95_ms: Option<f64>,
    /// Queries the server did not answer.
    pub failed: usize,
    /// Relevant names of the labelled set that the catalog does not have.
    pub unknown_names: Vec<String>,
    pub queries: Vec<QueryResult>,
}

/// Scores every answer of `surface` and the baseline's for the same query.
pub fn surface_report(
    surface: Surface,
    catalog_names: &[String],
    baseline: &Baseline,
    answered: Vec<(Query, Answer)>,
    seed: u64,
) -> SurfaceReport {
    let queries: Vec<QueryResult> = answered
        .into_iter()
        .map(|(q, a)| score(q, a, baseline))
        .collect();
    let server_rows: Vec<PerQuery> = queries.iter().map(|q| q.server).collect();
    let base_rows: Vec<PerQuery> = queries.iter().map(|q| q.baseline).collect();
    let latencies: Vec<f64> = queries.iter().filter_map(|q| q.latency_ms).collect();
    let mut unknown: Vec<String> = queries
        .iter()
        .flat_map(|q| &q.relevant)
        .filter(|r| !catalog_names.contains(&r.name))
        .map(|r| r.name.clone())
        .collect();
    unknown.sort();
    unknown.dedup();
    SurfaceReport {
        surface,
        feature: surface.feature(),
        items: catalog_names.len(),
        requirement: surface.requirement(),
        server: Figures::of(&server_rows, seed),
        baseline: Figures::of(&base_rows, seed),
        by_kind: by_kind(&queries, seed),
        latency_p50_ms: percentile(&latencies, 50.0),
        latency_p95_ms: percentile(&latencies, 95.0),
        failed: queries.iter().filter(|q| q.error.is_some()).count(),
        unknown_names: unknown,
        queries,
    }
}

fn score(q: Query, answer: Answer, baseline: &Baseline) -> QueryResult {
    let base = baseline.rank(&q.text, DEPTH);
    let (names, latency_ms, error) = match answer {
        Answer::Ranked { names, latency_ms } => (names, Some(latency_ms), None),
        Answer::Failed(e) => (Vec::new(), None, Some(e)),
    };
    let names = &names[..names.len().min(DEPTH)];
    QueryResult {
        ranks: q.relevant.iter().map(|r| rank_of(names, &r.name)).collect(),
        baseline_ranks: q.relevant.iter().map(|r| rank_of(&base, &r.name)).collect(),
        server: per_query(names, &q.relevant),
        baseline: per_query(&base, &q.relevant),
        latency_ms,
        error,
        query: q.text,
        kind: q.kind,
        relevant: q.relevant,
    }
}

fn by_kind(queries: &[QueryResult], seed: u64) -> Vec<KindFigures> {
    let mut kinds: Vec<&QueryKind> = queries.iter().map(|q| &q.kind).collect();
    kinds.sort();
    kinds.dedup();
    kinds
        .into_iter()
        .filter_map(|kind| {
            let of: Vec<&QueryResult> = queries.iter().filter(|q| &q.kind == kind).collect();
            let server: Vec<PerQuery> = of.iter().map(|q| q.server).collect();
            let base: Vec<PerQuery> = of.iter().map(|q| q.baseline).collect();
            Some(KindFigures {
                kind: kind.label().to_string(),
                queries: of.len(),
                server: Figures::of(&server, seed)?,
                baseline: Figures::of(&base, seed)?,
            })
        })
        .collect()
}

/// The rank buckets of the rank distribution (first relevant item found).
pub const RANK_BUCKETS: [&str; 6] = ["1", "2-3", "4-5", "6-10", "11-20", "not found"];

/// How many queries found their first relevant item in each bucket of
/// [`RANK_BUCKETS`]; `baseline` picks the baseline's ranks.
pub fn rank_distribution(queries: &[QueryResult], baseline: bool) -> [usize; 6] {
    let mut counts = [0; 6];
    for q in queries {
        let ranks = if baseline {
            &q.baseline_ranks
        } else {
            &q.ranks
        };
        let bucket = match ranks.iter().flatten().min() {
            Some(1) => 0,
            Some(2..=3) => 1,
            Some(4..=5) => 2,
            Some(6..=10) => 3,
            Some(_) => 4,
            None => 5,
        };
        counts[bucket] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quality::Item;

    fn items() -> Vec<Item> {
        ["page_create", "page_get", "task_create"]
            .iter()
            .map(|n| Item {
                name: n.to_string(),
                description: format!("{} things", n.replace('_', " ")),
            })
            .collect()
    }

    fn query(text: &str, want: &str) -> Query {
        Query {
            text: text.into(),
            kind: QueryKind::Name,
            feature: Feature::Tools,
            relevant: vec![Relevant {
                name: want.into(),
                grade: 1.0,
            }],
        }
    }

    #[test]
    fn server_and_baseline_side_by_side() {
        let items = items();
        let names: Vec<String> = items.iter().map(|i| i.name.clone()).collect();
        let b = Baseline::new(&items);
        let ranked = |n: &[&str]| Answer::Ranked {
            names: n.iter().map(|s| s.to_string()).collect(),
            latency_ms: 2.0,
        };
        let r = surface_report(
            Surface::ToolsSearch,
            &names,
            &b,
            vec![
                (
                    query("task create", "task_create"),
                    ranked(&["page_create", "task_create"]),
                ),
                (
                    query("page get", "page_get"),
                    Answer::Failed("timeout".into()),
                ),
                (query("x", "no_such_tool"), ranked(&[])),
            ],
            0,
        );
        assert_eq!(r.queries[0].ranks, [Some(2)]);
        assert_eq!(r.queries[0].baseline_ranks, [Some(1)]);
        assert_eq!(r.failed, 1);
        assert_eq!(r.unknown_names, ["no_such_tool"]);
        let server = r.server.expect("figures");
        assert!((server.mrr.mean - 0.5 / 3.0).abs() < 1e-9);
        assert!(r.baseline.expect("figures").mrr.mean > server.mrr.mean);
        assert_eq!(r.latency_p50_ms, Some(2.0));
        assert_eq!(rank_distribution(&r.queries, false), [0, 1, 0, 0, 0, 2]);
        assert_eq!(r.by_kind.len(), 1);
    }
}

/// A surface the server does not offer, and how that was seen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Absent {
    pub surface: Surface,
    pub reason: String,
}

/// The whole measurement (JSON format `mcp-conform/quality@1`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QualityReport {
    pub format: &'static str,
    pub target: String,
    pub transport: String,
    pub protocol_version: String,
    pub seed: u64,
    /// `self-retrieval`, or the labelled set's file.
    pub query_set: String,
    pub depth: usize,
    pub surfaces: Vec<SurfaceReport>,
    pub absent: Vec<Absent>,
}

pub const FORMAT: &str = "mcp-conform/quality@1";

impl QualityReport {
    /// No surface offered: nothing to measure (not a failure).
    pub fn nothing_to_measure(&self) -> bool {
        self.surfaces.is_empty()
    }
}
