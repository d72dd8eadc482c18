//! An inverted index with BM25F-style ranking, shared by `tools/list?query`,
//! `tools/search`, `prompts/search` and `resources/search`.
//!
//! Documents are lists of weighted fields; a term's weighted frequency in a
//! document is the sum over fields of `weight × occurrences`. Ties are broken
//! by document name, so the order is fully deterministic. The query is only
//! ever tokenised: no operator, wildcard or pattern in it has any meaning.
//!
//! A field either *selects* (a query word found in it makes the document a
//! result) or only *ranks* (its words add to the score of a document some
//! selecting field already matched). What a client sees of an item selects;
//! the fuller documentation a server keeps behind it only ranks, so every
//! result is explained by its own entry and no hidden text widens a result.

use super::bitset::Bitset;
use super::text;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What a search looks through.
#[derive(Clone, Copy)]
pub enum Feature {
    Tools,
    Prompts,
    Resources,
}

/// One scored match of the category tools (`tool_search`).
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub score: u32,
    pub matched_on: Vec<String>,
}

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// One field of a document to index.
pub struct Field<'a> {
    pub text: Cow<'a, str>,
    pub weight: f32,
    /// Whether a query word found in this field makes the document a result
    /// (else the field only adds to the score of a selected document).
    pub selects: bool,
}

impl<'a> Field<'a> {
    /// A field that selects its document.
    pub fn selecting(text: impl Into<Cow<'a, str>>, weight: f32) -> Self {
        Field {
            text: text.into(),
            weight,
            selects: true,
        }
    }

    /// A field that only ranks documents other fields selected.
    pub fn ranking(text: impl Into<Cow<'a, str>>, weight: f32) -> Self {
        Field {
            text: text.into(),
            weight,
            selects: false,
        }
    }
}

/// Set in a posting's document number when the term occurs only in fields
/// that rank (document numbers stay far below 2^31).
const RANKS_ONLY: u32 = 1 << 31;

#[derive(Debug, Clone, Copy)]
struct Posting {
    /// The document, with [`RANKS_ONLY`] set when no selecting field holds
    /// the term.
    doc: u32,
    wtf: f32,
}

impl Posting {
    fn doc(self) -> u32 {
        self.doc & !RANKS_ONLY
    }

    fn selects(self) -> bool {
        self.doc & RANKS_ONLY == 0
    }
}

#[derive(Debug, Default)]
pub struct SearchIndex {
    postings: HashMap<Box<str>, Vec<Posting>>,
    doc_len: Vec<f32>,
    avg_len: f32,
    /// Rank of each document's name in sorted order: the tie-breaker.
    name_rank: Vec<u32>,
    /// The last few complete rankings, so that walking the pages of one
    /// query scores the catalog once, not once a page: a broad query over
    /// 10,000 tools at 10 a page is a thousand pages.
    recent: Mutex<Vec<(RankingKey, Arc<Vec<u32>>)>>,
}

/// What a complete ranking depends on.
#[derive(Debug, PartialEq)]
struct RankingKey {
    query: String,
    allowed: Option<Bitset>,
    exact: Vec<u32>,
}

/// Complete rankings kept per index.
const RECENT_RANKINGS: usize = 4;

/// A ranked result: document numbers, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub docs: Vec<u32>,
    pub total: usize,
}

impl Ranked {
    /// The `limit` documents of a complete ranking from `offset` on.
    fn page(ranking: &[u32], offset: usize, limit: usize) -> Ranked {
        let total = ranking.len();
        let end = offset.saturating_add(limit).min(total);
        Ranked {
            docs: ranking
                .get(offset.min(end)..end)
                .unwrap_or_default()
                .to_vec(),
            total,
        }
    }
}

impl SearchIndex {
    /// Builds the index; `names[i]` names document `i` and `fields(i)` gives
    /// its text.
    pub fn build<'a, F>(names: &[&str], mut fields: F) -> SearchIndex
    where
        F: FnMut(usize) -> Vec<Field<'a>>,
    {
        let mut postings: HashMap<Box<str>, Vec<Posting>> = HashMap::new();
        let mut doc_len = Vec::with_capacity(names.len());
        let mut local: HashMap<String, (f32, bool)> = HashMap::new();
        debug_assert!(names.len() < RANKS_ONLY as usize);
        for doc in 0..names.len() {
            local.clear();
            let mut len = 0.0;
            for field in fields(doc) {
                for tok in text::tokens(&field.text) {
                    let entry = local.entry(tok).or_default();
                    entry.0 += field.weight;
                    entry.1 |= field.selects;
                    len += field.weight;
                }
            }
            doc_len.push(len);
            for (tok, (wtf, selects)) in local.drain() {
                let posting = Posting {
                    doc: doc as u32 | if selects { 0 } else { RANKS_ONLY },
                    wtf,
                };
                match postings.get_mut(tok.as_str()) {
                    Some(list) => list.push(posting),
                    None => {
                        postings.insert(tok.into_boxed_str(), vec![posting]);
                    }
                }
            }
        }
        // Growth by doubling leaves up to half of each list unused.
        postings.values_mut().for_each(Vec::shrink_to_fit);
        postings.shrink_to_fit();
        let avg_len = if doc_len.is_empty() {
            1.0
        } else {
            (doc_len.iter().sum::<f32>() / doc_len.len() as f32).max(1.0)
        };
        SearchIndex {
            postings,
            doc_len,
            avg_len,
            name_rank: name_ranks(names),
            recent: Mutex::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// Ranks the documents matching any token of `query`, restricted to
    /// `allowed` when given. `exact` documents (whose name equals the query)
    /// come first. Only the window `[offset, offset + limit)` is sorted, so
    /// deep catalogs do not pay for a full sort of every match.
    pub fn search(
        &self,
        query: &str,
        allowed: Option<&Bitset>,
        exact: &[u32],
        offset: usize,
        limit: usize,
    ) -> Ranked {
        Ranked::page(&self.ranking(query, allowed, exact), offset, limit)
    }

    /// Every match of `query`, best first: from the recent rankings, or
    /// scored and sorted once and kept.
    fn ranking(&self, query: &str, allowed: Option<&Bitset>, exact: &[u32]) -> Arc<Vec<u32>> {
        let key = RankingKey {
            query: query.to_string(),
            allowed: allowed.cloned(),
            exact: exact.to_vec(),
        };
        // A poisoned lock only means a panic elsewhere; the rankings kept
        // are complete.
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, ranked)) = recent.iter().find(|(k, _)| *k == key) {
            return Arc::clone(ranked);
        }
        let mut keys: Vec<u64> = self
            .score(query, allowed, exact)
            .into_iter()
            .map(|(doc, score)| score_key(score) | u64::from(doc))
            .collect();
        let end = keys.len();
        let ranked = Arc::new(self.order_window(&mut keys, end));
        if recent.len() == RECENT_RANKINGS {
            recent.remove(0);
        }
        recent.push((key, Arc::clone(&ranked)));
        ranked
    }

    /// Ranks like `search`, but with scores rounded to one decimal and ties
    /// broken by a salted hash of the document (the `session-varying-results`
    /// fault: what iterating a randomly seeded hash map gives).
    pub fn search_salted(
        &self,
        query: &str,
        exact: &[u32],
        offset: usize,
        limit: usize,
        salt: &std::collections::hash_map::RandomState,
    ) -> Ranked {
        use std::hash::BuildHasher;
        let mut scored: Vec<(u32, i64, u64)> = self
            .score(query, None, exact)
            .into_iter()
            .map(|(doc, s)| {
                (
                    doc,
                    (f64::from(s) * 10.0).round() as i64,
                    salt.hash_one(doc),
                )
            })
            .collect();
        scored.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
        let docs: Vec<u32> = scored.iter().map(|s| s.0).collect();
        Ranked::page(&docs, offset, limit)
    }

    /// Every matching document in catalog order (used by faults that "forget"
    /// to rank).
    pub fn matches_in_order(&self, query: &str, allowed: Option<&Bitset>) -> Vec<u32> {
        let mut docs: Vec<u32> = self
            .score(query, allowed, &[])
            .into_iter()
            .map(|(d, _)| d)
            .collect();
        docs.sort_unstable();
        docs
    }

    fn order_window(&self, keys: &mut [u64], end: usize) -> Vec<u32> {
        if end == 0 {
            return Vec::new();
        }
        let cmp = |a: &u64, b: &u64| {
            (a >> 32, self.name_rank[(a & 0xFFFF_FFFF) as usize])
                .cmp(&(b >> 32, self.name_rank[(b & 0xFFFF_FFFF) as usize]))
        };
        if end < keys.len() {
            keys.select_nth_unstable_by(end - 1, cmp);
        }
        let window = &mut keys[..end];
        window.sort_unstable_by(cmp);
        window.iter().map(|k| (k & 0xFFFF_FFFF) as u32).collect()
    }

    fn score(&self, query: &str, allowed: Option<&Bitset>, exact: &[u32]) -> Vec<(u32, f32)> {
        let mut terms: Vec<String> = text::query_terms(query);
        terms.sort();
        terms.dedup();
        let n = self.len() as f32;
        // Dense accumulator: far cheaper than a hash map when a common term
        // touches a large share of a big catalog.
        SCORES.with(|cell| {
            let (acc, hits, selected) = &mut *cell.borrow_mut();
            if acc.len() < self.len() {
                acc.resize(self.len(), 0.0);
                hits.resize(self.len(), 0);
                selected.resize(self.len(), false);
            }
            let mut touched: Vec<u32> = Vec::new();
            for term in &terms {
                let Some(list) = self.postings.get(term.as_str()) else {
                    continue;
                };
                let df = list.len() as f32;
                let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                for p in list {
                    let d = p.doc() as usize;
                    if allowed.is_some_and(|a| !a.contains(d)) {
                        continue;
                    }
                    let norm = 1.0 - B + B * self.doc_len[d] / self.avg_len;
                    if hits[d] == 0 {
                        touched.push(p.doc());
                    }
                    hits[d] = hits[d].saturating_add(1);
                    selected[d] |= p.selects();
                    acc[d] += idf * p.wtf * (K1 + 1.0) / (p.wtf + K1 * norm);
                }
            }
            // Coordination: a document matching more of the query's distinct
            // terms ranks above one matching a single term heavily (a name
            // word such as "get" shared by many tools must not outrank the
            // tool the rest of the query describes).
            let wanted = terms.len().max(1) as f32;
            // A document only ranking fields matched is not a result.
            let mut scored: Vec<(u32, f32)> = touched
                .into_iter()
                .filter_map(|d| {
                    let i = d as usize;
                    let coord = f32::from(std::mem::take(&mut hits[i])) / wanted;
                    let score = std::mem::take(&mut acc[i]) * (0.5 + 0.5 * coord);
                    std::mem::take(&mut selected[i]).then_some((d, score))
                })
                .collect();
            for &doc in exact {
                if (doc as usize) < self.len() && allowed.is_none_or(|a| a.contains(doc as usize)) {
                    // Far above any BM25 score, so exact names always lead.
                    match scored.iter_mut().find(|(d, _)| *d == doc) {
                        Some(s) => s.1 += 1.0e6,
                        None => scored.push((doc, 1.0e6)),
                    }
                }
            }
            scored
        })
    }
}

thread_local! {
    /// The dense score accumulator, reused across queries: allocating and
    /// zeroing one slot per document on every query of a 100k-tool catalog
    /// costs more than scoring.
    /// Beside each score, how many query terms the document matched, and
    /// whether a selecting field matched one.
    static SCORES: std::cell::RefCell<(Vec<f32>, Vec<u16>, Vec<bool>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new(), Vec::new())) };
}

/// The high half of a sort key: higher scores sort first. Scores are never
/// negative, so their IEEE bit patterns order like the numbers; inverting
/// them turns "descending" into "ascending". The low half holds the document.
fn score_key(score: f32) -> u64 {
    u64::from(!score.max(0.0).to_bits()) << 32
}

fn name_ranks(names: &[&str]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..names.len() as u32).collect();
    order.sort_by(|&a, &b| names[a as usize].cmp(names[b as usize]));
    let mut rank = vec![0u32; names.len()];
    for (r, &doc) in order.iter().enumerate() {
        rank[doc as usize] = r as u32;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(docs: &[(&str, &str)]) -> SearchIndex {
        let names: Vec<&str> = docs.iter().map(|d| d.0).collect();
        SearchIndex::build(&names, |i| {
            vec![
                Field::selecting(docs[i].0, 3.0),
                Field::selecting(docs[i].1, 1.0),
            ]
        })
    }

    #[test]
    fn ranks_by_relevance_with_exact_first_and_name_ties() {
        let idx = index(&[
            ("task_create", "Create a new task"),
            ("page_create", "Create a new page"),
            ("page_get", "Read a page"),
            ("create", "Something unrelated"),
        ]);
        let r = idx.search("create page", None, &[], 0, 10);
        assert_eq!(r.docs[0], 1, "{r:?}");
        assert_eq!(r.total, 4);
        let r = idx.search("create", None, &[3], 0, 10);
        assert_eq!(r.docs[0], 3);
        let r = idx.search("xyz", None, &[], 0, 10);
        assert_eq!(r.total, 0);
    }

    #[test]
    fn windows_are_consistent_with_full_order() {
        let docs: Vec<(String, String)> = (0..200)
            .map(|i| (format!("tool_{i:03}"), format!("common word{}", i % 7)))
            .collect();
        let refs: Vec<(&str, &str)> = docs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let idx = index(&refs);
        let all = idx.search("common word3", None, &[], 0, 1000);
        let mut paged = Vec::new();
        for page in 0..5 {
            paged.extend(idx.search("common word3", None, &[], page * 50, 50).docs);
        }
        assert_eq!(all.docs, paged);
        assert_eq!(all.total, 200);
    }

    #[test]
    fn ranking_fields_reorder_but_never_select() {
        let names = ["page_archive", "page_delete", "task_delete"];
        let docs = ["Hide a page.", "Remove a page.", "Remove a task."];
        let notes = ["", "Gone for good, with its children.", "Gone for good."];
        let idx = SearchIndex::build(&names, |i| {
            vec![
                Field::selecting(names[i], 3.0),
                Field::selecting(docs[i], 1.0),
                Field::ranking(notes[i], 0.5),
            ]
        });
        // Without the notes the two page tools tie and the name decides.
        let r = idx.search("page gone", None, &[], 0, 10);
        assert_eq!(r.docs, [1, 0], "the note ranks page_delete first");
        // A word only the notes hold selects nothing.
        assert_eq!(idx.search("children", None, &[], 0, 10).total, 0);
        assert_eq!(idx.search("good", None, &[], 0, 10).total, 0);
        assert!(idx.matches_in_order("gone", None).is_empty());
    }

    #[test]
    fn allowed_set_restricts() {
        let idx = index(&[("a_one", "x"), ("b_two", "x"), ("c_three", "x")]);
        let mut allowed = Bitset::empty(3);
        allowed.insert(2);
        assert_eq!(idx.search("x", Some(&allowed), &[0], 0, 10).docs, [2]);
        assert_eq!(idx.matches_in_order("x", None), [0, 1, 2]);
    }
}
