//! CEL's `matches` with each pattern compiled once per thread. The `cel`
//! crate's own `matches` compiles its pattern on every call; a scenario that
//! tests every listed resource's URI against one pattern spent most of its
//! time there (about 40 µs per call). Same results and error text as the
//! crate's function (its `regex` feature is off, so this is the only one).

use std::cell::RefCell;
use std::collections::HashMap;

use cel::common::types::{CelBool, CelString, STRING_TYPE};
use cel::common::value::CowVal;
use cel::{Env, ExecutionError};
use regex::Regex;

/// Patterns kept per thread; a catalog uses a few dozen, so the bound only
/// stops a generated pattern per case from growing the table without end.
const MAX_PATTERNS: usize = 256;

thread_local! {
    static COMPILED: RefCell<HashMap<String, Regex>> = RefCell::new(HashMap::new());
}

/// Declares `text.matches(pattern)` and `matches(text, pattern)` on strings:
/// RE2 syntax, true when the pattern matches anywhere in the text.
pub fn declare(env: &mut Env) {
    // A clash would be a programming error the unit tests catch.
    let _ = env.add_overload(
        "matches",
        "matches_string_string",
        vec![STRING_TYPE, STRING_TYPE],
        matches,
    );
    let _ = env.add_member_overload(
        "matches",
        "string_matches_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        matches,
    );
}

fn matches<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let text = |i: usize| args.get(i).and_then(|a| a.downcast_ref::<CelString>());
    let (Some(text), Some(pattern)) = (text(0), text(1)) else {
        return Err(ExecutionError::function_error(
            "matches",
            "takes a text and a pattern",
        ));
    };
    let found = is_match(pattern.inner(), text.inner())?;
    Ok(CowVal::Owned(Box::new(CelBool::from(found))))
}

/// Whether `pattern` matches `text`, with the pattern's compiled regex.
/// The regex is used where it is kept, never cloned: a clone has a pool of
/// search caches of its own, and filling a new one on every call cost more
/// than the search on a list of thousands.
fn is_match(pattern: &str, text: &str) -> Result<bool, ExecutionError> {
    let known = COMPILED.with(|c| c.borrow().get(pattern).map(|re| re.is_match(text)));
    if let Some(found) = known {
        return Ok(found);
    }
    let regex = compiled(pattern)?;
    Ok(regex.is_match(text))
}

/// Compiles `pattern` and keeps it for later calls on this thread.
fn compiled(pattern: &str) -> Result<Regex, ExecutionError> {
    let regex = Regex::new(pattern).map_err(|err| ExecutionError::FunctionError {
        function: "matches".to_string(),
        message: format!("'{pattern}' not a valid regex:\n{err}"),
    })?;
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= MAX_PATTERNS {
            c.clear();
        }
        c.insert(pattern.to_string(), regex.clone());
    });
    Ok(regex)
}

#[cfg(test)]
mod tests {
    use crate::scenario::helpers::eval;
    use serde_json::{json, Map};

    fn run(source: &str) -> Result<serde_json::Value, String> {
        eval(source, &Map::new().into()).map_err(|e| e.to_string())
    }

    #[test]
    fn matches_works_as_a_method_and_as_a_function() {
        assert_eq!(run("'foobar'.matches('^[a-z]*$')"), Ok(json!(true)));
        assert_eq!(run("matches('foo1', '^[a-z]*$')"), Ok(json!(false)));
        assert_eq!(
            run("'a/tool_descriptions?x'.matches('tool_descriptions([?#].*)?$')"),
            Ok(json!(true))
        );
    }

    #[test]
    fn a_pattern_used_again_gives_the_same_answer() {
        for _ in 0..3 {
            assert_eq!(
                run("['ab', 'b', 'ba'].filter(s, s.matches('^b')).size()"),
                Ok(json!(2))
            );
        }
    }

    #[test]
    fn a_bad_pattern_is_an_evaluation_error_naming_it() {
        let e = run("'foobar'.matches('(foo')").expect_err("an unclosed group");
        assert!(e.contains("'(foo' not a valid regex"), "{e}");
    }
}
