//! The generators: data-driven building blocks that draw one value of a
//! case from a seeded [`Rng`] and, for `subset`/`pick`/`words`, from lists
//! the server itself gave (evaluated by the runner before the first case).

use serde_json::{json, Value};

use crate::rng::Rng;
use crate::scenario::model::Expr;

/// Free-text building blocks (`text: [unicode, rtl, …]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// Printable ASCII.
    Ascii,
    /// Words of the `words:` list (the server's own vocabulary).
    Words,
    /// Code points of every plane (0-3 and 14-16), surrogates excepted.
    Unicode,
    /// Letters followed by combining marks (U+0300–U+036F).
    Combining,
    /// Hebrew and Arabic letters, with right-to-left marks and overrides.
    Rtl,
    /// CJK unified ideographs.
    Cjk,
    /// Emoji, some joined by ZWJ or carrying skin-tone modifiers.
    Emoji,
    /// C0 and C1 control characters (NUL excepted).
    Control,
    /// NUL.
    Nul,
    /// A very long run (thousands of characters) of another kind.
    Long,
    /// Text that looks like JSON.
    Json,
    /// Text that looks like a regular expression (some of them invalid).
    Regex,
}

impl TextKind {
    pub const ALL: &'static [(&'static str, TextKind)] = &[
        ("ascii", TextKind::Ascii),
        ("words", TextKind::Words),
        ("unicode", TextKind::Unicode),
        ("combining", TextKind::Combining),
        ("rtl", TextKind::Rtl),
        ("cjk", TextKind::Cjk),
        ("emoji", TextKind::Emoji),
        ("control", TextKind::Control),
        ("nul", TextKind::Nul),
        ("long", TextKind::Long),
        ("json", TextKind::Json),
        ("regex", TextKind::Regex),
    ];

    pub fn parse(name: &str) -> Option<TextKind> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
    }
}

/// The first cases of a run try the edges before any random draw: every
/// generator at its smallest (empty sets, empty text, the minimum), then at
/// its largest (whole vocabularies, long text, the maximum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    Smallest,
    Largest,
}

/// One named generator of a `generate:` block.
#[derive(Debug, Clone, PartialEq)]
pub enum Gen {
    /// A list drawn from the CEL list `from`: any size from `min` to `max`
    /// (default: all of it), with repeats and unknown names mixed in when
    /// asked, and names changed in case or cut short (`variants`).
    Subset {
        from: Expr,
        min: usize,
        max: Option<usize>,
        repeats: bool,
        unknown: bool,
        variants: bool,
    },
    /// One item of the CEL list `from` (or, with `unknown`, a name it lacks).
    Pick {
        from: Expr,
        unknown: bool,
        variants: bool,
    },
    /// Free text of the listed kinds, at most `max_len` characters (`long` excepted).
    Text {
        kinds: Vec<TextKind>,
        words: Option<Expr>,
        max_len: usize,
    },
    /// An integer in `min..=max`.
    Int { min: i64, max: i64 },
    /// One of the listed values.
    OneOf(Vec<Value>),
    /// `{name, miss, kind}`: a name of the CEL list `from` and a near miss
    /// of it that the list lacks (see [`super::near::near_miss`]).
    NearMiss { from: Expr },
    /// Which of the named optional arguments are present (see
    /// [`super::near::combination`]).
    Combinations(Vec<String>),
}

impl Gen {
    /// The CEL list this generator draws from, evaluated once per scenario.
    pub fn source(&self) -> Option<&Expr> {
        match self {
            Gen::Subset { from, .. } | Gen::Pick { from, .. } | Gen::NearMiss { from } => {
                Some(from)
            }
            Gen::Text { words, .. } => words.as_ref(),
            Gen::Int { .. } | Gen::OneOf(_) | Gen::Combinations(_) => None,
        }
    }

    /// Draws one value; `source` is the evaluated list of [`Gen::source`].
    pub fn draw(&self, source: &[Value], rng: &mut Rng) -> Value {
        self.draw_at(source, rng, None)
    }

    /// Draws case `index`'s value: the generators that go through their
    /// inputs in a set order (near-miss kinds, argument combinations) follow
    /// the index; the others draw as [`Gen::draw_at`].
    pub fn draw_case(
        &self,
        source: &[Value],
        rng: &mut Rng,
        edge: Option<Edge>,
        index: usize,
    ) -> Value {
        match self {
            Gen::NearMiss { .. } => super::near::near_miss(source, index, rng),
            Gen::Combinations(names) => super::near::combination(names, index, rng),
            _ => self.draw_at(source, rng, edge),
        }
    }

    /// Draws one value, at an edge when one is given.
    pub fn draw_at(&self, source: &[Value], rng: &mut Rng, edge: Option<Edge>) -> Value {
        if let Some(edge) = edge {
            if let Some(v) = self.edge(source, edge) {
                return v;
            }
        }
        match self {
            Gen::Subset {
                min,
                max,
                repeats,
                unknown,
                variants,
                ..
            } => draw_subset(source, *min, *max, *repeats, *unknown, *variants, rng),
            Gen::Pick {
                unknown, variants, ..
            } => {
                if source.is_empty() || (*unknown && rng.chance(1, 8)) {
                    return unknown_name(rng);
                }
                let item = rng.pick(source).cloned().unwrap_or(Value::Null);
                if *variants && rng.chance(1, 4) {
                    variant(&item, rng)
                } else {
                    item
                }
            }
            Gen::Text { kinds, max_len, .. } => {
                Value::String(draw_text(kinds, source, *max_len, rng))
            }
            Gen::Int { min, max } => {
                let span = (*max - *min).max(0) as usize;
                json!(*min + rng.below(span.saturating_add(1)) as i64)
            }
            Gen::OneOf(items) => rng.pick(items).cloned().unwrap_or(Value::Null),
            Gen::NearMiss { .. } => super::near::near_miss(source, 0, rng),
            Gen::Combinations(names) => super::near::combination(names, 0, rng),
        }
    }
}

impl Gen {
    fn edge(&self, source: &[Value], edge: Edge) -> Option<Value> {
        let smallest = edge == Edge::Smallest;
        Some(match self {
            Gen::Subset { min, max, .. } => {
                let n = if smallest {
                    *min
                } else {
                    max.unwrap_or(source.len()).max(*min)
                };
                Value::Array(source.iter().take(n).cloned().collect())
            }
            Gen::Pick { .. } if smallest => source.first()?.clone(),
            Gen::Pick { .. } => source.last()?.clone(),
            Gen::Text { .. } if smallest => json!(""),
            Gen::Text { .. } => return None,
            Gen::Int { min, max } => json!(if smallest { *min } else { *max }),
            Gen::OneOf(items) if smallest => items.first()?.clone(),
            Gen::OneOf(items) => items.last()?.clone(),
            Gen::NearMiss { .. } | Gen::Combinations(_) => return None,
        })
    }
}

fn draw_subset(
    source: &[Value],
    min: usize,
    max: Option<usize>,
    repeats: bool,
    unknown: bool,
    variants: bool,
    rng: &mut Rng,
) -> Value {
    let max = max.unwrap_or(source.len()).max(min);
    // Sizes are drawn so that the empty set and the whole vocabulary come
    // up as often as any size between: the edges are where servers break.
    let size = match rng.below(4) {
        0 => min,
        1 => max,
        _ => rng.between(min, max),
    };
    // A partial Fisher-Yates shuffle: distinct members first.
    let mut pool: Vec<Value> = source.to_vec();
    let mut out = Vec::with_capacity(size);
    for _ in 0..size {
        if pool.is_empty() {
            break;
        }
        let i = rng.below(pool.len());
        out.push(pool.swap_remove(i));
    }
    if repeats && !out.is_empty() && rng.chance(1, 3) {
        let again = out[rng.below(out.len())].clone();
        let at = rng.below(out.len() + 1);
        out.insert(at, again);
    }
    if unknown && rng.chance(1, 4) {
        let at = rng.below(out.len() + 1);
        out.insert(at, unknown_name(rng));
    }
    if variants {
        for item in out.iter_mut() {
            if rng.chance(1, 5) {
                *item = variant(item, rng);
            }
        }
    }
    Value::Array(out)
}

/// A name no server lists: what an unknown group, tag or tool looks like.
fn unknown_name(rng: &mut Rng) -> Value {
    json!(format!("zz_unknown_{}", rng.below(1000)))
}

/// A near miss of a listed name: another case, a prefix, a suffix.
fn variant(item: &Value, rng: &mut Rng) -> Value {
    let Some(name) = item.as_str() else {
        return item.clone();
    };
    let chars: Vec<char> = name.chars().collect();
    let changed = match rng.below(4) {
        0 => name.to_uppercase(),
        1 => {
            let mut flipped = String::new();
            for (i, c) in chars.iter().enumerate() {
                if i == 0 {
                    flipped.extend(flip_case(*c));
                } else {
                    flipped.push(*c);
                }
            }
            flipped
        }
        2 => chars[..chars.len().div_ceil(2)].iter().collect(),
        _ => format!("{name}_x"),
    };
    if changed == name {
        json!(format!("{name}_x"))
    } else {
        json!(changed)
    }
}

fn flip_case(c: char) -> Vec<char> {
    if c.is_uppercase() {
        c.to_lowercase().collect()
    } else {
        c.to_uppercase().collect()
    }
}

/// The number of characters of a `long` run.
const LONG_MIN: usize = 2_000;
const LONG_MAX: usize = 8_000;

fn draw_text(kinds: &[TextKind], words: &[Value], max_len: usize, rng: &mut Rng) -> String {
    let segments = rng.between(1, 3);
    let mut out = String::new();
    let mut long = false;
    for _ in 0..segments {
        let kind = rng.pick(kinds).copied().unwrap_or(TextKind::Ascii);
        if kind == TextKind::Long {
            long = true;
            let inner: Vec<TextKind> = kinds
                .iter()
                .copied()
                .filter(|k| *k != TextKind::Long)
                .collect();
            let inner = rng.pick(&inner).copied().unwrap_or(TextKind::Ascii);
            let want = rng.between(LONG_MIN, LONG_MAX);
            let mut run = String::new();
            while run.chars().count() < want {
                run.push_str(&segment(inner, words, rng));
                run.push(' ');
            }
            out.push_str(&run.chars().take(want).collect::<String>());
        } else {
            if !out.is_empty() && rng.chance(1, 2) {
                out.push(' ');
            }
            out.push_str(&segment(kind, words, rng));
        }
    }
    if long {
        out
    } else {
        out.chars().take(max_len.max(1)).collect()
    }
}

fn char_in(rng: &mut Rng, lo: u32, hi: u32) -> char {
    let n = rng.between(lo as usize, hi as usize) as u32;
    char::from_u32(n).unwrap_or('?')
}

/// One run of characters of a kind, a few characters long.
fn segment(kind: TextKind, words: &[Value], rng: &mut Rng) -> String {
    let len = rng.between(1, 6);
    let mut s = String::new();
    match kind {
        TextKind::Ascii => (0..len).for_each(|_| s.push(char_in(rng, 0x20, 0x7e))),
        TextKind::Words => match rng.pick(words).and_then(Value::as_str) {
            Some(w) => s.push_str(w),
            None => s.push_str("tool"),
        },
        TextKind::Unicode => (0..len).for_each(|_| {
            // Planes 0-3 and 14-16: every plane that has (or reserves) characters.
            let plane = [0u32, 0, 1, 1, 2, 3, 14, 15, 16][rng.below(9)];
            let mut cp = (plane << 16) | rng.below(0x1_0000) as u32;
            if (0xD800..=0xDFFF).contains(&cp) {
                cp = 0xFFFD;
            }
            s.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
        }),
        TextKind::Combining => (0..len).for_each(|_| {
            s.push(char_in(rng, 'a' as u32, 'z' as u32));
            for _ in 0..rng.between(1, 3) {
                s.push(char_in(rng, 0x300, 0x36F));
            }
        }),
        TextKind::Rtl => {
            let marks = ['\u{200F}', '\u{202E}', '\u{202B}', '\u{2067}'];
            if rng.chance(1, 2) {
                s.push(marks[rng.below(marks.len())]);
            }
            let (lo, hi) = if rng.chance(1, 2) {
                (0x5D0, 0x5EA)
            } else {
                (0x627, 0x64A)
            };
            (0..len).for_each(|_| s.push(char_in(rng, lo, hi)));
        }
        TextKind::Cjk => (0..len).for_each(|_| s.push(char_in(rng, 0x4E00, 0x9FFF))),
        TextKind::Emoji => (0..len.min(3)).for_each(|_| {
            s.push(char_in(rng, 0x1F300, 0x1F64F));
            match rng.below(4) {
                0 => s.push(char_in(rng, 0x1F3FB, 0x1F3FF)),
                1 => {
                    s.push('\u{200D}');
                    s.push(char_in(rng, 0x1F300, 0x1F64F));
                }
                _ => {}
            }
        }),
        TextKind::Control => (0..len).for_each(|_| {
            if rng.chance(3, 4) {
                s.push(char_in(rng, 0x01, 0x1F));
            } else {
                s.push(char_in(rng, 0x7F, 0x9F));
            }
        }),
        TextKind::Nul => s.push('\0'),
        TextKind::Json => {
            let shapes = [
                "{\"a\": 1}",
                "[1, 2, 3]",
                "null",
                "{\"$ref\": \"#\"}",
                "{\"query\": {\"$ne\": null}}",
                "\"\\u0000\"",
                "{\"__proto__\": {}}",
                "[]",
            ];
            s.push_str(shapes[rng.below(shapes.len())]);
        }
        TextKind::Regex => {
            let shapes = [
                ".*", "(a|", "[^]", "\\d+", "^$", "(?i)page", "a{99999}", "(a+)+$", "[", "\\", "*",
                "%", "_",
            ];
            s.push_str(shapes[rng.below(shapes.len())]);
        }
        TextKind::Long => s.push_str("long"),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(s: &str) -> Expr {
        Expr::unplaced(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn names(n: usize) -> Vec<Value> {
        (0..n).map(|i| json!(format!("g{i}"))).collect()
    }

    #[test]
    fn subsets_reach_every_size_from_empty_to_whole() {
        let gen = Gen::Subset {
            from: expr("x"),
            min: 0,
            max: None,
            repeats: false,
            unknown: false,
            variants: false,
        };
        let source = names(6);
        let mut sizes = std::collections::BTreeSet::new();
        for case in 0..200 {
            let mut rng = Rng::for_case(0, "t", case);
            let v = gen.draw(&source, &mut rng);
            let items = v.as_array().cloned().unwrap_or_default();
            assert!(items.iter().all(|i| source.contains(i)), "{v}");
            let mut sorted: Vec<String> = items.iter().map(|i| i.to_string()).collect();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), items.len(), "no repeats unless asked: {v}");
            sizes.insert(items.len());
        }
        assert_eq!(sizes, (0..=6).collect());
    }

    #[test]
    fn subsets_mix_in_repeats_unknown_names_and_variants_when_asked() {
        let gen = Gen::Subset {
            from: expr("x"),
            min: 1,
            max: Some(3),
            repeats: true,
            unknown: true,
            variants: true,
        };
        let source = vec![
            json!("page_create"),
            json!("page_delete"),
            json!("issue_list"),
        ];
        let (mut unknown, mut repeated, mut varied) = (false, false, false);
        for case in 0..300 {
            let v = gen.draw(&source, &mut Rng::for_case(9, "t", case));
            let items: Vec<&str> = v
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            unknown |= items.iter().any(|i| i.starts_with("zz_unknown_"));
            varied |= items
                .iter()
                .any(|i| !i.starts_with("zz_") && !source.contains(&json!(i)));
            let mut d = items.clone();
            d.sort();
            d.dedup();
            repeated |= d.len() < items.len();
        }
        assert!(unknown && repeated && varied);
    }

    #[test]
    fn text_covers_the_kinds_asked_for() {
        let all: Vec<TextKind> = TextKind::ALL.iter().map(|(_, k)| *k).collect();
        let gen = Gen::Text {
            kinds: all,
            words: None,
            max_len: 40,
        };
        let words = vec![json!("page")];
        let mut seen = (false, false, false, false, false);
        for case in 0..400 {
            let v = gen.draw(&words, &mut Rng::for_case(0, "text", case));
            let s = v.as_str().unwrap_or_default().to_string();
            let n = s.chars().count();
            assert!(n <= 40 || n >= LONG_MIN, "{n}");
            seen.0 |= s.contains('\0');
            seen.1 |= s.chars().any(|c| c as u32 > 0xFFFF);
            seen.2 |= s.chars().any(|c| (0x300..=0x36F).contains(&(c as u32)));
            seen.3 |= n >= LONG_MIN;
            seen.4 |= s.contains("page");
        }
        assert_eq!(seen, (true, true, true, true, true));
    }

    #[test]
    fn ints_and_one_of_stay_in_bounds() {
        let gen = Gen::Int { min: -2, max: 3 };
        let one = Gen::OneOf(vec![json!("a"), json!("b")]);
        for case in 0..100 {
            let mut rng = Rng::for_case(1, "i", case);
            let n = gen.draw(&[], &mut rng).as_i64().unwrap_or(99);
            assert!((-2..=3).contains(&n));
            let v = one.draw(&[], &mut rng);
            assert!(v == json!("a") || v == json!("b"));
        }
    }

    #[test]
    fn a_pick_from_nothing_is_an_unknown_name() {
        let gen = Gen::Pick {
            from: expr("x"),
            unknown: false,
            variants: false,
        };
        let v = gen.draw(&[], &mut Rng::new(0));
        assert!(v.as_str().is_some_and(|s| s.starts_with("zz_unknown_")));
    }
}
