//! What a helper function is: its name, how many arguments it takes, its
//! entry point for the interpreter, and what it reads of its arguments.
//!
//! The reads are declared with the helper, in the same table row, so the
//! analysis of what an expression reads (`reads`) cannot drift from the
//! helpers it knows: a helper that declares nothing reads its arguments
//! whole.

use std::borrow::Cow;

use cel::common::functions::Function;
use cel::common::value::CowVal;
use cel::ExecutionError;
use serde_json::Value;

use super::cel_lazy::{json_of, json_to_val};
use super::cel_value::val_to_json;
use crate::json::ReadTree;

/// What a helper gives: JSON, or the interpreter's error.
pub type HelperResult = Result<Value, ExecutionError>;

/// A helper's arguments as JSON: borrowed where the value was made from
/// JSON, converted otherwise.
pub type Args<'a> = [Cow<'a, Value>];

/// What a helper reads of each of its arguments, given those written as a
/// string literal (`has_path(x, 'a.b')` reads only `a.b` of `x`). It gives
/// one read per argument.
pub type ArgsRead = fn(literals: &[Option<&str>]) -> Vec<ReadTree>;

/// One helper function of the expression language.
#[derive(Clone, Copy)]
pub struct Helper {
    pub name: &'static str,
    pub arity: usize,
    /// The interpreter's entry point (see [`call`]).
    pub entry: Function,
    /// What it reads of its arguments; None: each argument whole.
    pub reads: Option<ArgsRead>,
}

impl std::fmt::Debug for Helper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Helper({}/{})", self.name, self.arity)
    }
}

/// A table of helpers, one row each: the function of the calling module
/// of that name (taking [`Args`], giving a [`HelperResult`]), its number of
/// arguments, and, when it reads less than its arguments whole, the
/// [`ArgsRead`] that says what it reads.
macro_rules! helper_table {
    ($($name:ident: $arity:literal $(reads $reads:path)?),* $(,)?) => {
        &[$($crate::expr::Helper {
            name: stringify!($name),
            arity: $arity,
            entry: |args| $crate::expr::call(stringify!($name), $arity, $name, args),
            reads: $crate::expr::helper_table!(@reads $($reads)?),
        }),*]
    };
    (@reads) => { None };
    (@reads $reads:path) => { Some($reads) };
}
pub(crate) use helper_table;

/// Runs helper `name` on the interpreter's values: checks the count,
/// converts the arguments to JSON and the answer back. The body takes its
/// arguments as JSON, as many as it declares, and answers JSON.
pub fn call<'b, 'v>(
    name: &str,
    arity: usize,
    body: impl FnOnce(&Args) -> HelperResult,
    args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    if args.len() != arity {
        return Err(ExecutionError::function_error(
            name,
            format!("takes {arity} argument(s), got {}", args.len()),
        ));
    }
    let json = args
        .iter()
        .map(|a| match json_of(a.as_ref()) {
            Some(json) => Ok(Cow::Borrowed(json)),
            None => val_to_json(a.as_ref())
                .map(Cow::Owned)
                .map_err(|e| ExecutionError::function_error(name, e)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CowVal::Owned(json_to_val(body(&json)?)))
}

/// The argument as a list, or the helper's error.
pub fn list_arg<'a>(name: &str, v: &'a Value) -> Result<&'a Vec<Value>, ExecutionError> {
    v.as_array().ok_or_else(|| {
        ExecutionError::function_error(
            name,
            format!("expects a list, got {}", crate::jsonrpc::type_name(v)),
        )
    })
}

/// The argument as a string, or the helper's error.
pub fn str_arg<'a>(name: &str, v: &'a Value) -> Result<&'a str, ExecutionError> {
    v.as_str().ok_or_else(|| {
        ExecutionError::function_error(
            name,
            format!("expects a string, got {}", crate::jsonrpc::type_name(v)),
        )
    })
}

/// A list of strings as JSON.
pub fn strings(list: Vec<String>) -> Value {
    Value::Array(list.into_iter().map(Value::String).collect())
}
