//! Shrinking: from a failing case, candidates that are simpler (fewer set
//! members, shorter strings, plainer characters, smaller numbers), tried
//! one by one; the first that still fails becomes the case, until none
//! does or the attempts run out. Pure: the runner says which failed.

use serde_json::Value;

use super::gen::Gen;
use super::Case;

/// At most this many single-item removals / single-character edits per value.
const MAX_POSITIONS: usize = 24;

/// Simpler versions of one generated value, simplest first.
pub fn candidates(gen: &Gen, source: &[Value], value: &Value) -> Vec<Value> {
    let mut out = match (gen, value) {
        (Gen::Subset { min, .. }, Value::Array(items)) => shrink_list(items, *min),
        // A listed value shrinks to an earlier one, never to text cut from it.
        (Gen::OneOf(items), v) => items.iter().take_while(|i| *i != v).cloned().collect(),
        (Gen::Pick { .. }, Value::String(s)) => {
            // A listed name is simpler than any text cut from one.
            let mut c: Vec<Value> = source.first().cloned().into_iter().collect();
            c.extend(shrink_text(s));
            c
        }
        (Gen::Pick { .. }, v) => source
            .first()
            .into_iter()
            .filter(|f| *f != v)
            .cloned()
            .collect(),
        (Gen::Text { .. }, Value::String(s)) => shrink_text(s),
        // Fewer arguments present: the smallest combination that still fails.
        (Gen::Combinations(_), Value::Array(items)) => shrink_list(items, 0),
        (Gen::Int { min, max }, Value::Number(n)) => {
            shrink_int(n.as_i64().unwrap_or(*min), *min, *max)
        }
        _ => Vec::new(),
    };
    out.retain(|c| c != value);
    let mut seen = Vec::new();
    out.retain(|c| {
        if seen.contains(c) {
            false
        } else {
            seen.push(c.clone());
            true
        }
    });
    out
}

fn shrink_list(items: &[Value], min: usize) -> Vec<Value> {
    let n = items.len();
    let mut out = Vec::new();
    if n <= min {
        return out;
    }
    if min == 0 {
        out.push(Value::Array(Vec::new()));
    }
    if n >= 2 {
        let half = n / 2;
        for part in [&items[..half], &items[half..]] {
            if part.len() >= min {
                out.push(Value::Array(part.to_vec()));
            }
        }
    }
    for i in 0..n.min(MAX_POSITIONS) {
        let mut fewer = items.to_vec();
        fewer.remove(i);
        out.push(Value::Array(fewer));
    }
    out
}

fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == ' ' || c == '_'
}

fn shrink_text(s: &str) -> Vec<Value> {
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len();
    let text = |cs: &[char]| Value::String(cs.iter().collect());
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    out.push(Value::String(String::new()));
    if n >= 2 {
        out.push(text(&chars[..n / 2]));
        out.push(text(&chars[n / 2..]));
    }
    if n > 8 {
        let q = n / 4;
        out.push(text(&[&chars[..q], &chars[2 * q..]].concat()));
        out.push(text(&chars[..n - q]));
        out.push(text(&chars[q..]));
    }
    if n <= MAX_POSITIONS {
        for i in 0..n {
            let mut fewer = chars.clone();
            fewer.remove(i);
            out.push(text(&fewer));
        }
    }
    // Plainer characters: all at once, then one at a time.
    let plain: Vec<char> = chars
        .iter()
        .map(|c| if is_plain(*c) { *c } else { 'a' })
        .collect();
    if plain != chars {
        out.push(text(&plain));
        for (i, c) in chars.iter().enumerate().take(MAX_POSITIONS) {
            if !is_plain(*c) {
                let mut one = chars.clone();
                one[i] = 'a';
                out.push(text(&one));
            }
        }
    }
    out
}

fn shrink_int(v: i64, min: i64, max: i64) -> Vec<Value> {
    let target = 0i64.clamp(min, max.max(min));
    let mut out = Vec::new();
    if v != target {
        out.push(Value::from(target));
        out.push(Value::from(target + (v - target) / 2));
        out.push(Value::from(if v > target { v - 1 } else { v + 1 }));
    }
    out
}

/// Walks from a failing case to a locally minimal one.
#[derive(Debug, Clone)]
pub struct Shrinker {
    current: Case,
    queue: Vec<Case>,
    attempts: usize,
    max_attempts: usize,
    accepted: usize,
    /// Candidates handed out since the queue was last built.
    taken: usize,
}

impl Shrinker {
    /// `gens` and `sources` are per variable, in the case's order.
    pub fn new(failing: Case, max_attempts: usize) -> Self {
        Self {
            current: failing,
            queue: Vec::new(),
            attempts: 0,
            max_attempts,
            accepted: 0,
            taken: 0,
        }
    }

    /// The next candidate to try, or None when done.
    pub fn next(&mut self, gens: &[(&Gen, &[Value])]) -> Option<Case> {
        if self.attempts >= self.max_attempts {
            return None;
        }
        if self.queue.is_empty() && self.attempts == 0 && self.accepted == 0 {
            self.queue = self.neighbours(gens);
        }
        if self.queue.is_empty() {
            return None;
        }
        self.attempts += 1;
        self.taken += 1;
        Some(self.queue.remove(0))
    }

    /// The candidate last handed out still fails: it becomes the case, and
    /// the search starts again from it.
    pub fn accept(&mut self, candidate: Case, gens: &[(&Gen, &[Value])]) {
        self.current = candidate;
        self.accepted += 1;
        let mut queue = self.neighbours(gens);
        // The candidates before the one that worked did not fail a moment
        // ago and most likely still do not: start where the last one worked
        // (and wrap around to them last).
        let resume = self.taken.saturating_sub(1).min(queue.len());
        queue.rotate_left(resume);
        self.queue = queue;
        self.taken = 0;
    }

    fn neighbours(&self, gens: &[(&Gen, &[Value])]) -> Vec<Case> {
        let mut out = Vec::new();
        for (i, (name, value)) in self.current.iter().enumerate() {
            let Some((gen, source)) = gens.get(i) else {
                continue;
            };
            for c in candidates(gen, source, value) {
                let mut case = self.current.clone();
                case[i] = (name.clone(), c);
                out.push(case);
            }
        }
        out
    }

    pub fn current(&self) -> &Case {
        &self.current
    }

    /// Candidates tried (each one real request sequence).
    pub fn attempts(&self) -> usize {
        self.attempts
    }

    /// Candidates that still failed.
    pub fn accepted(&self) -> usize {
        self.accepted
    }
}

/// Shrinks with a pure predicate (tests and tools): the minimal case that
/// still fails, and the attempts it took.
pub fn shrink(
    failing: Case,
    gens: &[(&Gen, &[Value])],
    max_attempts: usize,
    mut fails: impl FnMut(&Case) -> bool,
) -> (Case, usize) {
    let mut s = Shrinker::new(failing, max_attempts);
    while let Some(c) = s.next(gens) {
        if fails(&c) {
            s.accept(c, gens);
        }
    }
    (s.current().clone(), s.attempts())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::generate::gen::TextKind;
    use serde_json::json;

    fn text() -> Gen {
        Gen::Text {
            kinds: vec![TextKind::Unicode],
            words: None,
            max_len: 64,
        }
    }

    #[test]
    fn a_set_shrinks_to_the_members_that_matter() {
        let g = crate::scenario::generate::test_subset();
        let case = vec![("gs".to_string(), json!(["a", "b", "c", "d", "e", "f"]))];
        // Fails whenever 4 or more names are asked for (a server that caps filters at 3).
        let (min, _) = shrink(case, &[(&g, &[])], 100, |c| {
            c[0].1.as_array().is_some_and(|a| a.len() >= 4)
        });
        assert_eq!(min[0].1.as_array().map(Vec::len), Some(4));
        // Fails when "c" and "e" are both there.
        let case = vec![("gs".to_string(), json!(["a", "b", "c", "d", "e", "f"]))];
        let (min, _) = shrink(case, &[(&g, &[])], 100, |c| {
            let a = c[0].1.as_array().cloned().unwrap_or_default();
            a.contains(&json!("c")) && a.contains(&json!("e"))
        });
        assert_eq!(min[0].1, json!(["c", "e"]));
    }

    #[test]
    fn text_shrinks_to_the_character_that_matters() {
        let g = text();
        let case = vec![(
            "q".to_string(),
            json!("page \u{05D0}\u{200F}x\u{1F600} create \u{0301}"),
        )];
        let (min, _) = shrink(case, &[(&g, &[])], 200, |c| {
            c[0].1
                .as_str()
                .is_some_and(|s| s.chars().any(|c| c as u32 > 0xFFFF))
        });
        assert_eq!(min[0].1, json!("\u{1F600}"));
    }

    #[test]
    fn shrinking_is_deterministic_and_bounded() {
        let g = text();
        let case = vec![(
            "q".to_string(),
            json!("abcdefghijklmnopqrstuvwxyz0123456789"),
        )];
        let long_enough = |c: &Case| c[0].1.as_str().is_some_and(|s| s.chars().count() >= 5);
        let run = || shrink(case.clone(), &[(&g, &[])], 7, long_enough);
        let (a, attempts) = run();
        assert_eq!(attempts, 7);
        assert_eq!(a, run().0);
        let (min, _) = shrink(case.clone(), &[(&g, &[])], 500, long_enough);
        assert_eq!(min[0].1.as_str().map(|s| s.chars().count()), Some(5));
        // Always failing: the empty string, at the first attempt.
        let (empty, attempts) = shrink(case.clone(), &[(&g, &[])], 50, |_| true);
        assert_eq!((empty[0].1.clone(), attempts), (json!(""), 1));
    }

    #[test]
    fn a_listed_value_shrinks_to_an_earlier_one_only() {
        let g = Gen::OneOf(vec![json!("both"), json!("groups"), json!("tags")]);
        assert_eq!(
            candidates(&g, &[], &json!("tags")),
            vec![json!("both"), json!("groups")]
        );
        assert!(candidates(&g, &[], &json!("both")).is_empty());
    }

    #[test]
    fn numbers_shrink_toward_zero_within_bounds() {
        let g = Gen::Int { min: 1, max: 100 };
        let case = vec![("n".to_string(), json!(77))];
        let (min, _) = shrink(case, &[(&g, &[])], 100, |c| c[0].1.as_i64() >= Some(11));
        assert_eq!(min[0].1, json!(11));
    }

    #[test]
    fn several_variables_shrink_one_at_a_time() {
        let (gs, q) = (crate::scenario::generate::test_subset(), text());
        let case = vec![
            ("gs".to_string(), json!(["a", "b", "c"])),
            ("q".to_string(), json!("hello world")),
        ];
        let gens: Vec<(&Gen, &[Value])> = vec![(&gs, &[]), (&q, &[])];
        let (min, _) = shrink(case, &gens, 100, |c| {
            c[1].1.as_str().is_some_and(|s| s.contains('w'))
        });
        assert_eq!(min[0].1, json!([]));
        assert_eq!(min[1].1, json!("w"));
    }
}
