//! Inputs where defects hide: near misses of the server's own names (what a
//! comparison by prefix, substring, case folding or trimming confuses with
//! the real name), and combinations of optional arguments (an argument's
//! rule must hold whatever else is present).

use serde_json::{json, Value};

use crate::rng::Rng;

/// The kinds of near miss, in the order the cases cycle through them.
pub const NEAR_MISS_KINDS: &[&str] = &[
    "prefix",
    "suffix",
    "substring",
    "case",
    "padded",
    "changed",
    "joined",
];

/// Case `index`'s near miss of a name of `names`: `{name, miss, kind}`.
/// The kind cycles with the index (every seven cases try every kind); when
/// that kind cannot change the name drawn (a one-letter name has no proper
/// prefix, a name without letters no case variant) or would give another
/// listed name, the next kind is tried. The miss is never a name of the
/// list; with nothing to build on it is a name no server lists.
pub fn near_miss(names: &[Value], index: usize, rng: &mut Rng) -> Value {
    let strings: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
    let Some(name) = rng.pick(&strings).copied() else {
        return json!({"name": "", "miss": format!("zz_unknown_{}", rng.below(1000)), "kind": "unknown"});
    };
    for step in 0..NEAR_MISS_KINDS.len() {
        let kind = NEAR_MISS_KINDS[(index + step) % NEAR_MISS_KINDS.len()];
        if let Some(miss) = miss_of(kind, name, &strings, rng) {
            if miss != name && !strings.contains(&miss.as_str()) {
                return json!({"name": name, "miss": miss, "kind": kind});
            }
        }
    }
    json!({"name": name, "miss": format!("{name}_zz_unknown"), "kind": "unknown"})
}

/// One near miss of `name` of the given kind, if the name allows it.
fn miss_of(kind: &str, name: &str, names: &[&str], rng: &mut Rng) -> Option<String> {
    let chars: Vec<char> = name.chars().collect();
    let n = chars.len();
    let text = |cs: &[char]| cs.iter().collect::<String>();
    match kind {
        "prefix" if n >= 2 => Some(text(&chars[..rng.between(1, n - 1)])),
        "suffix" if n >= 2 => Some(text(&chars[rng.between(1, n - 1)..])),
        "substring" if n >= 3 => {
            let start = rng.between(1, n - 2);
            let end = rng.between(start + 1, n - 1);
            Some(text(&chars[start..end]))
        }
        "case" => {
            let upper = name.to_uppercase();
            let flipped = if upper != name {
                upper
            } else {
                name.to_lowercase()
            };
            (flipped != name).then_some(flipped)
        }
        "padded" => {
            let pads = [" ", "  ", "\t", "\n", "\u{a0}"];
            let pad = pads[rng.below(pads.len())];
            Some(match rng.below(3) {
                0 => format!("{pad}{name}"),
                1 => format!("{name}{pad}"),
                _ => format!("{pad}{name}{pad}"),
            })
        }
        "changed" if n >= 1 => {
            let at = rng.below(n);
            let mut changed = chars.clone();
            changed[at] = other_char(chars[at]);
            Some(text(&changed))
        }
        "joined" => {
            let others: Vec<&str> = names.iter().copied().filter(|o| *o != name).collect();
            let other = rng.pick(&others).copied().unwrap_or(name);
            // No comma or space: those separate names in lists (`?tools=a,b`),
            // which would make the join two real names rather than a miss.
            let sep = ["", "_", "-", "."][rng.below(4)];
            Some(format!("{name}{sep}{other}"))
        }
        _ => None,
    }
}

/// A character of the same sort (letter, digit, other) that differs from `c`.
fn other_char(c: char) -> char {
    match c {
        'a'..='y' | 'A'..='Y' | '0'..='8' => char::from_u32(c as u32 + 1).unwrap_or('x'),
        'z' => 'a',
        'Z' => 'A',
        '9' => '0',
        _ => 'x',
    }
}

/// Case `index`'s combination of the optional arguments `names`, as the
/// list of those present (in `names`' order). Case 0 has none and case 1
/// all of them (the edges); cases 2, 3, … go through every single one,
/// then every pair, every triple and so on, so every pair of arguments
/// meets within 2 + k + k(k-1)/2 cases and the whole product within 2^k;
/// cases beyond it are random combinations.
pub fn combination(names: &[String], index: usize, rng: &mut Rng) -> Value {
    let k = names.len();
    let pick = |mask: u64| -> Value {
        Value::Array(
            names
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, n)| json!(n))
                .collect(),
        )
    };
    let full: u64 = if k >= 63 { u64::MAX } else { (1u64 << k) - 1 };
    match index {
        0 => return pick(0),
        1 => return pick(full),
        _ => {}
    }
    let mut left = index - 2;
    // The proper, non-empty subsets by size, each size in lexicographic
    // order of positions (k is small: a handful of optional arguments).
    if k < 20 {
        for size in 1..k {
            for mask in 1..full {
                if mask.count_ones() as usize == size {
                    if left == 0 {
                        return pick(mask);
                    }
                    left -= 1;
                }
            }
        }
    }
    pick(rng.next_u64() & full)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<Value> {
        list.iter().map(|s| json!(s)).collect()
    }

    #[test]
    fn every_kind_comes_up_within_seven_cases_and_no_miss_is_a_real_name() {
        let vocab = names(&["page_create", "page", "issue_list", "task"]);
        for seed in 0..10 {
            let mut kinds = std::collections::BTreeSet::new();
            for index in 0..7 {
                let v = near_miss(&vocab, index, &mut Rng::for_case(seed, "t", index));
                let miss = v["miss"].as_str().unwrap_or_default();
                assert!(!vocab.contains(&json!(miss)), "{v}");
                assert!(vocab.contains(&v["name"]), "{v}");
                kinds.insert(v["kind"].as_str().unwrap_or_default().to_string());
            }
            // A kind that gives another listed name moves to the next one,
            // so a few may repeat; most of the seven show up.
            assert!(kinds.len() >= 5, "seed {seed}: {kinds:?}");
        }
    }

    #[test]
    fn each_kind_is_the_near_miss_it_says() {
        let list = ["alpha", "beta"];
        let mut rng = Rng::new(3);
        for _ in 0..50 {
            let p = miss_of("prefix", "alpha", &list, &mut rng).unwrap_or_default();
            assert!(
                "alpha".starts_with(&p) && !p.is_empty() && p.len() < 5,
                "{p}"
            );
            let s = miss_of("suffix", "alpha", &list, &mut rng).unwrap_or_default();
            assert!("alpha".ends_with(&s) && !s.is_empty() && s.len() < 5, "{s}");
            let m = miss_of("substring", "alpha", &list, &mut rng).unwrap_or_default();
            assert!("alpha"[1..4].contains(&m) && !m.is_empty(), "{m}");
            let w = miss_of("padded", "alpha", &list, &mut rng).unwrap_or_default();
            assert!(w.trim() == "alpha" && w != "alpha", "{w:?}");
            let c = miss_of("changed", "alpha", &list, &mut rng).unwrap_or_default();
            let diff = c.chars().zip("alpha".chars()).filter(|(a, b)| a != b);
            assert_eq!((c.len(), diff.count()), (5, 1), "{c}");
            let j = miss_of("joined", "alpha", &list, &mut rng).unwrap_or_default();
            assert!(j.starts_with("alpha") && j.ends_with("beta"), "{j}");
        }
        assert_eq!(
            miss_of("case", "alpha", &list, &mut rng).as_deref(),
            Some("ALPHA")
        );
        assert_eq!(miss_of("prefix", "a", &list, &mut rng), None);
        assert_eq!(miss_of("case", "42", &list, &mut rng), None);
    }

    #[test]
    fn a_near_miss_of_nothing_is_an_unknown_name() {
        let v = near_miss(&[], 0, &mut Rng::new(0));
        assert!(v["miss"]
            .as_str()
            .is_some_and(|m| m.starts_with("zz_unknown_")));
    }

    #[test]
    fn combinations_go_from_none_and_all_through_singles_then_pairs() {
        let args: Vec<String> = ["limit", "category", "tags", "query"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let seen: Vec<Value> = (0..16)
            .map(|i| combination(&args, i, &mut Rng::for_case(0, "c", i)))
            .collect();
        assert_eq!(seen[0], json!([]));
        assert_eq!(seen[1], json!(["limit", "category", "tags", "query"]));
        assert_eq!(seen[2], json!(["limit"]));
        assert_eq!(seen[5], json!(["query"]));
        assert_eq!(seen[6], json!(["limit", "category"]));
        // All 16 subsets, each once: the full product in 2^4 cases.
        let mut distinct: Vec<String> = seen.iter().map(Value::to_string).collect();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 16);
        // Every pair of arguments is present together within 2 + 4 + 6 cases.
        for a in &args {
            for b in &args {
                assert!(seen[..12].iter().any(|c| {
                    let c = c.as_array().cloned().unwrap_or_default();
                    c.contains(&json!(a)) && c.contains(&json!(b))
                }));
            }
        }
        // Beyond the product, random combinations of the same names.
        let later = combination(&args, 40, &mut Rng::new(1));
        assert!(later
            .as_array()
            .into_iter()
            .flatten()
            .all(|n| args.contains(&n.as_str().unwrap_or_default().to_string())));
    }
}
