//! Words of names and descriptions, shared by query construction and the
//! BM25 baseline so that both see the same vocabulary.

/// Lower-cased words of `text`: split on anything that is not a letter or a
/// digit, and at lower-to-upper case changes (`pageCreate` gives `page`,
/// `create`; `page_create` and `page-create` too).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut out);
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            flush(&mut current, &mut out);
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    flush(&mut current, &mut out);
    out
}

fn flush(current: &mut String, out: &mut Vec<String>) {
    if !current.is_empty() {
        out.push(std::mem::take(current));
    }
}

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
    fn splits_separators_and_case_changes() {
        assert_eq!(words("page_create"), ["page", "create"]);
        assert_eq!(words("getTinyImage"), ["get", "tiny", "image"]);
        assert_eq!(
            words("Read a page's title."),
            ["read", "a", "page", "s", "title"]
        );
        assert_eq!(words("api-v2/URLs"), ["api", "v2", "urls"]);
        assert!(words(" -_ ").is_empty());
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stopword("the") && !is_stopword("page"));
    }
}
