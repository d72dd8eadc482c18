//! Queries from a server's own catalog (self-retrieval): for each item, its
//! name's words; the two or three rarest words of its description across
//! the catalog; and a sentence of its description without the name's words.
//! The expected answer is the item itself. The words come from the item, so
//! these queries measure lexical recall (docs/quality.md).

use std::collections::{HashMap, HashSet};

use super::stopwords::is_stopword;
use super::{Feature, Item, Query, QueryKind, Relevant};
use crate::rng::{hash, Rng};
use crate::text::name_words as words;

/// The fewest and most distinctive words a `rare` query holds.
const RARE_MIN: usize = 2;
const RARE_MAX: usize = 3;
/// A sentence query needs this many words once the name's are gone.
const SENTENCE_MIN: usize = 3;

/// Self-retrieval queries for every item of `items`, in item order (name,
/// rare, sentence per item); `seed` breaks ties between equally rare words
/// and picks the sentence of a longer description.
pub fn self_queries(items: &[Item], feature: Feature, seed: u64, sentences: bool) -> Vec<Query> {
    let df = document_frequency(items);
    let mut out = Vec::new();
    for item in items {
        let name_words = words(&item.name);
        let query = |text: String, kind: QueryKind| Query {
            text,
            kind,
            feature,
            relevant: vec![Relevant {
                name: item.name.clone(),
                grade: 1.0,
            }],
        };
        if !name_words.is_empty() {
            out.push(query(name_words.join(" "), QueryKind::Name));
        }
        if let Some(text) = rare_words(&item.description, &name_words, &df, seed) {
            out.push(query(text, QueryKind::Rare));
        }
        if sentences {
            if let Some(text) = sentence(&item.description, &name_words, seed) {
                out.push(query(text, QueryKind::Sentence));
            }
        }
    }
    out
}

/// In how many descriptions each word occurs.
fn document_frequency(items: &[Item]) -> HashMap<String, usize> {
    let mut df: HashMap<String, usize> = HashMap::new();
    for item in items {
        let distinct: HashSet<String> = words(&item.description).into_iter().collect();
        for w in distinct {
            *df.entry(w).or_default() += 1;
        }
    }
    df
}

/// A word worth choosing: not a stopword, not a number, not a name word.
fn candidate(word: &str, name_words: &[String]) -> bool {
    word.chars().count() >= 3
        && word.chars().any(char::is_alphabetic)
        && !is_stopword(word)
        && !name_words.iter().any(|n| n == word)
}

/// The rarest candidate words of `description`, rarest first.
fn rare_words(
    description: &str,
    name_words: &[String],
    df: &HashMap<String, usize>,
    seed: u64,
) -> Option<String> {
    let mut picked: Vec<String> = words(description)
        .into_iter()
        .filter(|w| candidate(w, name_words))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    picked.sort_by_key(|w| (df.get(w).copied().unwrap_or(0), hash(seed, w), w.clone()));
    picked.truncate(RARE_MAX);
    (picked.len() >= RARE_MIN).then(|| picked.join(" "))
}

/// One sentence of `description` (seeded among those long enough), its
/// name words removed.
fn sentence(description: &str, name_words: &[String], seed: u64) -> Option<String> {
    let options: Vec<Vec<String>> = description
        .split(['.', ';', '!', '?', '\n'])
        .map(|s| {
            words(s)
                .into_iter()
                .filter(|w| !name_words.contains(w))
                .collect::<Vec<_>>()
        })
        .filter(|ws| ws.iter().filter(|w| !is_stopword(w)).count() >= SENTENCE_MIN)
        .collect();
    if options.is_empty() {
        return None;
    }
    let pick = Rng::new(seed ^ hash(seed, description)).below_by_modulo(options.len());
    Some(options[pick].join(" "))
}

/// At most `max` queries, drawn with `seed` and kept in their order.
pub fn sample(queries: Vec<Query>, max: Option<usize>, seed: u64) -> Vec<Query> {
    let Some(max) = max.filter(|m| *m < queries.len()) else {
        return queries;
    };
    let keep: HashSet<usize> = Rng::new(seed)
        .sample(queries.len(), max)
        .into_iter()
        .collect();
    queries
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .map(|(_, q)| q)
        .collect()
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

    fn catalog() -> Vec<Item> {
        vec![
            item(
                "page_create",
                "Create a new page in a space. Pages hold text.",
            ),
            item(
                "page_get",
                "Read a page's title, body, labels, and metadata.",
            ),
            item(
                "task_create",
                "Create a backlog task with a title and assignee.",
            ),
        ]
    }

    #[test]
    fn name_rare_and_sentence_queries_per_item() {
        let q = self_queries(&catalog(), Feature::Tools, 0, true);
        let of = |name: &str, kind: QueryKind| {
            q.iter()
                .find(|x| x.relevant[0].name == name && x.kind == kind)
                .map(|x| x.text.clone())
        };
        assert_eq!(of("page_get", QueryKind::Name).as_deref(), Some("page get"));
        // "title" occurs in two descriptions; read, body, labels, metadata in one.
        let rare = of("page_get", QueryKind::Rare).expect("rare query");
        let rare: Vec<&str> = rare.split(' ').collect();
        assert_eq!(rare.len(), 3);
        assert!(
            rare.iter()
                .all(|w| ["read", "body", "labels", "metadata"].contains(w)),
            "{rare:?}"
        );
        // No name word survives in a sentence query.
        let s = of("page_create", QueryKind::Sentence).expect("sentence");
        assert!(!s.split(' ').any(|w| w == "page" || w == "create"), "{s}");
        assert!(q.iter().all(|x| x.feature == Feature::Tools));
    }

    #[test]
    fn same_seed_same_queries_and_short_descriptions_give_none() {
        let a = self_queries(&catalog(), Feature::Tools, 42, true);
        assert_eq!(a, self_queries(&catalog(), Feature::Tools, 42, true));
        let short = self_queries(&[item("ping", "Ping.")], Feature::Tools, 0, true);
        assert_eq!(short.len(), 1, "{short:?}");
        assert_eq!(short[0].kind, QueryKind::Name);
        let none = self_queries(&catalog(), Feature::Tools, 0, false);
        assert!(none.iter().all(|x| x.kind != QueryKind::Sentence));
    }

    #[test]
    fn sampling_is_seeded_and_bounded() {
        let q = self_queries(&catalog(), Feature::Tools, 0, true);
        let s = sample(q.clone(), Some(3), 9);
        assert_eq!(s.len(), 3);
        assert_eq!(s, sample(q.clone(), Some(3), 9));
        assert_eq!(sample(q.clone(), None, 9), q);
        assert_eq!(sample(q.clone(), Some(100), 9), q);
    }
}
