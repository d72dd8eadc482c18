//! Thresholds a CI job sets deliberately (`--min-recall-at-5 X` and the
//! like): the figures never change a conformance verdict, but a gate that
//! is not met makes `mcp-conform quality` exit 1.

use super::measure::SurfaceReport;
use super::metrics::Figures;

/// A metric a gate can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    RecallAt1,
    RecallAt5,
    RecallAt10,
    Mrr,
    NdcgAt10,
}

impl Metric {
    pub fn label(self) -> &'static str {
        match self {
            Metric::RecallAt1 => "recall@1",
            Metric::RecallAt5 => "recall@5",
            Metric::RecallAt10 => "recall@10",
            Metric::Mrr => "MRR",
            Metric::NdcgAt10 => "nDCG@10",
        }
    }

    fn of(self, f: &Figures) -> f64 {
        match self {
            Metric::RecallAt1 => f.recall_at_1.mean,
            Metric::RecallAt5 => f.recall_at_5.mean,
            Metric::RecallAt10 => f.recall_at_10.mean,
            Metric::Mrr => f.mrr.mean,
            Metric::NdcgAt10 => f.ndcg_at_10.mean,
        }
    }
}

/// The least a metric may be, on every surface measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gate {
    pub metric: Metric,
    pub min: f64,
}

/// One line per gate a surface misses.
pub fn check(gates: &[Gate], surfaces: &[SurfaceReport]) -> Vec<String> {
    let mut missed = Vec::new();
    for s in surfaces {
        let Some(figures) = &s.server else { continue };
        for g in gates {
            let value = g.metric.of(figures);
            if value < g.min {
                missed.push(format!(
                    "{}: {} {value:.3} is below the required {:.3}",
                    s.surface.label(),
                    g.metric.label(),
                    g.min
                ));
            }
        }
    }
    missed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quality::bm25::Baseline;
    use crate::quality::measure::{surface_report, Answer};
    use crate::quality::{Feature, Query, QueryKind, Relevant, Surface};

    #[test]
    fn a_gate_below_the_figure_passes_and_above_fails() {
        let q = Query {
            text: "a".into(),
            kind: QueryKind::Name,
            feature: Feature::Tools,
            relevant: vec![Relevant {
                name: "a".into(),
                grade: 1.0,
            }],
        };
        let answer = Answer::Ranked {
            names: vec!["b".into(), "a".into()],
            latency_ms: 1.0,
        };
        let names = vec!["a".to_string(), "b".to_string()];
        let r = surface_report(
            Surface::ToolsSearch,
            &names,
            &Baseline::new(&[]),
            vec![(q, answer)],
            0,
        );
        let gate = |metric, min| Gate { metric, min };
        assert!(check(
            &[gate(Metric::RecallAt5, 1.0), gate(Metric::Mrr, 0.5)],
            std::slice::from_ref(&r)
        )
        .is_empty());
        let missed = check(&[gate(Metric::RecallAt1, 0.5)], &[r]);
        assert_eq!(
            missed,
            ["tools/search: recall@1 0.000 is below the required 0.500"]
        );
    }
}
