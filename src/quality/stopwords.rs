//! The stop words of the search-quality queries (their words come from
//! `crate::text::name_words`).

/// Common English words that carry no topic: never chosen as a distinctive
/// word of a description, and left out of sentence queries' weight.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "but", "by", "can", "each", "every", "for", "from", "has", "have", "how", "if", "in",
    "into", "is", "it", "its", "may", "more", "most", "no", "not", "of", "on", "one", "only", "or",
    "other", "so", "such", "than", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "those", "to", "up", "was", "what", "when", "where", "which", "while", "who",
    "whom", "why", "will", "with", "within", "without", "you", "your",
];

pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stopword("the") && !is_stopword("page"));
    }
}
