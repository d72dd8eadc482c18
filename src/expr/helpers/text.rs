//! Helpers on text: words, search vocabulary, URL encoding.
//!
//! Words here are `crate::text::words`: runs of letters and digits,
//! lower-cased, `camelCase` one word.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use cel::ExecutionError;
use serde_json::Value;

use crate::expr::helper::{helper_table, list_arg, str_arg, Args, Helper, HelperResult};
use crate::text::{lowered_words, words};

/// The helpers of this module.
pub const HELPERS: &[Helper] = helper_table! {
    tokens: 1, lower: 1, distinctive_word: 2, common_words: 2, url_encode: 1,
};

fn tokens(a: &Args) -> HelperResult {
    let text = str_arg("tokens", &a[0])?;
    Ok(Value::Array(
        words(text).into_iter().map(Value::String).collect(),
    ))
}

fn lower(a: &Args) -> HelperResult {
    Ok(Value::String(str_arg("lower", &a[0])?.to_lowercase()))
}

/// A word (5+ letters) of the named tool's description that no other tool's
/// description contains, or "" when there is none.
///
/// Only the target's candidate words are kept and struck out as the other
/// descriptions mention them: a set of every other tool's words, built on
/// each call, made this the slowest helper on large catalogs.
fn distinctive_word(a: &Args) -> HelperResult {
    let tools = list_arg("distinctive_word", &a[0])?;
    let name = str_arg("distinctive_word", &a[1])?;
    fn description(t: &Value) -> &str {
        t.get("description").and_then(Value::as_str).unwrap_or("")
    }
    let is_target = |t: &Value| t.get("name").and_then(Value::as_str) == Some(name);
    let Some(target) = tools.iter().find(|t| is_target(t)) else {
        return Ok(Value::String(String::new()));
    };
    let mut candidates: HashSet<Cow<str>> = lowered_words(description(target))
        .filter(|w| w.chars().count() >= 5 && w.chars().all(char::is_alphabetic))
        .collect();
    for other in tools.iter().filter(|t| !is_target(t)) {
        if candidates.is_empty() {
            break;
        }
        for w in lowered_words(description(other)) {
            candidates.remove(&w);
        }
    }
    let word = candidates
        .into_iter()
        .max_by(|a, b| a.len().cmp(&b.len()).then_with(|| b.cmp(a)))
        .map(Cow::into_owned)
        .unwrap_or_default();
    Ok(Value::String(word))
}

/// Words too common in English to make a search query of their own.
const STOP_WORDS: &[&str] = &[
    "and", "are", "but", "can", "for", "from", "has", "have", "into", "its", "not", "of", "one",
    "the", "that", "their", "them", "then", "this", "was", "were", "when", "which", "with", "you",
    "your",
];

/// The `n` words that the most items carry in their name (split at `_`, `-`,
/// `.`…), title, description or tags (or, for an item that is a string, in
/// the string), most common first (ties in word order); words of fewer than
/// 3 letters, numbers and English stop words are left out. Broad search queries built from a server's own vocabulary: a
/// query made of one of them matches many items on a precise search too.
fn common_words(a: &Args) -> HelperResult {
    let items = list_arg("common_words", &a[0])?;
    let n = a[1].as_u64().ok_or_else(|| {
        ExecutionError::function_error("common_words", "expects a non-negative count")
    })? as usize;
    let mut counts: HashMap<Cow<str>, usize> = HashMap::new();
    let mut own: HashSet<Cow<str>> = HashSet::new();
    for item in items {
        // A string is its own text: `common_words(tool_names(all), 1)` ranks
        // the words of the names alone without a map made per tool.
        let texts = std::iter::once(item)
            .filter(|item| item.is_string())
            .chain(
                ["name", "title", "description"]
                    .into_iter()
                    .filter_map(|key| item.get(key)),
            )
            .chain(
                item.get("tags")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            )
            .filter_map(Value::as_str);
        own.clear();
        own.extend(texts.flat_map(lowered_words).filter(|w| {
            w.chars().count() >= 3
                && !w.chars().all(|c| c.is_ascii_digit())
                && !STOP_WORDS.contains(&w.as_ref())
        }));
        for w in own.drain() {
            *counts.entry(w).or_default() += 1;
        }
    }
    let mut ranked: Vec<(Cow<str>, usize)> = counts.into_iter().collect();
    // Equal counts stay in alphabetical order.
    ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(Value::Array(
        ranked
            .into_iter()
            .take(n)
            .map(|(w, _)| Value::String(w.into_owned()))
            .collect(),
    ))
}

/// Percent-encodes a text for use in a URI query (RFC 3986 unreserved kept).
fn url_encode(a: &Args) -> HelperResult {
    let text = str_arg("url_encode", &a[0])?;
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(Value::String(out))
}
