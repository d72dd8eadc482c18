//! `mcp-conform sources check`: which requirements of a document still stand
//! on a newer text of it. Pure comparison, no I/O: the requirements and the
//! two texts come in, a [`CheckReport`] goes out (the CLI reads the files and
//! prints it).
//!
//! A requirement's quote is *verbatim* in the new text when each of its
//! pieces (a quote may leave text out with `…`) is found there, compared as
//! [`sources::normalize`] does for the built-in catalog. For a quote that is
//! gone, the nearest passage of the new text (one sentence, or two or three
//! in a row) is named with a word-level similarity score and a diff.
//! Normative sentences are those carrying an RFC 2119 keyword in capitals.

use serde::Serialize;
use similar::{ChangeTag, TextDiff};

use crate::requirements::Requirement;
use crate::sources;

/// A requirement whose quote is verbatim in the new text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Kept {
    pub id: String,
    pub level: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
}

/// The passage of the new text nearest to a piece of a quote that is gone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Nearest {
    /// The piece of the quote that is not in the new text.
    pub fragment: String,
    /// The new text's passage, as plain text.
    pub passage: String,
    /// The heading the passage sits under ("" before the first heading).
    pub section: String,
    /// Word-level similarity of the two, 0 (nothing shared) to 1 (the same).
    pub score: f32,
    /// The word diff from the fragment to the passage: `[-old-]` and `{+new+}`.
    pub diff: String,
}

/// A requirement whose quote is not (all) in the new text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gone {
    pub id: String,
    pub level: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    pub quote: String,
    /// One entry per missing piece of the quote.
    pub nearest: Vec<Nearest>,
}

/// A sentence of the new text with an RFC 2119 keyword.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Normative {
    /// The strongest keyword: MUST, SHOULD or MAY (REQUIRED and SHALL count
    /// as MUST, RECOMMENDED as SHOULD, OPTIONAL as MAY).
    pub level: &'static str,
    pub section: String,
    pub sentence: String,
}

/// What a new text of a document does to the requirements that quote it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    pub source: String,
    /// Requirements of the document with no quote (nothing to compare).
    pub unquoted_requirements: Vec<String>,
    pub verbatim: Vec<Kept>,
    pub gone: Vec<Gone>,
    /// Normative sentences of the new text that no requirement quotes.
    pub not_quoted: Vec<Normative>,
}

impl CheckReport {
    /// Whether some requirement's quote left the document.
    pub fn anything_gone(&self) -> bool {
        !self.gone.is_empty()
    }
}

/// Compares the requirements citing `source` with `text`, a text of that
/// document.
pub fn check(source: &str, requirements: &[Requirement], text: &str) -> CheckReport {
    let passages = passages(text);
    let mut report = CheckReport {
        source: source.to_string(),
        unquoted_requirements: Vec::new(),
        verbatim: Vec::new(),
        gone: Vec::new(),
        not_quoted: Vec::new(),
    };
    let own: Vec<&Requirement> = requirements
        .iter()
        .filter(|r| r.document == source)
        .collect();
    for r in &own {
        let Some(quote) = r.quote.as_deref() else {
            report.unquoted_requirements.push(r.id.clone());
            continue;
        };
        let missing: Vec<&str> = quote_pieces(quote)
            .filter(|piece| !sources::missing_fragments(piece, text).is_empty())
            .collect();
        if missing.is_empty() {
            report.verbatim.push(Kept {
                id: r.id.clone(),
                level: r.level.clone(),
                section: r.section.clone(),
            });
        } else {
            report.gone.push(Gone {
                id: r.id.clone(),
                level: r.level.clone(),
                section: r.section.clone(),
                quote: quote.to_string(),
                nearest: missing
                    .iter()
                    .filter_map(|piece| nearest(piece, &passages))
                    .collect(),
            });
        }
    }
    let quoted: Vec<String> = own
        .iter()
        .filter_map(|r| r.quote.as_deref())
        .flat_map(sources::quote_fragments)
        .collect();
    report.not_quoted = passages
        .iter()
        .filter_map(|p| {
            let level = strongest_keyword(&p.text)?;
            let sentence = sources::normalize(&p.text);
            let covered = quoted
                .iter()
                .any(|q| sentence.contains(q.as_str()) || q.contains(sentence.as_str()));
            (!covered).then(|| Normative {
                level,
                section: p.section.clone(),
                sentence: p.text.clone(),
            })
        })
        .collect();
    report
}

/// The report as the console shows it: each requirement kept, each one
/// gone with its nearest passage, then the normative sentences no
/// requirement quotes, and a summary line. `text_name` names the new text.
pub fn render_text(report: &CheckReport, text_name: &str) -> String {
    let mut out = format!(
        "{}: the requirements quoting it, against {text_name}\n",
        report.source
    );
    out.push_str(&format!("\nverbatim ({}):\n", report.verbatim.len()));
    for k in &report.verbatim {
        out.push_str(&format!(
            "  {} [{}]{}\n",
            k.id,
            k.level,
            in_section(&k.section)
        ));
    }
    out.push_str(&format!("\ngone ({}):\n", report.gone.len()));
    for g in &report.gone {
        out.push_str(&format!(
            "  {} [{}]{}\n",
            g.id,
            g.level,
            in_section(&g.section)
        ));
        out.push_str(&format!("    quote:   {}\n", plain(&g.quote)));
        for n in &g.nearest {
            if g.nearest.len() > 1 {
                out.push_str(&format!("    missing: {}\n", plain(&n.fragment)));
            }
            out.push_str(&format!(
                "    nearest: (similarity {:.2}{}) {}\n",
                n.score,
                if n.section.is_empty() {
                    String::new()
                } else {
                    format!(", under \"{}\"", n.section)
                },
                n.passage
            ));
            out.push_str(&format!("    diff:    {}\n", n.diff));
        }
    }
    out.push_str(&format!(
        "\nnormative sentences no requirement quotes ({}):\n",
        report.not_quoted.len()
    ));
    for n in &report.not_quoted {
        let section = if n.section.is_empty() {
            String::new()
        } else {
            format!(" ({})", n.section)
        };
        out.push_str(&format!("  [{}]{section} {}\n", n.level, n.sentence));
    }
    if !report.unquoted_requirements.is_empty() {
        out.push_str(&format!(
            "\nrequirements without a quote (not compared): {}\n",
            report.unquoted_requirements.join(", ")
        ));
    }
    out.push_str(&format!(
        "\n{} verbatim, {} gone, {} normative sentence(s) not quoted\n",
        report.verbatim.len(),
        report.gone.len(),
        report.not_quoted.len()
    ));
    out
}

fn in_section(section: &Option<String>) -> String {
    section
        .as_ref()
        .map(|s| format!(" {s}"))
        .unwrap_or_default()
}

/// The pieces of a quote between its `…`, trimmed, empty ones left out.
fn quote_pieces(quote: &str) -> impl Iterator<Item = &str> {
    quote.split('…').map(str::trim).filter(|p| !p.is_empty())
}

/// One sentence of a text, with the heading it sits under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    pub section: String,
    pub text: String,
}

/// The sentences of an MDX/Markdown text, in order: prose split at sentence
/// ends (paragraphs, list items and table rows each start anew), and the
/// string literals inside code blocks (a JSON schema's descriptions carry
/// rules too), each split the same way. Headings name the section of what
/// follows and are not sentences themselves.
pub fn passages(text: &str) -> Vec<Passage> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut paragraph = String::new();
    let mut in_code = false;
    let flush = |paragraph: &mut String, section: &str, out: &mut Vec<Passage>| {
        for sentence in sentences(paragraph) {
            out.push(Passage {
                section: section.to_string(),
                text: sentence,
            });
        }
        paragraph.clear();
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            flush(&mut paragraph, &section, &mut out);
            in_code = !in_code;
            continue;
        }
        if in_code {
            for literal in string_literals(trimmed) {
                paragraph.push_str(&literal);
                flush(&mut paragraph, &section, &mut out);
            }
            continue;
        }
        if let Some(heading) = trimmed.strip_prefix('#') {
            flush(&mut paragraph, &section, &mut out);
            section = heading.trim_start_matches('#').trim().to_string();
            continue;
        }
        let starts_item = trimmed.starts_with("- ")
            || trimmed.starts_with("* ")
            || trimmed.starts_with('|')
            || trimmed.starts_with('<')
            || trimmed
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if trimmed.is_empty() || starts_item || trimmed == "---" {
            flush(&mut paragraph, &section, &mut out);
        }
        if !trimmed.is_empty() && trimmed != "---" {
            paragraph.push(' ');
            paragraph.push_str(trimmed);
        }
    }
    flush(&mut paragraph, &section, &mut out);
    out
}

/// The JSON-style string literals of one line of code, with `\n` and `\"`
/// read as a line break and a quote mark.
fn string_literals(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.chars();
    while chars.by_ref().any(|c| c == '"') {
        let mut literal = String::new();
        let mut closed = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => literal.push('\n'),
                    Some(other) => literal.push(other),
                    None => break,
                },
                '"' => {
                    closed = true;
                    break;
                }
                other => literal.push(other),
            }
        }
        if closed {
            out.push(literal);
        }
    }
    out
}

/// A paragraph's sentences: split after `.`, `!` or `?` followed by a space,
/// and at line breaks (a colon does not end one: `listChanged: true`); list markers and Markdown emphasis dropped,
/// whitespace collapsed. Common abbreviations (`e.g.`, `i.e.`) do not end a
/// sentence.
fn sentences(paragraph: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in paragraph.split('\n') {
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut current: Vec<&str> = Vec::new();
        for (i, word) in words.iter().enumerate() {
            if current.is_empty() && i == 0 && matches!(*word, "-" | "*") {
                continue;
            }
            current.push(word);
            let ends = word.ends_with(['.', '!', '?'])
                && !matches!(
                    word.to_ascii_lowercase().as_str(),
                    "e.g." | "i.e." | "(e.g.," | "vs."
                );
            if ends {
                out.push(plain(&current.join(" ")));
                current.clear();
            }
        }
        if !current.is_empty() {
            out.push(plain(&current.join(" ")));
        }
    }
    out.retain(|s| s.chars().any(char::is_alphanumeric));
    out
}

/// Text as a reader sees it: emphasis marks dropped, whitespace collapsed.
pub fn plain(text: &str) -> String {
    text.replace("**", "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The strongest RFC 2119 keyword of a sentence, as MUST, SHOULD or MAY;
/// `None` without one. Only capitals count, as RFC 8174 says.
pub fn strongest_keyword(sentence: &str) -> Option<&'static str> {
    let words: Vec<&str> = sentence
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |k: &str| words.contains(&k);
    if has("MUST") || has("REQUIRED") || has("SHALL") {
        Some("MUST")
    } else if has("SHOULD") || has("RECOMMENDED") {
        Some("SHOULD")
    } else if has("MAY") || has("OPTIONAL") {
        Some("MAY")
    } else {
        None
    }
}

/// The passage of `passages` (one sentence, or up to three in a row within
/// one section) most like `fragment`, by word-level similarity.
fn nearest(fragment: &str, passages: &[Passage]) -> Option<Nearest> {
    let wanted = plain(&fragment.replace('`', ""));
    let mut best: Option<(f32, String, &str)> = None;
    for start in 0..passages.len() {
        let mut joined = String::new();
        for p in passages[start..].iter().take(3) {
            if p.section != passages[start].section {
                break;
            }
            if !joined.is_empty() {
                joined.push(' ');
            }
            joined.push_str(&p.text);
            let score = similarity(&wanted, &joined.replace('`', ""));
            if best.as_ref().is_none_or(|(b, _, _)| score > *b) {
                best = Some((score, joined.clone(), &passages[start].section));
            }
        }
    }
    let (score, passage, section) = best?;
    Some(Nearest {
        fragment: fragment.to_string(),
        diff: word_diff(&wanted, &passage.replace('`', "")),
        passage,
        section: section.to_string(),
        score: (score * 100.0).round() / 100.0,
    })
}

/// `similar`'s ratio of two texts compared word by word.
pub fn similarity(a: &str, b: &str) -> f32 {
    TextDiff::from_words(a, b).ratio()
}

/// The word diff from `old` to `new`: kept words as they are, removed ones
/// in `[-…-]`, added ones in `{+…+}`.
pub fn word_diff(old: &str, new: &str) -> String {
    let diff = TextDiff::from_words(old, new);
    let mut out = String::new();
    let mut open: Option<ChangeTag> = None;
    for change in diff.iter_all_changes() {
        let tag = change.tag();
        let word = change.value();
        if open != Some(tag) {
            close(&mut out, open);
            match tag {
                ChangeTag::Delete => out.push_str("[-"),
                ChangeTag::Insert => out.push_str("{+"),
                ChangeTag::Equal => {}
            }
            open = Some(tag);
        }
        out.push_str(word);
    }
    close(&mut out, open);
    plain(&out)
}

fn close(out: &mut String, open: Option<ChangeTag>) {
    let mark = match open {
        Some(ChangeTag::Delete) => "-]",
        Some(ChangeTag::Insert) => "+}",
        _ => return,
    };
    // a change ends before the space that separates it from the next word
    let trailing = out.len() - out.trim_end().len();
    let at = out.len() - trailing;
    out.insert_str(at, mark);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requirements::Provenance;

    fn requirement(id: &str, document: &str, quote: Option<&str>) -> Requirement {
        Requirement {
            id: id.into(),
            level: "MUST".into(),
            profile: "p".into(),
            text: "t".into(),
            document: document.into(),
            source: Provenance::Draft,
            section: Some("S".into()),
            quote: quote.map(str::to_string),
            scenarios: Vec::new(),
            basis: None,
            side: Default::default(),
            rules: Vec::new(),
        }
    }

    const OLD: &str = "\
## Capability

Servers that support groups **MUST** declare support during initialization.

### Constraints

- Servers **MUST NOT** create self-referential groups (a group belonging to itself).
- Clients **MAY** show nested groups.
";

    const NEW: &str = "\
## Capability

Servers that support groups MUST declare the capability during initialization, including whether list change notifications are supported. Group lists can change.

```json
{ \"description\": \"Clients rendering icons MUST accept PNG.\\nOther text.\" }
```

### Partial Support

A server **MAY** support groups for only a subset of its primitives. For example, a server might group its tools.
";

    #[test]
    fn passages_split_prose_lists_and_code_strings_under_their_headings() {
        let got = passages(OLD);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[1].section, "Constraints");
        assert_eq!(
            got[1].text,
            "Servers MUST NOT create self-referential groups (a group belonging to itself)."
        );
        let new = passages(NEW);
        let texts: Vec<&str> = new.iter().map(|p| p.text.as_str()).collect();
        assert!(
            texts.contains(&"Clients rendering icons MUST accept PNG."),
            "{texts:?}"
        );
        assert!(texts.contains(&"Other text."), "{texts:?}");
        assert!(texts.contains(&"Group lists can change."), "{texts:?}");
        assert!(
            texts.contains(&"For example, a server might group its tools."),
            "{texts:?}"
        );
    }

    #[test]
    fn keywords_count_only_in_capitals_and_the_strongest_wins() {
        assert_eq!(
            strongest_keyword("Servers MUST NOT do it; they MAY ask."),
            Some("MUST")
        );
        assert_eq!(strongest_keyword("It is RECOMMENDED."), Some("SHOULD"));
        assert_eq!(strongest_keyword("This is **OPTIONAL**."), Some("MAY"));
        assert_eq!(strongest_keyword("Names must be unique; you may."), None);
        assert_eq!(strongest_keyword("MUSTARD is no keyword"), None);
    }

    #[test]
    fn a_quote_is_verbatim_gone_or_partly_gone() {
        let reqs = [
            requirement("A-1", "doc", Some("A server **MAY** support groups for only a subset of its primitives.")),
            requirement("A-2", "doc", Some("Servers **MUST NOT** create self-referential groups (a group belonging to itself).")),
            requirement("A-3", "doc", Some("Servers that support groups MUST declare … belonging to itself")),
            requirement("A-4", "doc", None),
            requirement("B-1", "other", Some("not checked")),
        ];
        let report = check("doc", &reqs, NEW);
        let kept: Vec<&str> = report.verbatim.iter().map(|k| k.id.as_str()).collect();
        let gone: Vec<&str> = report.gone.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(kept, ["A-1"]);
        assert_eq!(gone, ["A-2", "A-3"]);
        assert_eq!(report.unquoted_requirements, ["A-4"]);
        assert!(report.anything_gone());
        // only the missing piece of A-3 gets a nearest passage
        assert_eq!(report.gone[1].nearest.len(), 1);
        assert_eq!(report.gone[1].nearest[0].fragment, "belonging to itself");
    }

    #[test]
    fn the_nearest_passage_of_a_reworded_quote_is_found_with_a_diff() {
        let reqs = [requirement(
            "CAP",
            "doc",
            Some("Servers that support groups **MUST** declare support during initialization."),
        )];
        let report = check("doc", &reqs, NEW);
        let near = &report.gone[0].nearest[0];
        assert_eq!(near.section, "Capability");
        assert!(
            near.passage
                .starts_with("Servers that support groups MUST declare the capability"),
            "{near:?}"
        );
        assert!(near.score > 0.5 && near.score < 1.0, "{near:?}");
        assert!(near.diff.contains("[-support-]"), "{}", near.diff);
        assert!(
            near.diff.contains("{+the+}") && near.diff.contains("{+capability+}"),
            "{}",
            near.diff
        );
    }

    #[test]
    fn normative_sentences_no_requirement_quotes_are_listed() {
        let reqs = [requirement(
            "A-1",
            "doc",
            Some("A server **MAY** support groups for only a subset of its primitives."),
        )];
        let report = check("doc", &reqs, NEW);
        let listed: Vec<(&str, &str)> = report
            .not_quoted
            .iter()
            .map(|n| (n.level, n.sentence.as_str()))
            .collect();
        assert_eq!(
            listed,
            [
                ("MUST", "Servers that support groups MUST declare the capability during initialization, including whether list change notifications are supported."),
                ("MUST", "Clients rendering icons MUST accept PNG."),
            ]
        );
        assert!(!check("doc", &reqs[..0], "No rule here.").anything_gone());
    }

    #[test]
    fn the_word_diff_marks_removed_and_added_words() {
        assert_eq!(word_diff("a b c", "a x c"), "a [-b-]{+x+} c");
        assert_eq!(word_diff("a b", "a b"), "a b");
        assert!(similarity("a b c d", "a b c d") > 0.99);
    }
}
