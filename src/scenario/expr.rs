//! CEL expressions (`assert`, `capture`, `requires`, `for_each`) and the
//! helper functions a spec editor needs. Values cross the boundary as JSON.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cel::common::functions::Function;
use cel::common::types::{CelList, Kind, DYN_TYPE};
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::objects::Value as CelValue;
use cel::{Context, Env, ExecutionError, FunctionContext};
use serde_json::{Map, Value};

use super::cel_shared::{json_at_of, json_of, json_root, json_val_of, JsonAt, Shared};
use super::cel_value::{json_to_val, json_to_val_read, pruned_copy, val_to_json, val_to_json_read};
use super::expr_core as core;
use super::expr_reads::ReadTree;
pub use super::expr_reads::Reads;
use super::json_set::{set_of, Member};
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

fn env() -> Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // Extensions only add overloads; a failure here would be a bug in the crate
        // version, and the plain standard library still works.
        let _ = env.add_extension(cel::extensions::strings);
        super::cel_distinct::declare(&mut env);
        let _ = env.add_extension(cel::extensions::lists);
        let _ = env.add_extension(cel::extensions::math);
        add_helpers(&mut env);
        Arc::new(env)
    })
    .clone()
}

/// A compiled expression, with what it reads of each variable.
#[derive(Clone)]
pub struct Compiled {
    /// What is evaluated: the parsed program, with selections on the
    /// elements of comprehensions made calls (`expr_select`).
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

thread_local! {
    /// Programs compiled so far by the loading on this thread (many files
    /// share expressions); None outside [`while_loading`].
    static LOADING: std::cell::RefCell<Option<HashMap<String, Compiled>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `load` with identical expressions compiled once; the programs are
/// kept by the scenarios, and the table is dropped when loading ends, so a
/// run never looks a program up by its text.
pub fn while_loading<T>(load: impl FnOnce() -> T) -> T {
    let outer = LOADING.with(|l| l.borrow_mut().replace(HashMap::new()));
    let out = load();
    LOADING.with(|l| *l.borrow_mut() = outer);
    out
}

thread_local! {
    /// What the expressions compiled so far read, while one scenario loads
    /// (see [`collecting_reads`]).
    static COLLECTING: std::cell::RefCell<Option<Reads>> = const { std::cell::RefCell::new(None) };
}

/// Runs `load` and gives, beside its result, what every expression compiled
/// meanwhile reads of each variable: for one scenario, all it can observe of
/// a step's answer, so the runner may keep only that of a long list.
pub fn collecting_reads<T>(load: impl FnOnce() -> T) -> (T, Reads) {
    let outer = COLLECTING.with(|c| c.borrow_mut().replace(Reads::default()));
    let out = load();
    let reads = COLLECTING.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer));
    (out, reads.unwrap_or_default())
}

fn note_reads(compiled: &Compiled) {
    COLLECTING.with(|c| {
        if let Some(reads) = c.borrow_mut().as_mut() {
            reads.include(&compiled.reads);
        }
    });
}

/// Compiles an expression, so syntax errors surface when the file is
/// loaded; the scenario model keeps the program, so a run never compiles.
pub fn compile(source: &str) -> Result<Compiled, ExprError> {
    let compiled = compile_shared(source)?;
    note_reads(&compiled);
    Ok(compiled)
}

fn compile_shared(source: &str) -> Result<Compiled, ExprError> {
    let known = LOADING.with(|l| l.borrow().as_ref().and_then(|m| m.get(source).cloned()));
    if let Some(compiled) = known {
        return Ok(compiled);
    }
    let compiled = compile_new(source)?;
    LOADING.with(|l| {
        if let Some(m) = l.borrow_mut().as_mut() {
            m.insert(source.to_string(), compiled.clone());
        }
    });
    Ok(compiled)
}

fn compile_new(source: &str) -> Result<Compiled, ExprError> {
    let program = env()
        .compile(source)
        .map_err(|e| ExprError::Syntax(clean_parse_error(&e.to_string())))?;
    Ok(Compiled {
        reads: Arc::new(Reads::of(program.expression())),
        evaluated: Arc::new(super::expr_select::rewrite(program.expression())),
        validates: source.contains(SCHEMA_ERRORS),
    })
}

impl PartialEq for Compiled {
    /// Programs compiled from the same text behave the same; their owners
    /// (`Expr`, templates) compare that text.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Compiled {
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
    /// as `cel_value::prune` would cut it. A shared part stays whole.
    pub fn eval_kept(&self, bindings: &Bindings, kept: &ReadTree) -> Result<Bound, ExprError> {
        let result = execute(self, bindings, true, kept);
        if verifying_reads() {
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

/// Variables of CEL expressions. Each is kept as JSON, and given to the
/// interpreter as a value that converts what an expression reaches of it
/// (`cel_lazy`), kept for later expressions. Most answers a scenario binds
/// are never read, and the ones that are (a whole tool list, say) are read
/// by many expressions: converting at every evaluation was most of the
/// harness's CPU time. When reads are verified, each expression also runs
/// on its variables cut down to what it reads (`expr_reads`), the analysis
/// that decides what the runner keeps of a long answer.
#[derive(Debug, Clone, Default)]
pub struct Bindings {
    vars: HashMap<String, Bound>,
    /// What `schema_errors` validates against: the run's schemas.
    schemas: Schemas,
}

/// A JSON value as bound to a variable, with the CEL values made of it so
/// far. Clones share both, so the many expressions of one scenario that
/// read a whole tool list convert each tool once. Scenarios that bind the
/// same stored walk each make their own (see [`Bound::with_own_conversions`]).
///
/// The JSON is a place in a document: the whole of it, or, for a capture
/// whose value is a part of another binding (`walk: wt`, `found:
/// walk.result.tools`), that part of the other binding's document, which is
/// shared rather than copied. A capture whose value is a list of such parts
/// (`all.result.tools.filter(…)`) holds those parts, not a copy of them.
#[derive(Clone)]
pub struct Bound {
    json: Held,
    cel: Arc<Conversions>,
}

/// What a binding's JSON is.
#[derive(Clone)]
enum Held {
    At(JsonAt),
    Items(Arc<Items>),
}

/// A list of places in documents other bindings hold: a filter of a
/// 10,000-tool answer kept as its tools, copied only for whoever asks for
/// the list as one JSON value (a report, an interpolated message).
struct Items {
    places: Vec<JsonAt>,
    /// The CEL list of those places, sharing their conversions.
    cel: Arc<dyn Val>,
    /// The JSON array, made when first asked for.
    made: OnceLock<JsonAt>,
}

impl Items {
    /// The list `value` is, when each of its items is a list or map made
    /// whole from JSON.
    fn of(value: &dyn Val) -> Option<Items> {
        let list = (value.get_type().kind() == Kind::List)
            .then(|| value.downcast_ref::<CelList>())
            .flatten()?;
        let shares = list
            .inner()
            .iter()
            .map(|item| json_val_of(item.as_ref()))
            .collect::<Option<Vec<_>>>()?;
        if shares.is_empty() {
            return None;
        }
        let places = shares
            .iter()
            .map(|share| json_at_of(share.as_ref()))
            .collect::<Option<Vec<_>>>()?;
        Some(Items {
            places,
            cel: Arc::from(Shared::boxed(CelList::from(shares))),
            made: OnceLock::new(),
        })
    }

    fn json(&self) -> &JsonAt {
        self.made.get_or_init(|| {
            let items = self.places.iter().map(|at| (*at.get()).clone()).collect();
            json_root(Arc::new(Value::Array(items)))
        })
    }

    /// The JSON array, each item copied only as far as `read` reads it.
    fn copied(&self, read: &ReadTree) -> Value {
        // Every item is JSON, so the conversion cannot fail.
        val_to_json_read(self.cel.as_ref(), read).unwrap_or_default()
    }
}

impl std::fmt::Debug for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bound")
            .field("json", self.json())
            .finish_non_exhaustive()
    }
}

impl Bound {
    pub fn new(json: Arc<Value>) -> Self {
        Bound::at(json_root(json))
    }

    fn at(json: JsonAt) -> Self {
        Bound {
            json: Held::At(json),
            cel: Arc::default(),
        }
    }

    /// The same JSON, shared, with none of the CEL values made of it so
    /// far. A stored walk is handed to each scenario this way: the values
    /// one scenario makes of a 10,000-tool list are dropped when it ends,
    /// instead of growing with every scenario for the whole run. Kept for
    /// the run, they held 25 to 35 MiB more at the peak and interleaved with
    /// each scenario's short-lived values, for about 6% less CPU.
    pub fn with_own_conversions(&self) -> Self {
        Bound {
            json: self.json.clone(),
            cel: Arc::default(),
        }
    }

    /// Whether the two hold the same CEL values made of their JSON.
    #[cfg(test)]
    pub fn shares_conversions_with(&self, other: &Bound) -> bool {
        Arc::ptr_eq(&self.cel, &other.cel)
    }

    fn items(items: Items) -> Self {
        Bound {
            json: Held::Items(Arc::new(items)),
            cel: Arc::default(),
        }
    }

    pub fn json(&self) -> &Value {
        match &self.json {
            Held::At(at) => at.get(),
            Held::Items(items) => items.json().get(),
        }
    }

    /// The JSON, moved out when this is the whole of a document nothing
    /// else holds.
    pub fn into_json(self) -> Value {
        self.into_json_kept(&ReadTree::whole())
    }

    /// [`Bound::into_json`] of a value of which only `read` is used: a
    /// document shared with another holder (a walk kept for later
    /// scenarios), or a part of one, is copied only that far.
    pub fn into_json_kept(self, read: &ReadTree) -> Value {
        let at = match self.json {
            Held::At(at) => at,
            Held::Items(items) => return items.copied(read),
        };
        let whole = std::ptr::eq(*at.get(), &**at.backing_cart());
        if !whole {
            return pruned_copy(at.get(), read);
        }
        match Arc::try_unwrap(at.into_backing_cart()) {
            Ok(document) => document,
            Err(shared) => pruned_copy(&shared, read),
        }
    }

    /// The first `n` items of a list, moved out of a document nothing else
    /// holds and copied otherwise (a `for_each` over a filter of a long
    /// answer takes the few it runs, not a copy of all); None when this is
    /// not a list.
    pub fn into_first_items(self, n: usize) -> Option<Vec<Value>> {
        if let Held::Items(items) = &self.json {
            let first = items.places.iter().take(n);
            return Some(first.map(|at| (*at.get()).clone()).collect());
        }
        let len = self.json().as_array()?.len();
        if n < len {
            return self.json().as_array().map(|items| items[..n].to_vec());
        }
        match self.into_json() {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    fn cel_value(&self, read: &ReadTree) -> Arc<dyn Val> {
        match &self.json {
            Held::At(at) => self.cel.get(at, read),
            Held::Items(items) if read.is_whole() => Arc::clone(&items.cel),
            Held::Items(items) => self.cel.get(items.json(), read),
        }
    }
}

impl From<Value> for Bound {
    fn from(json: Value) -> Self {
        Bound::new(Arc::new(json))
    }
}

impl From<Arc<Value>> for Bound {
    fn from(json: Arc<Value>) -> Self {
        Bound::new(json)
    }
}

/// The CEL values made of one binding so far (the whole, and the cuts
/// verification asks for), by the part they cover.
#[derive(Debug, Default)]
struct Conversions(Mutex<Vec<(ReadTree, Arc<dyn Val>)>>);

/// Conversions kept of one binding: a value read in many different ways
/// would otherwise hold a copy per way. The oldest is dropped first;
/// whoever still uses it keeps it.
const MAX_CONVERSIONS: usize = 8;

impl Conversions {
    fn get(&self, json: &JsonAt, read: &ReadTree) -> Arc<dyn Val> {
        // A poisoned lock only means another conversion panicked; the values
        // already stored are whole.
        let mut made = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let covering = made.iter().find(|(covers, _)| covers == read);
        if let Some((_, value)) = covering {
            return Arc::clone(value);
        }
        let value: Arc<dyn Val> = Arc::from(json_to_val_read(json, read));
        if made.len() == MAX_CONVERSIONS {
            made.remove(0);
        }
        made.push((read.clone(), Arc::clone(&value)));
        value
    }
}

impl Bindings {
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<Bound>) {
        self.vars.insert(name.into(), value.into());
    }

    pub fn remove(&mut self, name: &str) {
        self.vars.remove(name);
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.vars.get(name).map(Bound::json)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.vars.contains_key(name)
    }

    /// Validates with the run's schemas (the shipped ones by default).
    pub fn set_schemas(&mut self, schemas: Schemas) {
        self.schemas = schemas;
    }

    fn cel_value(&self, name: &str, read: &ReadTree) -> Option<Arc<dyn Val>> {
        Some(self.vars.get(name)?.cel_value(read))
    }
}

impl From<Map<String, Value>> for Bindings {
    fn from(json: Map<String, Value>) -> Self {
        let mut b = Bindings::default();
        for (k, v) in json {
            b.insert(k, v);
        }
        b
    }
}

/// The variables one evaluation reads, lent to the interpreter by reference.
struct Lent<'a>(Vec<(&'a str, Arc<dyn Val>)>);

impl VariableResolver for Lent<'_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        self.0
            .iter()
            .find(|(name, _)| *name == variable)
            .map(|(_, value)| CowVal::Borrowed(value.as_ref()))
    }
}

/// Compiles and evaluates `source` once (tests and one-off checks; a
/// scenario's expressions are compiled when it is loaded).
pub fn eval(source: &str, bindings: &Bindings) -> Result<Value, ExprError> {
    compile(source)?.eval(bindings)
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
    let mut ctx = Context::with_env(env());
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

static VERIFY_READS: AtomicBool = AtomicBool::new(false);

/// Makes every evaluation run twice, on whole values and on the parts of its
/// variables it reads, and fail if the results differ. The test suites turn
/// it on (also through `MCP_CONFORM_VERIFY_READS=1` for the binary), so every
/// scenario they run checks the read analysis the runner prunes long
/// answers with.
pub fn verify_reads(on: bool) {
    VERIFY_READS.store(on, Ordering::Relaxed);
}

thread_local! {
    /// The calling thread's own choice, over the process-wide one.
    static VERIFY_HERE: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// `verify_reads` for the calling thread only. A test that runs the catalog
/// many times to check something else (the fault matrix: about a hundred
/// catalog runs) turns the double evaluation off on its own threads, while
/// the rest of the suite, running beside it in the same process, keeps it.
pub fn verify_reads_on_this_thread(on: bool) {
    VERIFY_HERE.with(|v| v.set(Some(on)));
}

fn verifying_reads() -> bool {
    if let Some(on) = VERIFY_HERE.with(std::cell::Cell::get) {
        return on;
    }
    static FROM_ENV: OnceLock<bool> = OnceLock::new();
    VERIFY_READS.load(Ordering::Relaxed)
        || *FROM_ENV
            .get_or_init(|| std::env::var_os("MCP_CONFORM_VERIFY_READS").is_some_and(|v| v == "1"))
}

/// Compiles and evaluates an expression that must give a boolean.
pub fn eval_bool(source: &str, bindings: &Bindings) -> Result<bool, ExprError> {
    compile(source)?.eval_bool(bindings)
}

type HelperResult = Result<Value, ExecutionError>;

/// A helper's arguments as JSON: borrowed where the value was made from
/// JSON, converted otherwise.
type Args<'a> = [Cow<'a, Value>];

macro_rules! helpers {
    ($($name:ident: $arity:literal),* $(,)?) => {
        /// The helper functions documented in scenarios/README.md: each one's
        /// name, and its entry point for the interpreter.
        const HELPERS: &[(&str, Function)] = &[
            $((stringify!($name), |args| call(stringify!($name), $arity, $name, args))),*
        ];
    };
}

helpers! {
    same_set: 2, subset: 2, intersect: 2, minus: 2, unique: 1, sorted: 1, non_increasing: 1, marker: 2, carrier: 2,
    parse_json: 1, keys: 1, tokens: 1, lower: 1, json_equal: 2, count: 2, distinctive_word: 2,
    tool_result: 1, url_encode: 1, sum: 1, reachable: 2, common_words: 2,
    groups_of: 1, memberships: 4, field_is: 3, has_path: 2, is_true: 2, schema_problems: 1, instance_errors: 2,
    base64_valid: 1, sample_args: 1, prompt_args: 1, expand_template: 1, may_call: 2,
    template_vars: 1, only: 2, sample: 3, repeated: 1, by_frequency: 1, is_pd_uri: 1, pd_uris: 1,
    uri_safe_picks: 2, tool_names: 1, holders: 2, with_entry: 3,
}

/// Calls with up to this many arguments reach a helper whatever its own
/// count, so a wrong count is explained by the helper ("takes 2
/// argument(s), got 1"), not as a missing overload.
const MOST_ARGUMENTS: usize = 4;

/// Declares every helper in the environment, for any argument types. The
/// interpreter hands an environment's overloads its own values; a context's
/// functions get them converted to the older value enum first, which cost
/// more than most helpers' work (a tool list converted twice per call).
fn add_helpers(env: &mut Env) {
    for &(name, entry) in HELPERS {
        for n in 0..=MOST_ARGUMENTS {
            let any = (0..n).map(|_| DYN_TYPE).collect();
            // A clash would be a programming error the unit tests catch.
            let _ = env.add_overload(name, &format!("{name}_{n}"), any, entry);
        }
    }
    super::expr_regex::declare(env);
    for (name, function) in [
        (
            super::expr_select::FIELD,
            super::expr_select::field as Function,
        ),
        (super::expr_select::HAS, super::expr_select::has as Function),
    ] {
        let _ = env.add_overload(
            name,
            &format!("{name}_2"),
            vec![DYN_TYPE, DYN_TYPE],
            function,
        );
    }
}

/// Runs helper `name` on the interpreter's values: checks the count,
/// converts the arguments to JSON and the answer back. The body takes its
/// arguments as JSON, as many as it declares, and answers JSON.
fn call<'b, 'v>(
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

fn list_arg<'a>(name: &str, v: &'a Value) -> Result<&'a Vec<Value>, ExecutionError> {
    v.as_array().ok_or_else(|| {
        ExecutionError::function_error(
            name,
            format!("expects a list, got {}", crate::jsonrpc::type_name(v)),
        )
    })
}

fn str_arg<'a>(name: &str, v: &'a Value) -> Result<&'a str, ExecutionError> {
    v.as_str().ok_or_else(|| {
        ExecutionError::function_error(
            name,
            format!("expects a string, got {}", crate::jsonrpc::type_name(v)),
        )
    })
}

/// Canonical text of a value, so lists of objects can be compared as sets:
/// two JSON values share it exactly when they are equal. Object keys are
/// sorted and integral numbers written as integers (`1.0` is `1`).
fn canonical(v: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(v, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

fn write_canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                // Writing into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *out, k);
                out.push(b':');
                write_canonical(v, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                out.extend_from_slice((f as i64).to_string().as_bytes())
            }
            _ => out.extend_from_slice(n.to_string().as_bytes()),
        },
        other => {
            let _ = serde_json::to_writer(&mut *out, other);
        }
    }
}

fn same_set(a: &Args) -> HelperResult {
    Ok(Value::Bool(
        set_of(list_arg("same_set", &a[0])?) == set_of(list_arg("same_set", &a[1])?),
    ))
}

fn subset(a: &Args) -> HelperResult {
    let whole = set_of(list_arg("subset", &a[1])?);
    Ok(Value::Bool(
        list_arg("subset", &a[0])?
            .iter()
            .all(|x| whole.contains(&Member(x))),
    ))
}

/// The items of `a` that are (`keep`) or are not in `b`, in `a`'s order:
/// one pass over each list, where `a.filter(x, x in b)` scans `b` for every
/// item of `a` (quadratic on lists of thousands of tools).
fn sift(name: &str, a: &Args, keep: bool) -> HelperResult {
    let other = set_of(list_arg(name, &a[1])?);
    Ok(Value::Array(
        list_arg(name, &a[0])?
            .iter()
            .filter(|x| other.contains(&Member(x)) == keep)
            .cloned()
            .collect(),
    ))
}

fn intersect(a: &Args) -> HelperResult {
    sift("intersect", a, true)
}

fn minus(a: &Args) -> HelperResult {
    sift("minus", a, false)
}

/// `sample(list, n, seed)`: the whole list when it has at most `n` items,
/// else `n` of them drawn with `seed` (the run's `--seed`, bound as `seed`),
/// in the list's order. The same list, size and seed give the same sample
/// on every run and platform, so a finding on a sample can be replayed.
fn sample(a: &Args) -> HelperResult {
    let items = list_arg("sample", &a[0])?;
    let n = a[1].as_u64().ok_or_else(|| {
        ExecutionError::function_error("sample", "expects a non-negative integer size")
    })?;
    let seed = a[2].as_u64().or_else(|| a[2].as_i64().map(|i| i as u64));
    let seed =
        seed.ok_or_else(|| ExecutionError::function_error("sample", "expects an integer seed"))?;
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    Ok(Value::Array(
        sample_indices(items.len(), n, seed)
            .into_iter()
            .map(|i| items[i].clone())
            .collect(),
    ))
}

/// `n` distinct indices of `0..len` (all of them when `n >= len`), in
/// increasing order: Floyd's algorithm, one draw per chosen index.
pub fn sample_indices(len: usize, n: usize, seed: u64) -> Vec<usize> {
    if n >= len {
        return (0..len).collect();
    }
    let mut rng = super::generate::rng::Rng::for_case(seed, "sample", len);
    let mut chosen = BTreeSet::new();
    for j in len - n..len {
        let t = rng.below(j + 1);
        if !chosen.insert(t) {
            chosen.insert(j);
        }
    }
    chosen.into_iter().collect()
}

/// The items that occur more than once, each once, in the order of their
/// first occurrence (what `xs.filter(x, count(xs, x) > 1).distinct()`
/// gives, in two passes where that counts the whole list for every item).
fn repeated(a: &Args) -> HelperResult {
    let items = list_arg("repeated", &a[0])?;
    let keys: Vec<String> = items.iter().map(canonical).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for k in &keys {
        *counts.entry(k.as_str()).or_default() += 1;
    }
    let mut out = Vec::new();
    for (item, key) in items.iter().zip(&keys) {
        if let Some(n) = counts.get_mut(key.as_str()).filter(|n| **n > 1) {
            // Counted down to zero: each repeat is given once.
            *n = 0;
            out.push(item.clone());
        }
    }
    Ok(Value::Array(out))
}

/// The distinct items, the most frequent first, ties in the order of first
/// occurrence (what `xs.distinct().sortBy(x, -count(xs, x))` gives, in one
/// pass where that counts the whole list for every distinct item: a tag
/// vocabulary over ten thousand tools took seconds).
fn by_frequency(a: &Args) -> HelperResult {
    let items = list_arg("by_frequency", &a[0])?;
    let mut order: Vec<(&Value, usize)> = Vec::new();
    let mut position: HashMap<String, usize> = HashMap::new();
    for item in items {
        let slot = *position.entry(canonical(item)).or_insert_with(|| {
            order.push((item, 0));
            order.len() - 1
        });
        order[slot].1 += 1;
    }
    // A stable sort keeps first occurrences in order among equal counts.
    order.sort_by_key(|entry| std::cmp::Reverse(entry.1));
    Ok(Value::Array(
        order.into_iter().map(|(v, _)| v.clone()).collect(),
    ))
}

/// `holders(labels, names)`: for each label, the names of the items that
/// carry it, in the items' order, each item once. `labels[i]` is the list
/// of item i's labels (its tags, its groups), `names[i]` its name; labels
/// that are not strings name nothing a filter can ask for and are left
/// out. The filter scenarios check one filter per tag or group: the tools
/// it admits are `holders[x]`, where filtering every tool again for each
/// tag scanned the listing once per tag (half a second over ten thousand
/// tools and 30 tags).
fn holders(a: &Args) -> HelperResult {
    let labels = list_arg("holders", &a[0])?;
    let names = list_arg("holders", &a[1])?;
    if labels.len() != names.len() {
        return Err(ExecutionError::function_error(
            "holders",
            format!(
                "expects one name per item: {} label lists, {} names",
                labels.len(),
                names.len()
            ),
        ));
    }
    let mut held: Map<String, Value> = Map::new();
    for (i, (item_labels, name)) in labels.iter().zip(names).enumerate() {
        let item_labels = item_labels.as_array().ok_or_else(|| {
            ExecutionError::function_error(
                "holders",
                format!(
                    "expects a list of labels for each item; item {i} has {}",
                    crate::jsonrpc::type_name(item_labels)
                ),
            )
        })?;
        for (j, label) in item_labels.iter().enumerate() {
            // A label repeated in one item's list still names the item once.
            let Some(label) = label.as_str().filter(|_| !item_labels[..j].contains(label)) else {
                continue;
            };
            if let Value::Array(list) = held
                .entry(label)
                .or_insert_with(|| Value::Array(Vec::new()))
            {
                list.push(name.clone());
            }
        }
    }
    Ok(Value::Object(held))
}

fn unique(a: &Args) -> HelperResult {
    let items = list_arg("unique", &a[0])?;
    Ok(Value::Bool(set_of(items).len() == items.len()))
}

fn sorted(a: &Args) -> HelperResult {
    let mut items = list_arg("sorted", &a[0])?.clone();
    items.sort_by(compare_json);
    Ok(Value::Array(items))
}

fn compare_json(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => canonical(a).cmp(&canonical(b)),
    }
}

fn non_increasing(a: &Args) -> HelperResult {
    let items = list_arg("non_increasing", &a[0])?;
    Ok(Value::Bool(items.windows(2).all(|w| {
        compare_json(&w[0], &w[1]) != std::cmp::Ordering::Less
    })))
}

/// Where a string marker such as `TOOL_DESCRIPTION_REQUIRED` shows up in a
/// response, in the order docs/interpretations.md#string-error-carriers lists the accepted carriers.
pub fn find_carrier(response: &Value, code: &str) -> Option<&'static str> {
    let error = response.get("error");
    if let Some(error) = error {
        if error.pointer("/data/code").and_then(Value::as_str) == Some(code) {
            return Some("error.data.code");
        }
        if error.get("code").and_then(Value::as_str) == Some(code) {
            return Some("error.code (string)");
        }
        if error
            .get("message")
            .and_then(Value::as_str)
            .is_some_and(|m| m.contains(code))
        {
            return Some("error.message");
        }
        if error
            .get("data")
            .is_some_and(|d| d.to_string().contains(code))
        {
            return Some("error.data");
        }
    }
    let result = response.get("result")?;
    if result.get("isError") != Some(&Value::Bool(true)) {
        return None;
    }
    if let Some(sc) = result.get("structuredContent") {
        if sc.to_string().contains(code) {
            return Some("result.structuredContent (isError)");
        }
    }
    let texts = result.get("content").and_then(Value::as_array)?;
    texts
        .iter()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .any(|t| t.contains(code))
        .then_some("result.content text (isError)")
}

fn marker(a: &Args) -> HelperResult {
    let code = str_arg("marker", &a[1])?;
    Ok(Value::Bool(find_carrier(&a[0], code).is_some()))
}

fn carrier(a: &Args) -> HelperResult {
    let code = str_arg("carrier", &a[1])?;
    Ok(Value::String(
        find_carrier(&a[0], code).unwrap_or("").to_string(),
    ))
}

fn parse_json(a: &Args) -> HelperResult {
    let text = str_arg("parse_json", &a[0])?;
    let v: Value = serde_json::from_str(text).map_err(|e| {
        ExecutionError::function_error("parse_json", format!("text is not JSON: {e}"))
    })?;
    Ok(v)
}

fn keys(a: &Args) -> HelperResult {
    let obj = a[0]
        .as_object()
        .ok_or_else(|| ExecutionError::function_error("keys", "expects a map"))?;
    // A CEL map has no order, so the keys are sorted: the same map always
    // gives the same list.
    let mut names: Vec<&String> = obj.keys().collect();
    names.sort();
    Ok(Value::Array(
        names
            .into_iter()
            .map(|k| Value::String(k.clone()))
            .collect(),
    ))
}

/// The map with only the listed keys: arguments built from a generated
/// combination (`only({'limit': limit, 'query': q}, present)`).
fn only(a: &Args) -> HelperResult {
    let obj = a[0].as_object().ok_or_else(|| {
        ExecutionError::function_error("only", "expects a map and a list of keys")
    })?;
    let wanted = a[1].as_array().ok_or_else(|| {
        ExecutionError::function_error("only", "expects a map and a list of keys")
    })?;
    Ok(Value::Object(
        obj.iter()
            .filter(|(k, _)| wanted.iter().any(|w| w.as_str() == Some(k.as_str())))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    ))
}

/// The map with one entry set (added or replaced): arguments that must hold
/// a value of the scenario's choosing beside the ones `sample_args` made
/// (`with_entry(sample_args(t.inputSchema), param, 'us-west1')`).
fn with_entry(a: &Args) -> HelperResult {
    let expects =
        || ExecutionError::function_error("with_entry", "expects a map, a key and a value");
    let mut obj = a[0].as_object().ok_or_else(expects)?.clone();
    let key = a[1].as_str().ok_or_else(expects)?;
    obj.insert(key.to_string(), a[2].clone().into_owned());
    Ok(Value::Object(obj))
}

/// Lowercase alphanumeric words of a text.
pub fn words(text: &str) -> Vec<String> {
    lowered_words(text).map(Cow::into_owned).collect()
}

fn tokens(a: &Args) -> HelperResult {
    let text = str_arg("tokens", &a[0])?;
    Ok(Value::Array(
        words(text).into_iter().map(Value::String).collect(),
    ))
}

fn lower(a: &Args) -> HelperResult {
    Ok(Value::String(str_arg("lower", &a[0])?.to_lowercase()))
}

fn json_equal(a: &Args) -> HelperResult {
    Ok(Value::Bool(super::pattern::json_eq(&a[0], &a[1])))
}

fn count(a: &Args) -> HelperResult {
    let needle = canonical(&a[1]);
    let n = list_arg("count", &a[0])?
        .iter()
        .filter(|x| canonical(x) == needle)
        .count();
    Ok(Value::from(n as i64))
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

/// The words of a text (split at every character that is not a letter or a
/// digit), lower-cased; a word of ASCII already in lower case is borrowed,
/// not copied.
fn lowered_words(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
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

/// The structured payload of a `tools/call` answer: `structuredContent`, or the
/// first text content parsed as JSON, or null.
fn tool_result(a: &Args) -> HelperResult {
    let result = a[0].get("result").unwrap_or(&a[0]);
    if let Some(sc) = result.get("structuredContent") {
        return Ok(sc.clone());
    }
    let parsed = result
        .get("content")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find_map(|c| c.get("text").and_then(Value::as_str)))
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .unwrap_or(Value::Null);
    Ok(parsed)
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

/// The value at a dotted path of map keys (`'capabilities.tools.search'`),
/// if every step is a map that has the next key.
fn at_path<'v>(name: &str, args: &'v Args) -> Result<Option<&'v Value>, ExecutionError> {
    let [x, path] = args else {
        return Err(ExecutionError::function_error(
            name,
            "takes a value and a dotted path of keys, e.g. 'capabilities.tools.search'",
        ));
    };
    let Value::String(path) = &**path else {
        return Err(ExecutionError::function_error(
            name,
            "takes a value and a dotted path of keys, e.g. 'capabilities.tools.search'",
        ));
    };
    Ok(path
        .split('.')
        .try_fold(&**x, |here, key| here.as_object()?.get(key)))
}

/// `has_path(server, 'capabilities.filtering.groups')`: the chain of
/// `has(...)` guards for a nested key in one call; false, never an error,
/// when a step is missing or is not a map.
fn has_path(a: &Args) -> HelperResult {
    Ok(Value::Bool(at_path("has_path", a)?.is_some()))
}

/// `is_true(server, 'capabilities.tools.search')`: the nested value is the
/// boolean `true` (a capability flag); false when it is absent, false, or
/// not a boolean.
fn is_true(a: &Args) -> HelperResult {
    Ok(Value::Bool(
        at_path("is_true", a)? == Some(&Value::Bool(true)),
    ))
}

/// `field_is(x, 'key', 'string')`: `x` is a map whose `key` holds a value of
/// that JSON type (`string`, `list`, `map`, `bool`, `number`, `null`); the
/// type guard `type(x) == map && has(x.key) && type(x.key) == string` in one
/// call, false (never an error) whatever `x` is.
fn field_is(a: &Args) -> HelperResult {
    let [x, key, kind] = a else {
        return Err(ExecutionError::function_error(
            "field_is",
            "takes a value, a key name and a type name",
        ));
    };
    let (Value::String(key), Value::String(kind)) = (&**key, &**kind) else {
        return Err(ExecutionError::function_error(
            "field_is",
            "takes a value, a key name and a type name",
        ));
    };
    let value = x.as_object().and_then(|map| map.get(key));
    let holds = match (kind.as_str(), value) {
        (_, None) => false,
        ("string", Some(Value::String(_)))
        | ("list", Some(Value::Array(_)))
        | ("map", Some(Value::Object(_)))
        | ("bool", Some(Value::Bool(_)))
        | ("null", Some(Value::Null))
        | ("number", Some(Value::Number(_))) => true,
        ("string" | "list" | "map" | "bool" | "null" | "number", Some(_)) => false,
        (other, _) => {
            return Err(ExecutionError::function_error(
                "field_is",
                format!("unknown type name {other:?} (string, list, map, bool, number, null)"),
            ))
        }
    };
    Ok(Value::Bool(holds))
}

/// The groups an entry says it belongs to: SEP-1300's `groups` field, or,
/// when the entry has none, the grouping extension's
/// `_meta["io.modelcontextprotocol/groups"]`; `[]` when it states neither.
/// Filter checks compare against this, so a server that states membership
/// only the extension's way is held to what it states.
fn groups_of(a: &Args) -> HelperResult {
    let strings = |v: &Value| -> Option<Vec<Value>> {
        v.as_array()
            .map(|l| l.iter().filter(|x| x.is_string()).cloned().collect())
    };
    let stated = a[0]
        .get("groups")
        .and_then(strings)
        .or_else(|| {
            a[0].get("_meta")
                .and_then(|m| m.get(GROUPS_META_KEY))
                .and_then(strings)
        })
        .unwrap_or_default();
    Ok(Value::Array(stated))
}

/// `memberships(items, kind, id_key, meta_key)`: what each listed item
/// states under `_meta[meta_key]`, as `{kind, id, member, groups, raw}`:
/// `id` is the item's `id_key` field, `member` whether `_meta` is an object
/// holding the key, `raw` its value (else null), `groups` that value as a
/// list (a single value is wrapped). The grouping scenarios compare these
/// records across kinds; written as a CEL map per item, the same record
/// took 200 ms over ten thousand tools.
fn memberships(a: &Args) -> HelperResult {
    let items = list_arg("memberships", &a[0])?;
    let kind = str_arg("memberships", &a[1])?;
    let id_key = str_arg("memberships", &a[2])?;
    let meta_key = str_arg("memberships", &a[3])?;
    let record = |(i, item): (usize, &Value)| -> HelperResult {
        let fail = |why: String| ExecutionError::function_error("memberships", why);
        let fields = item
            .as_object()
            .ok_or_else(|| fail(format!("{kind} {i} is not an object")))?;
        let id = fields
            .get(id_key)
            .ok_or_else(|| fail(format!("{kind} {i} has no `{id_key}`")))?;
        let raw = fields
            .get("_meta")
            .and_then(Value::as_object)
            .and_then(|meta| meta.get(meta_key));
        let groups = match raw {
            None => Vec::new(),
            Some(Value::Array(list)) => list.clone(),
            Some(one) => vec![one.clone()],
        };
        let mut out = Map::new();
        out.insert("kind".into(), Value::String(kind.to_string()));
        out.insert("id".into(), id.clone());
        out.insert("member".into(), Value::Bool(raw.is_some()));
        out.insert("groups".into(), Value::Array(groups));
        out.insert("raw".into(), raw.cloned().unwrap_or(Value::Null));
        Ok(Value::Object(out))
    };
    items
        .iter()
        .enumerate()
        .map(record)
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// The grouping extension's membership key in `_meta`.
pub(super) use crate::protocol::META_GROUPS as GROUPS_META_KEY;

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

/// The sum of a list of numbers (an int when every item is an integer).
fn sum(a: &Args) -> HelperResult {
    let items = list_arg("sum", &a[0])?;
    if items.iter().all(|v| v.as_i64().is_some()) {
        return Ok(Value::from(
            items.iter().filter_map(Value::as_i64).sum::<i64>(),
        ));
    }
    let total = items
        .iter()
        .map(|v| {
            v.as_f64()
                .ok_or_else(|| ExecutionError::function_error("sum", "expects a list of numbers"))
        })
        .sum::<Result<f64, _>>()?;
    Ok(Value::from(total))
}

/// The nodes reachable from `start` in one or more steps along `edges`, a
/// list of `[from, to]` pairs, in the order they are first reached; `start`
/// is in it only when it lies on a cycle. CEL has no recursion, so a
/// transitive walk (nested groups, their cycles) needs this helper.
fn reachable(a: &Args) -> HelperResult {
    let mut next: std::collections::HashMap<String, Vec<&Value>> = Default::default();
    for edge in list_arg("reachable", &a[0])? {
        match edge.as_array().map(Vec::as_slice) {
            Some([from, to]) => next.entry(canonical(from)).or_default().push(to),
            _ => {
                return Err(ExecutionError::function_error(
                    "reachable",
                    format!("expects edges as [from, to] pairs, got {edge}"),
                ))
            }
        }
    }
    let mut seen = BTreeSet::new();
    let mut found: Vec<Value> = Vec::new();
    let mut todo = vec![canonical(&a[1])];
    while let Some(node) = todo.pop() {
        for to in next.get(&node).into_iter().flatten() {
            let key = canonical(to);
            if seen.insert(key.clone()) {
                found.push((*to).clone());
                todo.push(key);
            }
        }
    }
    Ok(Value::Array(found))
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

fn strings(list: Vec<String>) -> Value {
    Value::Array(list.into_iter().map(Value::String).collect())
}

/// Why a value is not a valid JSON Schema (`schema_problems(t.inputSchema)`).
fn schema_problems(a: &Args) -> HelperResult {
    Ok(strings(core::schema_problems(&a[0])))
}

/// How a value breaks a schema (`instance_errors(r.structuredContent, t.outputSchema)`).
fn instance_errors(a: &Args) -> HelperResult {
    Ok(strings(core::instance_errors(&a[0], &a[1])))
}

fn base64_valid(a: &Args) -> HelperResult {
    Ok(Value::Bool(core::base64_valid(&a[0])))
}

fn sample_args(a: &Args) -> HelperResult {
    Ok(core::sample_args(&a[0]))
}

fn prompt_args(a: &Args) -> HelperResult {
    Ok(core::prompt_args(&a[0]))
}

fn expand_template(a: &Args) -> HelperResult {
    let template = str_arg("expand_template", &a[0])?;
    Ok(Value::String(core::expand_template(template, "example")))
}

fn template_vars(a: &Args) -> HelperResult {
    let template = str_arg("template_vars", &a[0])?;
    Ok(strings(core::template_vars(template)))
}

fn is_pd_uri(a: &Args) -> HelperResult {
    Ok(Value::Bool(core::is_pd_uri(str_arg("is_pd_uri", &a[0])?)))
}

fn pd_uris(a: &Args) -> HelperResult {
    Ok(strings(core::pd_uris(core::listed_items(
        &a[0],
        "resources",
    ))))
}

fn uri_safe_picks(a: &Args) -> HelperResult {
    let n = a[1].as_u64().ok_or_else(|| {
        ExecutionError::function_error("uri_safe_picks", "expects a tools/list answer and a count")
    })?;
    let tools = core::listed_items(&a[0], "tools");
    Ok(strings(core::uri_safe_picks(
        tools,
        usize::try_from(n).unwrap_or(usize::MAX),
    )))
}

fn tool_names(a: &Args) -> HelperResult {
    Ok(Value::Array(core::listed_names(core::listed_items(
        &a[0], "tools",
    ))))
}

fn may_call(a: &Args) -> HelperResult {
    let policy = str_arg("may_call", &a[1])?;
    Ok(Value::Bool(core::may_call(&a[0], policy)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The tag ranking the filter scenarios take as their most common tag:
    /// one pass with `by_frequency` gives what sorting the tags by a scan
    /// of the tools for each gave, ties in order of first appearance, a tag
    /// a tool repeats counted once for it.
    #[test]
    fn tags_ranked_by_frequency_in_one_pass_as_by_a_scan_per_tag() {
        let mut b = Bindings::default();
        b.insert(
            "all",
            json!({"result": {"tools": [
                {"name": "a", "tags": ["x", "y", "y"]},
                {"name": "b"},
                {"name": "c", "tags": ["z", "y", "w"]},
                {"name": "d", "tags": ["w", "x", "x", "x"]},
                {"name": "e", "tags": []},
                {"name": "f", "tags": ["v"]}
            ]}}),
        );
        let scan = "all.result.tools.filter(t, has(t.tags)).map(t, t.tags).flatten().distinct()\
            .sortBy(x, -size(all.result.tools.filter(t, has(t.tags) && x in t.tags)))";
        let one_pass =
            "by_frequency(all.result.tools.filter(t, has(t.tags)).map(t, t.tags.distinct()).flatten())";
        let ranked = eval(one_pass, &b).ok();
        assert_eq!(ranked, Some(json!(["x", "y", "w", "z", "v"])));
        assert_eq!(ranked, eval(scan, &b).ok());
    }

    /// `memberships` gives what the grouping scenarios once built per item
    /// in CEL, for every shape of `_meta` a server may send.
    #[test]
    fn memberships_agree_with_the_cel_records_they_replace() {
        let cel = "xs.map(x, {'kind': 'tool', 'id': x.name, \
            'member': (has(x._meta) && type(x._meta) == map && key in x._meta), \
            'groups': ((has(x._meta) && type(x._meta) == map && key in x._meta) \
                ? (type(x._meta[key]) == list ? x._meta[key] : [x._meta[key]]) : []), \
            'raw': (has(x._meta) && type(x._meta) == map && key in x._meta) ? x._meta[key] : null})";
        let mut b = Bindings::default();
        b.insert("key", json!("k"));
        b.insert(
            "xs",
            json!([
                {"name": "a"},
                {"name": "b", "_meta": null},
                {"name": "c", "_meta": {"other": 1}},
                {"name": "d", "_meta": {"k": ["g1", "g2"]}},
                {"name": "e", "_meta": {"k": "g1"}},
                {"name": 7, "_meta": {"k": null}},
                {"name": "f", "_meta": ["k"]},
            ]),
        );
        let helper = eval("memberships(xs, 'tool', 'name', key)", &b);
        assert_eq!(helper.ok(), eval(cel, &b).ok());
        for broken in [json!([{"_meta": {}}]), json!([3])] {
            b.insert("xs", broken);
            assert!(eval(cel, &b).is_err());
            assert!(eval("memberships(xs, 'tool', 'name', key)", &b).is_err());
        }
    }

    /// A capture of a part of another binding shares that binding's JSON:
    /// on a 10,000-tool walk, `walk: cond ? wt : wp` and `found:
    /// walk.result.tools` were two more copies of the walk.
    #[test]
    fn a_part_of_a_binding_is_bound_without_a_copy() {
        let all = Arc::new(json!({"result": {"tools": [{"name": "a"}, {"name": "b"}]}}));
        let mut b = Bindings::default();
        b.insert("all", Arc::clone(&all));
        let tools = compile("true ? all.result.tools : []")
            .and_then(|c| c.eval_bound(&b))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(std::ptr::eq(tools.json(), &all["result"]["tools"]));
        b.insert("tools", tools);
        let second = compile("tools[1]")
            .and_then(|c| c.eval_bound(&b))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(std::ptr::eq(second.json(), &all["result"]["tools"][1]));
        // Moved out, a part is a copy; the document stays as it was.
        assert_eq!(second.into_json(), json!({"name": "b"}));
        assert_eq!(eval("size(tools)", &b), Ok(json!(2)));
        // A value the expression made is its own document.
        let made = compile("all.result.tools.map(t, t.name)")
            .and_then(|c| c.eval_bound(&b))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(made.into_json(), json!(["a", "b"]));
    }

    /// A capture that keeps some items of another binding's list holds
    /// those items, not copies: `named: all.result.tools.filter(…)` over a
    /// 10,000-tool walk was a second copy of the walk. Read back, as a
    /// whole, cut down or in part, it is the list the filter made.
    #[test]
    fn a_filter_of_a_binding_holds_its_items_without_a_copy() {
        let all = Arc::new(json!({"result": {"tools": [
            {"name": "a", "n": 1}, {"name": "b", "n": 2}, {"name": "c", "n": 3}
        ]}}));
        let mut b = Bindings::default();
        b.insert("all", Arc::clone(&all));
        let kept = compile("all.result.tools.filter(t, t.n != 2)")
            .and_then(|c| c.eval_bound(&b))
            .unwrap_or_else(|e| panic!("{e}"));
        let Held::Items(items) = &kept.json else {
            panic!("a filter of JSON items is held as those items");
        };
        assert!(std::ptr::eq(
            *items.places[1].get(),
            &all["result"]["tools"][2]
        ));
        let expected = json!([{"name": "a", "n": 1}, {"name": "c", "n": 3}]);
        assert_eq!(kept.json(), &expected);
        b.insert("kept", kept.clone());
        assert_eq!(eval("kept.map(t, t.name)", &b), Ok(json!(["a", "c"])));
        assert_eq!(eval("kept[1]", &b), Ok(json!({"name": "c", "n": 3})));
        assert_eq!(eval("size(kept) == 2 && kept == kept", &b), Ok(json!(true)));
        let names = ReadTree::default().with_each_item(ReadTree::whole_fields(&["name"]));
        assert_eq!(
            kept.clone().into_json_kept(&names),
            json!([{"name": "a"}, {"name": "c"}])
        );
        assert_eq!(
            kept.clone().into_first_items(1),
            Some(vec![json!({"name": "a", "n": 1})])
        );
        assert_eq!(kept.into_json(), expected);
        // A list that is not all JSON items is made as before.
        let mixed = compile("all.result.tools.filter(t, t.n != 2) + [1]")
            .and_then(|c| c.eval_bound(&b))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(mixed.json, Held::At(_)));
        assert_eq!(
            mixed.into_json(),
            json!([{"name": "a", "n": 1}, {"name": "c", "n": 3}, 1])
        );
    }

    fn b(v: Value) -> Bindings {
        Bindings::from(v.as_object().cloned().unwrap_or_default())
    }

    #[test]
    fn a_thread_may_turn_read_verification_off_for_itself_only() {
        verify_reads(true);
        let here = std::thread::spawn(|| {
            verify_reads_on_this_thread(false);
            verifying_reads()
        })
        .join()
        .unwrap_or(true);
        assert!(!here, "the thread's own choice wins");
        let elsewhere = std::thread::spawn(verifying_reads).join().unwrap_or(false);
        assert!(elsewhere, "other threads keep the process-wide setting");
    }

    #[test]
    fn schema_errors_validates_with_the_bindings_own_schemas() {
        let mut strict = b(json!({"lists": [{"tools": []}]}));
        let plain = strict.clone();
        let root = json!({"$defs": {"ListToolsResult": {"required": ["mark"]}}});
        let schemas = Schemas::with_user("strict.json", root).unwrap_or_else(|e| panic!("{e}"));
        strict.set_schemas(schemas);
        // Inside a comprehension too: the helper lives on the evaluation's context.
        let count = "lists.map(l, size(schema_errors(l, 'ListToolsResult')))";
        assert_eq!(eval(count, &strict), Ok(json!([1])));
        assert_eq!(eval(count, &plain), Ok(json!([0])));
        let bad_count = eval("schema_errors(1)", &plain).map_err(|e| e.to_string());
        assert!(
            bad_count
                .as_ref()
                .is_err_and(|e| e.contains("takes 2 argument(s), got 1")),
            "{bad_count:?}"
        );
    }

    #[test]
    fn has_path_and_is_true_guard_nested_keys() {
        let b = Bindings::from(
            serde_json::json!({"server": {"capabilities": {
                "tools": {"search": true, "listChanged": false, "filtering": "true"},
                "filtering": {"groups": {}},
                "prompts": []
            }}})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        );
        for (source, want) in [
            ("is_true(server, 'capabilities.tools.search')", true),
            ("is_true(server, 'capabilities.tools.listChanged')", false),
            ("is_true(server, 'capabilities.tools.filtering')", false),
            ("is_true(server, 'capabilities.resources.search')", false),
            ("is_true(server, 'capabilities.prompts.search')", false),
            ("has_path(server, 'capabilities.filtering.groups')", true),
            ("has_path(server, 'capabilities.filtering.tags')", false),
            (
                "has_path(server, 'capabilities.tools.search.deeper')",
                false,
            ),
        ] {
            assert_eq!(eval_bool(source, &b), Ok(want), "{source}");
        }
        assert!(
            eval_bool("is_true(server, 1)", &b).is_err(),
            "a path must be a string"
        );
    }

    #[test]
    fn field_is_guards_a_key_and_its_type() {
        let b = Bindings::from(
            serde_json::json!({"r": {"uri": "x", "n": 2, "l": [], "m": {}}, "s": "text"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        for (source, want) in [
            ("field_is(r, 'uri', 'string')", true),
            ("field_is(r, 'uri', 'list')", false),
            (
                "field_is(r, 'n', 'number') && field_is(r, 'l', 'list') && field_is(r, 'm', 'map')",
                true,
            ),
            ("field_is(r, 'missing', 'string')", false),
            ("field_is(s, 'uri', 'string')", false),
            ("field_is(r.uri, 'x', 'string')", false),
        ] {
            assert_eq!(eval_bool(source, &b), Ok(want), "{source}");
        }
        assert!(eval_bool("field_is(r, 'uri', 'text')", &b).is_err());
    }

    /// Strings count as their own text: the names alone give the words
    /// that maps holding only each name gave.
    #[test]
    fn common_words_of_strings_are_those_of_maps_of_the_names() {
        let b = b(json!({"tools": [
            {"name": "page_create", "description": "Creates a page"},
            {"name": "page-delete"},
            {"name": 7},
            {"description": "no name"},
            {"name": "list.pages"}
        ]}));
        let names = eval("common_words(tool_names(tools), 2)", &b);
        assert_eq!(names, Ok(json!(["page", "create"])));
        assert_eq!(
            names,
            eval(
                "common_words(tools.map(x, {'name': has(x.name) ? x.name : ''}), 2)",
                &b
            )
        );
    }

    #[test]
    fn holders_gives_each_labels_items_as_a_filter_per_label_would() {
        let b = b(json!({"tools": [
            {"name": "a", "tags": ["x", "y", "x"]},
            {"name": "b"},
            {"name": "c", "tags": ["y", 7, null]},
            {"name": "d", "tags": []},
            {"name": "e", "tags": ["z", "x"]}
        ]}));
        let labels = "tools.map(t, has(t.tags) ? t.tags : [])";
        let names = "tools.map(t, t.name)";
        let held = format!("holders({labels}, {names})");
        assert_eq!(
            eval(&held, &b),
            Ok(json!({"x": ["a", "e"], "y": ["a", "c"], "z": ["e"]}))
        );
        // What filtering every tool for one label gives, for each label.
        let scan = format!(
            "['x', 'y', 'z'].all(l, {held}[l] == tools.filter(t, has(t.tags) && l in t.tags).map(t, t.name))"
        );
        assert_eq!(eval(&scan, &b), Ok(json!(true)));
        assert_eq!(eval("holders([], [])", &b), Ok(json!({})));
        let uneven = eval("holders([['x']], [])", &b).unwrap_err().to_string();
        assert!(uneven.contains("1 label lists, 0 names"), "{uneven}");
        let flat = eval("holders(['x'], ['a'])", &b).unwrap_err().to_string();
        assert!(flat.contains("item 0 has string"), "{flat}");
    }

    #[test]
    fn by_frequency_orders_distinct_items_most_frequent_first() {
        let b = b(
            json!({"xs": ["b", "a", "c", "a", "c", "a", "d"], "objs": [{"k": 1}, {"k": 2}, {"k": 2.0}]}),
        );
        assert_eq!(
            eval("by_frequency(xs)", &b),
            Ok(json!(["a", "c", "b", "d"]))
        );
        assert_eq!(eval("by_frequency([])", &b), Ok(json!([])));
        assert_eq!(
            eval("by_frequency(objs)", &b),
            Ok(json!([{"k": 2}, {"k": 1}]))
        );
        assert_eq!(
            eval(
                "by_frequency(xs) == xs.distinct().sortBy(x, -count(xs, x))",
                &b
            ),
            Ok(json!(true))
        );
        assert!(eval("by_frequency('x')", &b).is_err());
    }

    #[test]
    fn repeated_names_each_repeat_once() {
        let b = b(json!({"xs": ["b", "a", "a", "c", "b", "a"], "objs": [{"k": 1}, {"k": 1.0}]}));
        assert_eq!(eval("repeated(xs)", &b), Ok(json!(["b", "a"])));
        assert_eq!(eval("repeated(['x'])", &b), Ok(json!([])));
        assert_eq!(eval("repeated(objs)", &b), Ok(json!([{"k": 1}])));
        assert!(eval("repeated('x')", &b).is_err());
    }

    #[test]
    fn sample_is_seeded_ordered_and_whole_on_short_lists() {
        let list: Vec<Value> = (0..1000).map(Value::from).collect();
        let b = b(json!({"xs": list, "short": [3, 1, 2]}));
        let drawn = eval("sample(xs, 64, 0)", &b).expect("evaluates");
        let items = drawn.as_array().expect("a list");
        assert_eq!(items.len(), 64);
        let ints: Vec<i64> = items.iter().filter_map(Value::as_i64).collect();
        assert!(ints.windows(2).all(|w| w[0] < w[1]), "in order, distinct");
        assert_eq!(
            eval("sample(xs, 64, 0)", &b),
            Ok(drawn.clone()),
            "repeatable"
        );
        assert_ne!(eval("sample(xs, 64, 1)", &b), Ok(drawn), "the seed matters");
        assert_eq!(eval("sample(short, 64, 0)", &b), Ok(json!([3, 1, 2])));
        assert_eq!(eval("sample(short, 3, 5)", &b), Ok(json!([3, 1, 2])));
        assert!(eval("sample(short, -1, 0)", &b).is_err());
        for (len, n) in [(10, 9), (5, 0), (100, 1), (2, 1)] {
            let idx = sample_indices(len, n, 42);
            assert_eq!(idx.len(), n);
            assert!(idx.iter().all(|&i| i < len));
        }
    }

    #[test]
    fn canonical_text_ignores_key_order_and_integral_floats() {
        assert_eq!(
            canonical(&json!({"b": 1.0, "a": [1, "x\"y", null, {"d": true, "c": 2.5}]})),
            r#"{"a":[1,"x\"y",null,{"c":2.5,"d":true}],"b":1}"#
        );
    }

    #[test]
    fn rebinding_replaces_the_converted_value() {
        let mut bindings = b(json!({"x": 1, "big": 18446744073709551615u64, "f": 1.5}));
        assert_eq!(eval_bool("x == 1 && type(x) == int", &bindings), Ok(true));
        assert_eq!(
            eval_bool("type(big) == uint && f > 1.0", &bindings),
            Ok(true)
        );
        let before = bindings.clone();
        bindings.insert("x", json!({"k": [null, true, "s"]}));
        assert_eq!(eval("x.k", &bindings), Ok(json!([null, true, "s"])));
        assert_eq!(
            eval("x", &before),
            Ok(json!(1)),
            "a clone keeps its own value"
        );
        bindings.remove("x");
        assert!(eval("x", &bindings).is_err());
    }

    #[test]
    fn evaluates_over_json_bindings() {
        let bindings = b(
            json!({"all": {"result": {"tools": [{"name": "a", "groups": ["g"]}, {"name": "b"}]}}}),
        );
        let names = eval(
            "all.result.tools.filter(t, has(t.groups) && 'g' in t.groups).map(t, t.name)",
            &bindings,
        );
        assert_eq!(names, Ok(json!(["a"])));
        assert_eq!(
            eval_bool("size(all.result.tools) == 2", &bindings),
            Ok(true)
        );
    }

    #[test]
    fn helpers_work() {
        let bindings = b(json!({
            "x": [3, 1, 2], "y": [1, 2, 3, 3],
            "r": {"error": {"code": -32010, "message": "m", "data": {"code": "TOOL_DESCRIPTION_REQUIRED"}}},
            "tools": [{"name": "a", "description": "Archive the quarterly ledger"}, {"name": "b", "description": "Archive a page"}],
            "call": {"result": {"content": [{"type": "text", "text": "{\"n\": 1}"}]}},
            "words_in": [
                {"name": "page_create", "description": "Create the page 42"},
                {"name": "page_get", "title": "Get a page", "tags": ["read"]},
                {"name": "task_create", "description": "Create a task for the team"}
            ]
        }));
        for expr in [
            "same_set(x, y)",
            "subset([1, 2], x)",
            "intersect([3, 'a', 1, {'k': 1}], [{'k': 1.0}, 1, 2]) == [1, {'k': 1}] && intersect([], x) == []",
            "minus([3, 'a', 1, 3], x) == ['a'] && minus(x, []) == x",
            "!unique(y) && unique(x)",
            "sorted(x) == [1, 2, 3]",
            "keys({'b': 1, 'c': 2, 'a': 3}) == ['a', 'b', 'c']",
            "non_increasing([3, 3, 1]) && !non_increasing(x)",
            "marker(r, 'TOOL_DESCRIPTION_REQUIRED') && carrier(r, 'TOOL_DESCRIPTION_REQUIRED') == 'error.data.code'",
            "!marker(r, 'MISSING_TOOL_SELECTION')",
            "parse_json('{\"a\": [1]}').a == [1]",
            "keys({'k': 1}) == ['k']",
            "only({'a': 1, 'b': [2], 'c': 3}, ['c', 'a', 'z']) == {'a': 1, 'c': 3} && only({'a': 1}, []) == {}",
            "with_entry({'a': 1, 'b': 2}, 'b', 'x') == {'a': 1, 'b': 'x'} && with_entry({}, 'k', [1]) == {'k': [1]}",
            "tokens('Create a NEW page') == ['create', 'a', 'new', 'page']",
            "lower('AbC') == 'abc'",
            "json_equal({'a': 1}, {'a': 1})",
            "count(y, 3) == 2",
            "distinctive_word(tools, 'a') == 'quarterly'",
            "tool_result(call).n == 1",
            "url_encode('a b/c') == 'a%20b%2Fc'",
            "sum([1, 2, 3]) == 6 && sum([0.5, 1]) == 1.5",
            "type(x[0]) == int && x[0] > -1",
            "same_set(reachable([['a', 'b'], ['b', 'c'], ['d', 'a']], 'a'), ['b', 'c'])",
            "'a' in reachable([['a', 'b'], ['b', 'c'], ['c', 'a']], 'a') && reachable([], 'a') == []",
            "!('a' in reachable([['a', 'b'], ['b', 'b']], 'a'))",
            "common_words(words_in, 2) == ['create', 'page'] && common_words(words_in, 3)[2] == 'get'",
            "common_words(words_in, 0) == [] && common_words([], 3) == []",
            "groups_of(tools[0]) == [] && groups_of({'groups': ['g', 1]}) == ['g']",
            "groups_of({'_meta': {'io.modelcontextprotocol/groups': ['m']}}) == ['m']",
            "groups_of({'groups': ['g'], '_meta': {'io.modelcontextprotocol/groups': ['m']}}) == ['g']",
        ] {
            assert_eq!(eval_bool(expr, &bindings), Ok(true), "{expr}");
        }
    }

    #[test]
    fn a_helper_called_with_the_wrong_count_says_what_it_takes() {
        let e = eval("same_set([1])", &Bindings::default()).expect_err("one argument of two");
        assert!(e.to_string().contains("takes 2 argument(s), got 1"), "{e}");
    }

    #[test]
    fn helpers_see_and_give_json_values_unchanged() {
        let b = b(
            json!({"v": {"i": -3, "u": 18446744073709551615u64, "f": 2.5, "s": "x",
                               "n": null, "l": [true, {"k": []}]}}),
        );
        assert_eq!(
            eval("sorted([v])[0]", &b),
            Ok(b.get("v").cloned().unwrap_or_default())
        );
        assert_eq!(
            eval("keys(v)", &b),
            Ok(json!(["f", "i", "l", "n", "s", "u"]))
        );
    }

    #[test]
    fn errors_are_explained() {
        assert!(matches!(compile("a +"), Err(ExprError::Syntax(_))));
        let empty = Bindings::default();
        assert!(matches!(
            eval_bool("missing.field", &empty),
            Err(ExprError::Eval(_))
        ));
        assert!(matches!(
            eval_bool("1 + 1", &empty),
            Err(ExprError::Type { .. })
        ));
        assert!(matches!(
            eval("same_set(1)", &empty),
            Err(ExprError::Eval(_))
        ));
        assert!(matches!(
            eval("reachable([['a']], 'a')", &empty),
            Err(ExprError::Eval(_))
        ));
    }
}
