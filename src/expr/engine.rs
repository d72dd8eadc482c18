//! The engine: the expression language with its helpers, compiled
//! programs, and their evaluation against bindings.

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::functions::Function;
use cel::common::types::DYN_TYPE;
use cel::common::value::CowVal;
use cel::objects::Value as CelValue;
use cel::{Context, Env, ExecutionError, FunctionContext};
use serde_json::Value;

use super::bindings::{Bindings, Bound, Items, Lent};
use super::cel_lazy::json_at_of;
use super::cel_value::val_to_json_read;
use super::helper::{call, str_arg, strings, Args, Helper};
use super::reads::{HelperTable, Reads};
use crate::json::ReadTree;
use crate::schema::Schemas;

/// A CEL error, with the expression's own position inside its text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExprError {
    #[error("CEL syntax error: {0}")]
    Syntax(String),
    #[error("CEL evaluation failed: {0}")]
    Eval(String),
    #[error("CEL expression returned {found}, expected {expected}")]
    Type {
        expected: &'static str,
        found: String,
    },
}

/// The expression language: CEL's standard library, its strings, lists and
/// math extensions, the standard helpers, and those its user declares.
/// Clones share it.
#[derive(Clone)]
pub struct Engine {
    env: Arc<Env>,
    helpers: Arc<HelperTable>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("helpers", &self.helpers.len())
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// The language with the standard helpers and the tables of `more`
    /// (a helper named in `more` replaces a standard one of its name).
    pub fn new(more: &[&[Helper]]) -> Engine {
        let mut helpers = HelperTable::new();
        for table in super::helpers::STANDARD.iter().chain(more) {
            helpers.extend(table.iter().map(|h| (h.name, *h)));
        }
        let mut env = Env::stdlib();
        // Extensions only add overloads; a failure here would be a bug in the crate
        // version, and the plain standard library still works.
        let _ = env.add_extension(cel::extensions::strings);
        super::distinct::declare(&mut env);
        let _ = env.add_extension(cel::extensions::lists);
        let _ = env.add_extension(cel::extensions::math);
        add_helpers(&mut env, helpers.values());
        Engine {
            env: Arc::new(env),
            helpers: Arc::new(helpers),
        }
    }

    /// The environment programs are compiled and evaluated in.
    #[cfg(test)]
    pub(crate) fn env(&self) -> &Env {
        &self.env
    }

    /// Compiles an expression, so syntax errors surface when the file is
    /// loaded; the scenario model keeps the program, so a run never compiles.
    pub fn compile(&self, source: &str) -> Result<Compiled, ExprError> {
        let expression = super::parse::parse(&self.env, source)
            .map_err(|e| ExprError::Syntax(clean_parse_error(&e.to_string())))?;
        Ok(Compiled {
            env: Arc::clone(&self.env),
            reads: Arc::new(Reads::of(&expression, &self.helpers)),
            evaluated: Arc::new(super::select::rewrite(&expression)),
            validates: source.contains(SCHEMA_ERRORS),
        })
    }
}

/// Calls with up to this many arguments reach a helper whatever its own
/// count, so a wrong count is explained by the helper ("takes 2
/// argument(s), got 1"), not as a missing overload.
const MOST_ARGUMENTS: usize = 4;

/// Declares every helper in the environment, for any argument types. The
/// interpreter hands an environment's overloads its own values; a context's
/// functions get them converted to the older value enum first, which cost
/// more than most helpers' work (a tool list converted twice per call).
fn add_helpers<'h>(env: &mut Env, helpers: impl Iterator<Item = &'h Helper>) {
    for helper in helpers {
        let name = helper.name;
        for n in 0..=MOST_ARGUMENTS {
            let any = (0..n).map(|_| DYN_TYPE).collect();
            // A clash would be a programming error the unit tests catch.
            let _ = env.add_overload(name, &format!("{name}_{n}"), any, helper.entry);
        }
    }
    super::regex::declare(env);
    for (name, function) in [
        (super::select::FIELD, super::select::field as Function),
        (super::select::HAS, super::select::has as Function),
    ] {
        let _ = env.add_overload(
            name,
            &format!("{name}_2"),
            vec![DYN_TYPE, DYN_TYPE],
            function,
        );
    }
}

/// Programs compiled for one load, shared by text (many files share
/// expressions), and what those compiled since [`Programs::take_reads`]
/// read: for one scenario, all it can observe of a step's answer, so the
/// runner may keep only that of a long list. The programs are kept by the
/// scenarios and the table dropped with this, so a run never looks a
/// program up by its text.
#[derive(Debug)]
pub struct Programs {
    engine: Engine,
    known: HashMap<String, Compiled>,
    reads: Reads,
}

impl Programs {
    pub fn new(engine: Engine) -> Programs {
        Programs {
            engine,
            known: HashMap::new(),
            reads: Reads::default(),
        }
    }

    /// [`Engine::compile`], once per text.
    pub fn compile(&mut self, source: &str) -> Result<Compiled, ExprError> {
        let compiled = match self.known.get(source) {
            Some(known) => known.clone(),
            None => {
                let compiled = self.engine.compile(source)?;
                self.known.insert(source.to_string(), compiled.clone());
                compiled
            }
        };
        self.reads.include(&compiled.reads);
        Ok(compiled)
    }

    /// Every text compiled, and the language it was compiled in (for the
    /// tests that check what parsing gives for each).
    #[cfg(test)]
    pub(crate) fn texts(&self) -> (Vec<&str>, &Env) {
        (
            self.known.keys().map(String::as_str).collect(),
            self.engine.env(),
        )
    }

    /// What the programs compiled since the last call read, together.
    pub fn take_reads(&mut self) -> Reads {
        std::mem::take(&mut self.reads)
    }
}

/// A compiled expression, with what it reads of each variable.
#[derive(Clone)]
pub struct Compiled {
    /// The language it was compiled in, and is evaluated in.
    env: Arc<Env>,
    /// What is evaluated: the parsed program, with selections on the
    /// elements of comprehensions made calls (`select`).
    evaluated: Arc<cel::IdedExpr>,
    reads: Arc<Reads>,
    /// Whether the text calls `schema_errors` (declared per evaluation).
    validates: bool,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Compiled")
    }
}

impl PartialEq for Compiled {
    /// Programs compiled from the same text behave the same; their owners
    /// (`Expr`, templates) compare that text.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Compiled {
    /// What the program reads of each variable.
    pub fn reads(&self) -> &Reads {
        &self.reads
    }

    /// Whether the program reads the variable `name` at all (a string that
    /// merely spells the name is no read of it).
    pub fn reads_variable(&self, name: &str) -> bool {
        self.reads.iter().any(|(variable, _)| variable == name)
    }

    /// Evaluates the program with `bindings` as variables.
    pub fn eval(&self, bindings: &Bindings) -> Result<Value, ExprError> {
        self.eval_bound(bindings).map(Bound::into_json)
    }

    /// [`Compiled::eval`], as a value to bind: a result that is a part of a
    /// variable's JSON (`walk.result.tools`, `cond ? wt : wp`) is that
    /// part, shared with the variable rather than copied.
    pub fn eval_bound(&self, bindings: &Bindings) -> Result<Bound, ExprError> {
        self.eval_kept(bindings, &ReadTree::whole())
    }

    /// [`Compiled::eval_bound`] for a binding of which only `kept` is ever
    /// read (what a scenario's expressions read of a capture): a result
    /// made anew (a filtered list, a list of maps) is made only that far,
    /// as `crate::json::prune` would cut it. A shared part stays whole.
    pub fn eval_kept(&self, bindings: &Bindings, kept: &ReadTree) -> Result<Bound, ExprError> {
        let result = execute(self, bindings, true, kept);
        if bindings.options().verify_reads {
            let cut = execute(self, bindings, false, kept);
            let same = match (&result, &cut) {
                (Ok(a), Ok(b)) => a.json() == b.json(),
                (Err(_), Err(_)) => true,
                _ => false,
            };
            if !same {
                let shown = |r: Result<Bound, ExprError>| r.map(Bound::into_json);
                return Err(ExprError::Eval(format!(
                    "internal error: evaluated on the parts it reads, this expression gave {:?}, \
                     but {:?} on whole values; please report it",
                    shown(cut),
                    shown(result)
                )));
            }
        }
        result
    }

    /// Evaluates a program that must give a boolean.
    pub fn eval_bool(&self, bindings: &Bindings) -> Result<bool, ExprError> {
        match self.eval(bindings)? {
            Value::Bool(b) => Ok(b),
            other => Err(ExprError::Type {
                expected: "a boolean",
                found: crate::jsonrpc::type_name(&other).to_string(),
            }),
        }
    }

    /// Evaluates a program that must give a list.
    pub fn eval_list(&self, bindings: &Bindings) -> Result<Vec<Value>, ExprError> {
        self.eval_list_first(bindings, usize::MAX)
    }

    /// [`Compiled::eval_list`], of which only the first `n` items are used.
    pub fn eval_list_first(&self, bindings: &Bindings, n: usize) -> Result<Vec<Value>, ExprError> {
        let bound = self.eval_bound(bindings)?;
        let found = crate::jsonrpc::type_name(bound.json());
        bound.into_first_items(n).ok_or_else(|| ExprError::Type {
            expected: "a list",
            found: found.to_string(),
        })
    }
}

fn clean_parse_error(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or(text)
        .trim_start_matches("ERROR: ")
        .replace("<input>:", "column ")
}

/// Runs a compiled expression on `whole` variables, or on each cut down to
/// what the expression reads.
fn execute(
    compiled: &Compiled,
    bindings: &Bindings,
    whole: bool,
    kept: &ReadTree,
) -> Result<Bound, ExprError> {
    let all = ReadTree::whole();
    let lent = Lent(
        compiled
            .reads
            .iter()
            .filter_map(|(name, read)| {
                let read = if whole { &all } else { read };
                Some((name, bindings.cel_value(name, read)?))
            })
            .collect(),
    );
    let mut ctx = Context::with_env(Arc::clone(&compiled.env));
    ctx.set_variable_resolver(&lent);
    if compiled.validates {
        declare_schema_errors(&mut ctx, &bindings.schemas);
    }
    let out = CelValue::resolve_val(&compiled.evaluated, &ctx)
        .map_err(|e| ExprError::Eval(e.to_string()))?;
    if let Some(part) = json_at_of(out.as_ref()) {
        return Ok(Bound::at(part));
    }
    if let Some(items) = Items::of(out.as_ref()) {
        return Ok(Bound::items(items));
    }
    val_to_json_read(out.as_ref(), kept)
        .map(Bound::from)
        .map_err(|e| ExprError::Eval(format!("result cannot be shown as JSON: {e}")))
}

const SCHEMA_ERRORS: &str = "schema_errors";

/// A function declared on one evaluation's context (the interpreter's own
/// boxed form, which may hold state).
type ContextFunction = Box<
    dyn for<'c, 'v> Fn(&mut FunctionContext<'c, 'v>) -> Result<CowVal<'c, 'v>, ExecutionError>
        + Send
        + Sync,
>;

/// Violations of a schema definition (`schema_errors(init, 'InitializeResult')`),
/// in the run's schemas. The only helper that needs more than its
/// arguments: it is declared on the evaluation's context, holding the
/// bindings' handle to the schemas, rather than in the shared environment.
fn declare_schema_errors(ctx: &mut Context, schemas: &Schemas) {
    let schemas = schemas.clone();
    let helper: ContextFunction = Box::new(move |ftx| {
        let body = |a: &Args| {
            let def = str_arg(SCHEMA_ERRORS, &a[1])?;
            Ok(strings(schemas.errors(&a[0], def)))
        };
        call(SCHEMA_ERRORS, 2, body, std::mem::take(&mut ftx.args))
    });
    // Fails only if the environment declared the name too (a unit test
    // evaluates the helper).
    let _ = ctx.add_function(SCHEMA_ERRORS, helper);
}
