//! The baseline beside every figure: Okapi BM25 (k1 = 1.2, b = 0.75, the
//! `bm25` crate) over each item's name words and description, with the same
//! words as query construction ([`super::words::words`]: no stemming, no
//! stopword list, no field weights). Ties keep catalog order.

use bm25::{Embedder, EmbedderBuilder, Scorer, Tokenizer};

use super::Item;
use crate::text::name_words as words;

/// The harness's words as the crate's tokenizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Words;

impl Tokenizer for Words {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        words(input_text)
    }
}

/// A BM25 index over one catalog.
pub struct Baseline {
    embedder: Embedder<u32, Words>,
    scorer: Scorer<usize, u32>,
    names: Vec<String>,
}

impl std::fmt::Debug for Baseline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Baseline({} items)", self.names.len())
    }
}

/// The text BM25 sees of an item.
fn document(item: &Item) -> String {
    format!("{} {}", words(&item.name).join(" "), item.description)
}

impl Baseline {
    pub fn new(items: &[Item]) -> Baseline {
        let docs: Vec<String> = items.iter().map(document).collect();
        let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
        let embedder: Embedder<u32, Words> =
            EmbedderBuilder::with_tokenizer_and_fit_to_corpus(Words, &refs).build();
        let mut scorer = Scorer::<usize, u32>::new();
        for (i, doc) in docs.iter().enumerate() {
            scorer.upsert(&i, embedder.embed(doc));
        }
        Baseline {
            embedder,
            scorer,
            names: items.iter().map(|i| i.name.clone()).collect(),
        }
    }

    /// The names of the first `depth` items for `query`, best first.
    pub fn rank(&self, query: &str, depth: usize) -> Vec<String> {
        let mut scored = self.scorer.matches(&self.embedder.embed(query));
        scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        scored
            .into_iter()
            .filter(|s| s.score > 0.0)
            .take(depth)
            .map(|s| self.names[s.id].clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(name: &str, description: &str) -> Item {
        Item {
            name: name.into(),
            description: description.into(),
        }
    }

    #[test]
    fn ranks_the_item_whose_words_match_first() {
        let b = Baseline::new(&[
            item("page_create", "Create a new page in a space."),
            item("task_create", "Create a backlog task."),
            item("comment_add", "Post a comment on a page."),
        ]);
        assert_eq!(b.rank("backlog", 10), ["task_create"]);
        assert_eq!(b.rank("create page", 10)[0], "page_create");
        assert_eq!(b.rank("comment page", 1), ["comment_add"]);
        assert!(b.rank("zebra", 10).is_empty());
    }

    #[test]
    fn ties_keep_catalog_order() {
        let b = Baseline::new(&[item("b_x", "same words"), item("a_x", "same words")]);
        assert_eq!(b.rank("same", 10), ["b_x", "a_x"]);
    }
}
