//! Tokenising and light stemming shared by every search index.
//!
//! The same function is applied to documents and queries, so consistency
//! matters more than linguistic accuracy: "created", "creates", "creating"
//! and "create" must all meet on one stem.

/// Lower-cased words of `text`, split on anything that is not a letter or
/// digit (so `page_create` gives `page`, `create`).
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Stemmed tokens of `text`, in order, duplicates kept.
pub fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    words(text).map(|w| stem(&w))
}

/// English function words: in a query of other words too they say nothing
/// about which item is wanted ("get rid of a whole area and everything in
/// it"), and matching them ranks items whose text merely uses them.
const QUERY_STOPWORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "are", "as", "at", "be", "by", "can", "could", "do", "does",
    "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me",
    "my", "of", "on", "or", "our", "please", "should", "so", "some", "than", "that", "the",
    "their", "them", "then", "there", "these", "this", "those", "to", "us", "was", "we", "were",
    "what", "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
];

/// The stemmed terms of a query, without function words unless the query
/// has nothing else (a query of only "the" still matches what says "the").
pub fn query_terms(query: &str) -> Vec<String> {
    let all: Vec<String> = words(query).collect();
    let content: Vec<&String> = all
        .iter()
        .filter(|w| QUERY_STOPWORDS.binary_search(&w.as_str()).is_err())
        .collect();
    if content.is_empty() {
        all.iter().map(|w| stem(w)).collect()
    } else {
        content.into_iter().map(|w| stem(w)).collect()
    }
}

/// Strips a plural `s`/`es`/`ies`, `ing` or `ed`, then a trailing `e`, from
/// words long enough that the remainder is still distinctive.
pub fn stem(word: &str) -> String {
    let n = word.chars().count();
    let mut w: String = if n > 5 && word.ends_with("ing") {
        word[..word.len() - 3].to_string()
    } else if n > 4 && word.ends_with("ed") {
        word[..word.len() - 2].to_string()
    } else if n > 4 && word.ends_with("ies") {
        format!("{}y", &word[..word.len() - 3])
    } else if n > 4 && word.ends_with("es") && sibilant(&word[..word.len() - 2]) {
        word[..word.len() - 2].to_string()
    } else if n > 3 && word.ends_with('s') && !["ss", "us", "is"].iter().any(|s| word.ends_with(s))
    {
        word[..word.len() - 1].to_string()
    } else {
        word.to_string()
    };
    if w.chars().count() > 4 && w.ends_with('e') {
        w.pop();
    }
    w
}

fn sibilant(stem: &str) -> bool {
    ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|s| stem.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_meet_on_one_stem() {
        for group in [
            ["create", "created", "creates", "creating"],
            ["search", "searches", "searching", "searched"],
            ["page", "pages", "page", "pages"],
            ["update", "updates", "updated", "updating"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            assert!(
                stems.windows(2).all(|p| p[0] == p[1]),
                "{group:?} -> {stems:?}"
            );
        }
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("categories"), "category");
    }

    #[test]
    fn splits_on_non_alphanumerics() {
        let got: Vec<String> = tokens("page_create: Create a NEW page!").collect();
        assert_eq!(got, ["page", "creat", "creat", "a", "new", "page"]);
        assert_eq!(
            tokens(".* ${jndi:x} %00").collect::<Vec<_>>(),
            ["jndi", "x", "00"]
        );
    }

    #[test]
    fn queries_drop_function_words_unless_nothing_else_is_left() {
        assert!(QUERY_STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            query_terms("get rid of a whole area"),
            ["get", "rid", "whol", "area"]
        );
        assert_eq!(query_terms("the a"), ["the", "a"]);
        assert_eq!(query_terms("page_create"), ["page", "creat"]);
    }

    #[test]
    fn handles_multibyte_text() {
        assert_eq!(stem("résumés"), "résumé");
        assert_eq!(tokens("ÉTÉ naïve").collect::<Vec<_>>(), ["été", "naïv"]);
    }
}
