//! Relevance metrics of one ranked answer, and their means over a query set
//! with a bootstrap confidence interval.
//!
//! recall@k: the share of the relevant items found in the first k results.
//! Reciprocal rank: 1 / the rank of the first relevant item found (0 when
//! none is in the answer as fetched). nDCG@10: graded gains
//! `2^grade - 1`, discounted by `log2(rank + 1)`, over the ideal order.

use serde::Serialize;

use super::Relevant;
use crate::rng::Rng;

/// The metrics of one query.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PerQuery {
    pub recall_at_1: f64,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    pub reciprocal_rank: f64,
    pub ndcg_at_10: f64,
}

/// The rank (1-based) of `name` in `ranked`.
pub fn rank_of(ranked: &[String], name: &str) -> Option<usize> {
    ranked.iter().position(|r| r == name).map(|i| i + 1)
}

/// Scores `ranked` (best first) against the relevant items.
pub fn per_query(ranked: &[String], relevant: &[Relevant]) -> PerQuery {
    let ranks: Vec<Option<usize>> = relevant.iter().map(|r| rank_of(ranked, &r.name)).collect();
    let recall = |k: usize| {
        if relevant.is_empty() {
            return 0.0;
        }
        ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64 / relevant.len() as f64
    };
    let first = ranks.iter().flatten().min();
    PerQuery {
        recall_at_1: recall(1),
        recall_at_5: recall(5),
        recall_at_10: recall(10),
        reciprocal_rank: first.map_or(0.0, |&r| 1.0 / r as f64),
        ndcg_at_10: ndcg(&ranks, relevant, 10),
    }
}

fn gain(grade: f64) -> f64 {
    2f64.powf(grade) - 1.0
}

fn discount(rank: usize) -> f64 {
    1.0 / ((rank + 1) as f64).log2()
}

fn ndcg(ranks: &[Option<usize>], relevant: &[Relevant], k: usize) -> f64 {
    let dcg: f64 = ranks
        .iter()
        .zip(relevant)
        .filter_map(|(rank, r)| {
            rank.filter(|&x| x <= k)
                .map(|x| gain(r.grade) * discount(x))
        })
        .sum();
    let mut grades: Vec<f64> = relevant.iter().map(|r| r.grade).collect();
    grades.sort_by(|a, b| b.total_cmp(a));
    let ideal: f64 = grades
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, &g)| gain(g) * discount(i + 1))
        .sum();
    if ideal > 0.0 {
        dcg / ideal
    } else {
        0.0
    }
}

/// A mean with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figure {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

/// The means of a surface's (or the baseline's) per-query metrics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figures {
    pub recall_at_1: Figure,
    pub recall_at_5: Figure,
    pub recall_at_10: Figure,
    pub mrr: Figure,
    pub ndcg_at_10: Figure,
}

/// Bootstrap resamples behind each interval.
pub const RESAMPLES: usize = 1000;

impl Figures {
    /// Means over `rows` (none when there are no queries); the intervals
    /// come from [`RESAMPLES`] resamples drawn with `seed`.
    pub fn of(rows: &[PerQuery], seed: u64) -> Option<Figures> {
        if rows.is_empty() {
            return None;
        }
        let col = |f: fn(&PerQuery) -> f64| {
            let values: Vec<f64> = rows.iter().map(f).collect();
            bootstrap(&values, seed)
        };
        Some(Figures {
            recall_at_1: col(|r| r.recall_at_1),
            recall_at_5: col(|r| r.recall_at_5),
            recall_at_10: col(|r| r.recall_at_10),
            mrr: col(|r| r.reciprocal_rank),
            ndcg_at_10: col(|r| r.ndcg_at_10),
        })
    }

    /// The figures as (name, figure) pairs, in the tables' order.
    pub fn named(&self) -> [(&'static str, Figure); 5] {
        [
            ("recall@1", self.recall_at_1),
            ("recall@5", self.recall_at_5),
            ("recall@10", self.recall_at_10),
            ("MRR", self.mrr),
            ("nDCG@10", self.ndcg_at_10),
        ]
    }
}

/// The mean of `values` and its 95% percentile-bootstrap interval. The same
/// seed resamples the same way for every metric, so intervals of one run
/// are comparable.
pub fn bootstrap(values: &[f64], seed: u64) -> Figure {
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n.max(1) as f64;
    if n < 2 {
        return Figure {
            mean,
            low: mean,
            high: mean,
        };
    }
    let mut rng = Rng::new(seed);
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| (0..n).map(|_| values[rng.below_by_modulo(n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((RESAMPLES as f64 - 1.0) * q).round() as usize];
    Figure {
        mean,
        low: at(0.025),
        high: at(0.975),
    }
}

/// The `p`-th percentile (0..=100, nearest rank) of `values`.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted.get(rank.min(sorted.len()) - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn rel(name: &str, grade: f64) -> Relevant {
        Relevant {
            name: name.into(),
            grade,
        }
    }

    #[test]
    fn one_relevant_item_at_rank_three() {
        let m = per_query(&names(&["a", "b", "c"]), &[rel("c", 1.0)]);
        assert_eq!(m.recall_at_1, 0.0);
        assert_eq!(m.recall_at_5, 1.0);
        assert!((m.reciprocal_rank - 1.0 / 3.0).abs() < 1e-12);
        // DCG 1/log2(4) = 0.5 over an ideal of 1.
        assert!((m.ndcg_at_10 - 0.5).abs() < 1e-12);
    }

    #[test]
    fn missing_items_score_zero_and_graded_order_matters() {
        let m = per_query(&names(&["x"]), &[rel("c", 1.0)]);
        assert_eq!(
            (m.recall_at_10, m.reciprocal_rank, m.ndcg_at_10),
            (0.0, 0.0, 0.0)
        );
        let relevant = [rel("a", 2.0), rel("b", 1.0)];
        let best = per_query(&names(&["a", "b"]), &relevant);
        let swapped = per_query(&names(&["b", "a"]), &relevant);
        assert!((best.ndcg_at_10 - 1.0).abs() < 1e-12);
        assert!(swapped.ndcg_at_10 < best.ndcg_at_10);
        assert_eq!(swapped.recall_at_1, 0.5);
        assert_eq!(swapped.reciprocal_rank, 1.0);
    }

    #[test]
    fn bootstrap_interval_holds_the_mean_and_is_seeded() {
        let values: Vec<f64> = (0..40).map(|i| f64::from(i % 2)).collect();
        let f = bootstrap(&values, 3);
        assert_eq!(f.mean, 0.5);
        assert!(
            f.low < 0.5 && f.high > 0.5 && f.low > 0.2 && f.high < 0.8,
            "{f:?}"
        );
        assert_eq!(f, bootstrap(&values, 3));
        let one = bootstrap(&[1.0], 3);
        assert_eq!((one.low, one.high), (1.0, 1.0));
        assert!(Figures::of(&[], 0).is_none());
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(50.0));
        assert_eq!(percentile(&v, 95.0), Some(95.0));
        assert_eq!(percentile(&[3.0], 95.0), Some(3.0));
        assert_eq!(percentile(&[], 50.0), None);
    }
}
