//! The reference server's own bar for its ranking: on its catalog, the
//! index behind `tools/search` and `tools/list?query` reaches the harness's
//! BM25 baseline (`mcp-conform quality`) on the self-retrieval queries and
//! on the labelled set shipped in docs/quality/reference-queries.yaml, on
//! MRR, recall@1 and recall@5. Measured in process, on the same queries
//! and with the same metrics the `quality` command uses; the end-to-end
//! figures are in docs/quality.md.
//!
//! `RANKING_DETAIL=1 cargo test --lib reference_ranking -- --nocapture` prints
//! every query where the server and the baseline differ.

use crate::quality::bm25::Baseline;
use crate::quality::labelled;
use crate::quality::measure::DEPTH;
use crate::quality::metrics::{per_query, rank_of, PerQuery};
use crate::quality::queries::self_queries;
use crate::quality::{Feature, Item, Query};
use mcp_conform_reference::live::Snapshot;
use mcp_conform_reference::{Catalog, DEFAULT_CATALOG};

const LABELLED: &str = include_str!("../../docs/quality/reference-queries.yaml");

fn snapshot() -> Snapshot {
    let cat = Catalog::from_slice(DEFAULT_CATALOG.as_bytes()).expect("reference catalog");
    Snapshot::new(cat, 1)
}

/// The tools as `quality` sees them in `tools/list`.
fn items(snap: &Snapshot) -> Vec<Item> {
    snap.tools()
        .map(|t| Item {
            name: t.name.to_string(),
            description: t.description.to_string(),
        })
        .collect()
}

/// The reference's answer to `query`, as `tools/search` pages it: exact
/// names first, then the index's order, the first `DEPTH` names.
fn server_rank(snap: &Snapshot, query: &str) -> Vec<String> {
    let exact = snap.exact_tools(query);
    let r = snap.tool_index().search(query, None, &exact, 0, DEPTH);
    r.docs
        .iter()
        .map(|&d| snap.tool(d).name.to_string())
        .collect()
}

/// Means of MRR, recall@1, recall@5 and nDCG@10 over `rows`.
fn means(rows: &[PerQuery]) -> [f64; 4] {
    let n = rows.len().max(1) as f64;
    let sum = |f: fn(&PerQuery) -> f64| rows.iter().map(f).sum::<f64>() / n;
    [
        sum(|r| r.reciprocal_rank),
        sum(|r| r.recall_at_1),
        sum(|r| r.recall_at_5),
        sum(|r| r.ndcg_at_10),
    ]
}

/// The server's and the baseline's figures on `queries`.
fn measure(snap: &Snapshot, queries: &[Query], detail: bool) -> ([f64; 4], [f64; 4]) {
    let items = items(snap);
    let baseline = Baseline::new(&items);
    let (mut server, mut base) = (Vec::new(), Vec::new());
    for q in queries.iter().filter(|q| q.feature == Feature::Tools) {
        let s = server_rank(snap, &q.text);
        let b = baseline.rank(&q.text, DEPTH);
        let (ps, pb) = (per_query(&s, &q.relevant), per_query(&b, &q.relevant));
        if detail && ps != pb {
            let ranks = |r: &[String]| -> Vec<Option<usize>> {
                q.relevant.iter().map(|x| rank_of(r, &x.name)).collect()
            };
            eprintln!(
                "{:<48} server {:?} bm25 {:?}  top: {:?}",
                q.text,
                ranks(&s),
                ranks(&b),
                &s[..s.len().min(3)]
            );
        }
        server.push(ps);
        base.push(pb);
    }
    (means(&server), means(&base))
}

fn assert_at_least_baseline(set: &str, queries: &[Query]) {
    let detail = std::env::var_os("RANKING_DETAIL").is_some();
    let (s, b) = measure(&snapshot(), queries, detail);
    let names = ["MRR", "recall@1", "recall@5", "nDCG@10"];
    let table: Vec<String> = names
        .iter()
        .zip(s.iter().zip(&b))
        .map(|(n, (s, b))| format!("{n} {s:.3} vs {b:.3}"))
        .collect();
    eprintln!("{set}: {}", table.join(", "));
    for (i, name) in names.iter().enumerate().take(3) {
        assert!(
            s[i] >= b[i],
            "{set}: {name} {:.3} is below BM25's {:.3} ({table:?})",
            s[i],
            b[i]
        );
    }
}

#[test]
fn reaches_the_baseline_on_the_labelled_set() {
    let queries = labelled::parse("reference-queries.yaml", LABELLED).expect("labelled set");
    assert_at_least_baseline("labelled", &queries);
}

#[test]
fn reaches_the_baseline_on_self_retrieval() {
    let snap = snapshot();
    let items = items(&snap);
    let queries = self_queries(&items, Feature::Tools, 0, true);
    assert_at_least_baseline("self-retrieval", &queries);
}
