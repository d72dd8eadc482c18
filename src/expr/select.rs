//! Field selections on the elements of a comprehension, evaluated without
//! the built-in form of a JSON object.
//!
//! The interpreter asks the operand of every `.f` (and `[k]`) whether it is
//! an optional, and a lazy JSON map answers that with its built-in form: a
//! hash table of every member, each converted. Over 10,000 tools,
//! `tools.map(t, t.name)` built one per tool to read one field; those
//! tables were a third of the heap of a scenario comparing two listings,
//! and building and dropping them a tenth of the harness's CPU time.
//!
//! So a selection whose operand is a comprehension's variable, or a
//! selection on one (`t.annotations.readOnlyHint`), is evaluated by a
//! function of this module: `t.f` by [`FIELD`], `has(t.f)` by [`HAS`]. On
//! a lazy JSON map they read the member alone ([`cel_lazy`]); on any other
//! value they do what the interpreter does (an optional is looked into, a
//! missing key is "No such key", a value with no fields is no overload of
//! `_._`). Their names cannot be written in CEL source.

use cel::common::ast::{CallExpr, Expr, LiteralValue};
use cel::common::traits::{Container, Indexer};
use cel::common::types::{CelBool, CelOptional, CelString, Kind};
use cel::common::value::{CowVal, Val};
use cel::{ExecutionError, IdedExpr};

use super::cel_lazy::JsonMap;

/// The function `t.f` becomes.
pub const FIELD: &str = "@field";
/// The function `has(t.f)` becomes.
pub const HAS: &str = "@has";

/// `expr` with every selection on a comprehension's elements made a call
/// of [`FIELD`] or [`HAS`].
pub fn rewrite(expr: &IdedExpr) -> IdedExpr {
    let mut out = expr.clone();
    rewrite_in(&mut out, &mut Vec::new());
    out
}

fn rewrite_in(expr: &mut IdedExpr, loop_vars: &mut Vec<String>) {
    let id = expr.id;
    match &mut expr.expr {
        Expr::Select(select) if rooted_at(&select.operand, loop_vars) => {
            let function = if select.test { HAS } else { FIELD };
            let mut operand = std::mem::take(&mut *select.operand);
            rewrite_in(&mut operand, loop_vars);
            let field = std::mem::take(&mut select.field);
            expr.expr = Expr::Call(CallExpr {
                func_name: function.to_string(),
                target: None,
                args: vec![
                    operand,
                    IdedExpr {
                        id,
                        expr: Expr::Literal(LiteralValue::String(CelString::from(field))),
                    },
                ],
            });
        }
        Expr::Select(select) => rewrite_in(&mut select.operand, loop_vars),
        Expr::Call(call) => {
            if let Some(target) = call.target.as_deref_mut() {
                rewrite_in(target, loop_vars);
            }
            for arg in &mut call.args {
                rewrite_in(arg, loop_vars);
            }
        }
        Expr::Comprehension(c) => {
            rewrite_in(&mut c.iter_range, loop_vars);
            rewrite_in(&mut c.accu_init, loop_vars);
            let bound = 1 + usize::from(c.iter_var2.is_some());
            loop_vars.push(c.iter_var.clone());
            loop_vars.extend(c.iter_var2.clone());
            for part in [&mut c.loop_cond, &mut c.loop_step, &mut c.result] {
                rewrite_in(part, loop_vars);
            }
            loop_vars.truncate(loop_vars.len() - bound);
        }
        Expr::List(list) => {
            for element in &mut list.elements {
                rewrite_in(element, loop_vars);
            }
        }
        Expr::Map(map) => {
            for entry in &mut map.entries {
                if let cel::common::ast::EntryExpr::MapEntry(e) = &mut entry.expr {
                    rewrite_in(&mut e.key, loop_vars);
                    rewrite_in(&mut e.value, loop_vars);
                }
            }
        }
        _ => {}
    }
}

/// Whether `expr` is a comprehension's variable, or a field of one, read
/// by selection.
fn rooted_at(expr: &IdedExpr, loop_vars: &[String]) -> bool {
    match &expr.expr {
        Expr::Ident(name) => loop_vars.iter().any(|v| v == name),
        Expr::Select(select) => !select.test && rooted_at(&select.operand, loop_vars),
        _ => false,
    }
}

/// `operand.field`.
pub fn field<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (operand, key) = operand_and_key(FIELD, args)?;
    let name = key_name(&key);
    match operand {
        CowVal::Borrowed(v) => select_in(v, &key, name).map(|found| match found {
            Selected::Member(m) => CowVal::Borrowed(m),
            Selected::Made(m) => m,
        }),
        CowVal::Owned(v) => select_in(v.as_ref(), &key, name).map(|found| match found {
            Selected::Member(m) => CowVal::Owned(m.clone_as_boxed()),
            Selected::Made(m) => CowVal::Owned(m.into_owned()),
        }),
    }
}

/// What a selection found: a member of the operand, or a value made for it
/// (an optional).
enum Selected<'b, 'v> {
    Member(&'b (dyn Val + 'v)),
    Made(CowVal<'b, 'v>),
}

fn select_in<'b, 'v>(
    value: &'b (dyn Val + 'v),
    key: &CowVal<'_, '_>,
    name: &str,
) -> Result<Selected<'b, 'v>, ExecutionError> {
    if let Some(map) = value.as_any().and_then(|a| a.downcast_ref::<JsonMap>()) {
        return map
            .get(key.as_ref())
            .map(|m| match m {
                CowVal::Borrowed(m) => Selected::Member(m),
                CowVal::Owned(m) => Selected::Made(CowVal::Owned(m)),
            })
            .map_err(|_| ExecutionError::no_such_key(name));
    }
    if value.get_type().kind() == Kind::Opaque {
        let Some(optional) = value.downcast_ref::<CelOptional>() else {
            return Err(no_fields(value));
        };
        let Some(inner) = optional.option() else {
            return Ok(Selected::Made(CowVal::owned(CelOptional::none())));
        };
        let indexer = inner
            .as_indexer()
            .ok_or_else(|| ExecutionError::no_such_key(name))?;
        return Ok(Selected::Made(CowVal::owned(
            match indexer.get(key.as_ref()) {
                Ok(v) => CelOptional::of(v.into_owned()),
                Err(_) => CelOptional::none(),
            },
        )));
    }
    let is_map = value.get_type().kind() == Kind::Map;
    let indexer = value.as_indexer().ok_or_else(|| {
        if is_map {
            ExecutionError::no_such_key(name)
        } else {
            no_fields(value)
        }
    })?;
    match indexer.get(key.as_ref()) {
        Ok(CowVal::Borrowed(m)) => Ok(Selected::Member(m)),
        Ok(CowVal::Owned(m)) => Ok(Selected::Made(CowVal::Owned(m))),
        Err(ExecutionError::NoSuchKey(_)) if is_map => Err(ExecutionError::no_such_key(name)),
        Err(_) if !is_map => Err(no_fields(value)),
        Err(e) => Err(e),
    }
}

/// `has(operand.field)`.
pub fn has<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (operand, key) = operand_and_key(HAS, args)?;
    let present = |value: &dyn Val| -> Result<bool, ExecutionError> {
        if let Some(map) = value.as_any().and_then(|a| a.downcast_ref::<JsonMap>()) {
            return map.contains(key.as_ref());
        }
        let indexer = value.as_indexer().ok_or_else(|| no_fields(value))?;
        match indexer.get(key.as_ref()) {
            Ok(_) => Ok(true),
            Err(ExecutionError::NoSuchKey(_)) => Ok(false),
            Err(e) => Err(e),
        }
    };
    let value = operand.as_ref();
    let found = if value.get_type().kind() == Kind::Opaque {
        match value.downcast_ref::<CelOptional>().and_then(|o| o.option()) {
            None => false,
            Some(inner) => {
                let indexer = inner
                    .as_indexer()
                    .ok_or_else(|| ExecutionError::no_such_key(key_name(&key)))?;
                indexer.get(key.as_ref()).is_ok()
            }
        }
    } else {
        present(value)?
    };
    Ok(CowVal::owned(CelBool::from(found)))
}

fn operand_and_key<'b, 'v>(
    function: &str,
    args: Vec<CowVal<'b, 'v>>,
) -> Result<(CowVal<'b, 'v>, CowVal<'b, 'v>), ExecutionError> {
    let mut args = args.into_iter();
    match (args.next(), args.next(), args.next()) {
        (Some(operand), Some(key), None) => Ok((operand, key)),
        _ => Err(ExecutionError::function_error(
            function,
            "takes an operand and a field name",
        )),
    }
}

/// The field name (a literal the rewrite wrote), borrowed: a selection
/// that succeeds allocates nothing for it.
fn key_name<'a>(key: &'a CowVal<'_, '_>) -> &'a str {
    key.downcast_ref::<CelString>().map_or("", |s| s.inner())
}

/// What the interpreter says of `.f` on a value that has no fields.
fn no_fields(value: &dyn Val) -> ExecutionError {
    ExecutionError::no_such_overload(
        "_._",
        vec![value.get_type().name().to_owned(), "string".to_owned()],
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::expr::Bindings;
    use crate::scenario::helpers::eval;

    fn bound() -> Bindings {
        let mut b = Bindings::default();
        b.insert(
            "x",
            json!({"tools": [
                {"name": "a", "annotations": {"readOnlyHint": true}, "tags": ["t"]},
                {"name": "b", "annotations": {}},
            ], "strings": ["s"], "n": {"name": "top"}}),
        );
        b
    }

    fn eval_str(source: &str) -> Result<serde_json::Value, String> {
        eval(source, &bound()).map_err(|e| e.to_string())
    }

    #[test]
    fn a_selection_on_an_element_reads_the_same_member() {
        assert_eq!(eval_str("x.tools.map(t, t.name)"), Ok(json!(["a", "b"])));
        assert_eq!(
            eval_str("x.tools.filter(t, has(t.annotations.readOnlyHint) && t.annotations.readOnlyHint).map(t, t.name)"),
            Ok(json!(["a"]))
        );
        assert_eq!(
            eval_str("x.tools.map(t, [t].map(u, u.name + t.name))"),
            Ok(json!([["aa"], ["bb"]]))
        );
        assert_eq!(eval_str("x.n.name"), Ok(json!("top")));
    }

    #[test]
    fn a_missing_member_and_a_non_map_fail_as_a_selection_does() {
        let selected = eval_str("x.tools.map(t, t.tags)");
        let built_in = eval_str("[{'name': 'b'}].map(t, t.tags)");
        assert!(selected.is_err(), "{selected:?}");
        assert_eq!(selected, built_in);
        assert!(eval_str("x.strings.map(s, s.name)").is_err());
    }

    #[test]
    fn only_selections_rooted_at_a_loop_variable_are_rewritten() {
        let program =
            cel::Program::compile("x.a.map(t, t.b.c + y.d + (has(t.e) ? 1 : 0)) + [has(t2.e)]")
                .unwrap();
        let shown = format!("{:?}", super::rewrite(program.expression()));
        assert_eq!(shown.matches("\"@field\"").count(), 2, "{shown}");
        assert_eq!(shown.matches("\"@has\"").count(), 1, "{shown}");
        // `x.a`, `y.d` and `has(t2.e)` stay selections
        assert_eq!(shown.matches("Select(").count(), 3, "{shown}");
    }

    #[test]
    fn presence_and_optionals_as_the_interpreter_has_them() {
        assert_eq!(
            eval_str("x.tools.map(t, has(t.tags))"),
            Ok(json!([true, false]))
        );
        assert_eq!(
            eval_str("[{'a': 1}, {}].map(m, has(m.a))"),
            Ok(json!([true, false]))
        );
        assert_eq!(
            eval_str("[optional.of({'a': 1}), optional.none()].map(o, o.a.orValue(0))"),
            eval_str("[optional.of({'a': 1}).a.orValue(0), optional.none().a.orValue(0)]"),
        );
        assert!(eval_str("x.strings.map(s, has(s.name))").is_err());
    }
}
