//! The harness's one tokenizer, in the two readings its users need.
//!
//! `words` splits at anything that is not a letter or a digit: `camelCase`
//! is one word. The scenarios' text helpers (`tokens`, `common_words`,
//! `distinctive_word`) read text this way. `name_words` also splits at
//! lower-to-upper case changes, the way tool names are written
//! (`pageCreate`), and is the vocabulary of the search-quality queries and
//! their BM25 baseline. Each reading is pinned by committed verdicts and
//! figures, so neither is folded into the other.

use std::borrow::Cow;

/// Lowercase alphanumeric words of a text.
pub fn words(text: &str) -> Vec<String> {
    lowered_words(text).map(Cow::into_owned).collect()
}

/// The words of `words`, borrowed where the text is lower case already.
pub fn lowered_words(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            if w.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) {
                Cow::Borrowed(w)
            } else {
                Cow::Owned(w.to_lowercase())
            }
        })
}

/// Lower-cased words of `text`: split on anything that is not a letter or a
/// digit, and at lower-to-upper case changes (`pageCreate` gives `page`,
/// `create`; `page_create` and `page-create` too).
pub fn name_words(text: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_words_split_separators_and_case_changes() {
        assert_eq!(name_words("page_create"), ["page", "create"]);
        assert_eq!(name_words("getTinyImage"), ["get", "tiny", "image"]);
        assert_eq!(
            name_words("Read a page's title."),
            ["read", "a", "page", "s", "title"]
        );
        assert_eq!(name_words("api-v2/URLs"), ["api", "v2", "urls"]);
        assert!(name_words(" -_ ").is_empty());
    }

    #[test]
    fn words_keep_camel_case_whole() {
        assert_eq!(
            words("getTinyImage page_create"),
            ["gettinyimage", "page", "create"]
        );
        assert!(matches!(
            lowered_words("page").next(),
            Some(Cow::Borrowed("page"))
        ));
    }
}
