//! Category search (seed 001): the `tool_search`, `list_categories` and
//! `get_tools_by_category` tools, reached through `tools/call`.

use super::minimal_schema;
use super::Ctx;
use crate::catalog_file::Tool;
use crate::live::Snapshot;
use crate::server::Layer;
use serde_json::{json, Map, Value};

const DEFAULT_LIMIT: usize = 20;
const MAX_LIMIT: i64 = 100;

/// The tools this module answers.
pub const TOOLS: &[&str] = &["tool_search", "list_categories", "get_tools_by_category"];

/// Runs one of the category tools, or `None` when `tool` is not one of them.
pub fn run(ctx: &Ctx<'_>, tool: &Tool, args: &Map<String, Value>) -> Option<Result<Value, String>> {
    run_on(&ctx.snap, ctx.layer(), &tool.name, args)
}

/// [`run`] without a request context, for the REST endpoints of seed 001,
/// which answer with exactly what the tools put in `structuredContent`.
pub fn run_on(
    snap: &Snapshot,
    layer: &dyn Layer,
    tool: &str,
    args: &Map<String, Value>,
) -> Option<Result<Value, String>> {
    Some(match tool {
        "tool_search" => tool_search(layer, snap, args),
        "list_categories" => {
            let mut answer = list_categories(layer, snap);
            layer.categories(&mut answer);
            Ok(answer)
        }
        "get_tools_by_category" => tools_by_category(snap, args),
        _ => return None,
    })
}

/// The tool as category results show it.
fn summary(tool: &Tool) -> Value {
    json!({
        "name": &*tool.name,
        "description": &*tool.description,
        "inputSchema": minimal_schema(),
        "category": tool.category_id(),
        "tags": tool.tags_json(),
    })
}

pub use crate::index::Scored;

/// Scores one tool against a query, exactly as documented (seed 001):
///
/// Let `q` = lowercase(trim(query)); `words` = `q` split on
/// non-alphanumeric characters (non-empty, deduplicated, order kept);
/// `joined` = `words` joined by `_`; name tokens = lowercase name split on
/// `_`.
///
/// | match | points | matchedOn |
/// |---|---|---|
/// | exact name: `name == q` or `name == joined` | +100 | `name` |
/// | else name contains `q` or `joined` | +50 | `name` |
/// | else partial name: each word equal to a name token | +20 each | `name` |
/// | description contains `q`, or every word is one of its tokens | +30 | `description` |
/// | else at least one word is a description token | +10 | `description` |
/// | each tool tag equal to a word or to `q` | +15 each | `tags (a, b)` |
/// | `q` equals the category id or lowercase category name | +10 | `category` |
///
/// The description is the tool's minimal description, lower-cased and
/// tokenised like the query. "create page" against `page_create` ("Create
/// a new page", tags create/write/new/document) scores 40 + 30 + 15 = 85.
pub fn score(tool: &Tool, category_name: Option<&str>, query: &str) -> Scored {
    ScoreQuery::new(query).score(tool, category_name)
}

/// A query prepared once for scoring every tool of a catalog: its
/// lower-cased text, words and joined form do not depend on the tool.
pub struct ScoreQuery {
    q: String,
    words: Vec<String>,
    joined: String,
}

impl ScoreQuery {
    pub fn new(query: &str) -> Self {
        let q = query.trim().to_lowercase();
        let words = query_words(&q);
        let joined = words.join("_");
        ScoreQuery { q, words, joined }
    }

    /// See [`score`].
    pub fn score(&self, tool: &Tool, category_name: Option<&str>) -> Scored {
        let ScoreQuery { q, words, joined } = self;
        let name = tool.name.to_lowercase();
        let mut score = 0;
        let mut matched_on = Vec::new();

        if name == *q || name == *joined {
            score += 100;
            matched_on.push("name".to_string());
        } else if name.contains(q.as_str())
            || (!joined.is_empty() && name.contains(joined.as_str()))
        {
            score += 50;
            matched_on.push("name".to_string());
        } else {
            let hits = words
                .iter()
                .filter(|w| name.split('_').any(|token| token == w.as_str()))
                .count() as u32;
            if hits > 0 {
                score += 20 * hits;
                matched_on.push("name".to_string());
            }
        }

        let desc = tool.description.to_lowercase();
        let in_desc = description_hits(&desc, words);
        if desc.contains(q.as_str()) || (!words.is_empty() && in_desc.iter().all(|hit| *hit)) {
            score += 30;
            matched_on.push("description".to_string());
        } else if in_desc.iter().any(|hit| *hit) {
            score += 10;
            matched_on.push("description".to_string());
        }

        let tags: Vec<&str> = tool
            .tags
            .iter()
            .map(|t| &**t)
            .filter(|t| {
                let t = t.to_lowercase();
                t == *q || words.contains(&t)
            })
            .collect();
        if !tags.is_empty() {
            score += 15 * tags.len() as u32;
            let list = &tags;
            matched_on.push(format!("tags ({})", list.join(", ")));
        }

        let cat_id = tool.category_id().map(str::to_lowercase);
        let cat_name = category_name.map(str::to_lowercase);
        if cat_id.as_deref() == Some(q.as_str()) || cat_name.as_deref() == Some(q.as_str()) {
            score += 10;
            matched_on.push("category".to_string());
        }
        Scored { score, matched_on }
    }
}

/// For each query word, whether it is one of the description's tokens
/// (split as [`query_words`] splits), found in one pass with no copies.
fn description_hits(desc: &str, words: &[String]) -> Vec<bool> {
    let mut hits = vec![false; words.len()];
    for token in desc.split(|c: char| !c.is_alphanumeric()) {
        if let Some(i) = words.iter().position(|w| w == token) {
            hits[i] = true;
        }
    }
    hits
}

fn query_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// tool_search's `query` (a blank one is none), `category` (a known id)
/// and `tags`.
struct SearchArgs<'a> {
    query: Option<&'a str>,
    category: Option<&'a str>,
    tags: Vec<String>,
}

/// Reads [`SearchArgs`], or says why they are wrong.
fn search_args<'a>(
    snap: &Snapshot,
    args: &'a Map<String, Value>,
) -> Result<SearchArgs<'a>, String> {
    let query = match args.get("query") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()).filter(|s| !s.trim().is_empty()),
        Some(other) => {
            return Err(format!(
                "'query' must be a string, got {}",
                mcp_conform_protocol::jsonrpc::type_name(other)
            ))
        }
    };
    if let Some(q) = query {
        crate::params::check_query_len(q).map_err(|e| e.message)?;
    }
    let category = match args.get("category") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) if snap.catalog.category(c).is_some() => Some(c.as_str()),
        Some(Value::String(c)) => return Err(unknown_category(snap, c)),
        Some(_) => return Err("'category' must be a string (a category id)".into()),
    };
    let tags = match args.get("tags") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(_) => return Err("'tags' must be an array of strings".into()),
    };
    Ok(SearchArgs {
        query,
        category,
        tags,
    })
}

fn tool_search(
    layer: &dyn Layer,
    snap: &Snapshot,
    args: &Map<String, Value>,
) -> Result<Value, String> {
    let SearchArgs {
        query,
        category,
        mut tags,
    } = search_args(snap, args)?;
    layer.category_tags(args, &mut tags);
    let limit = match layer.ignored_limit(args, category) {
        Some(limit) => limit,
        None => parse_limit(args.get("limit"))?,
    };
    let category = layer.category(category, query);

    let prepared = query.map(ScoreQuery::new);
    let mut matches: Vec<(&Tool, Scored)> = Vec::new();
    for tool in snap.tools() {
        let outside =
            |c: &str| tool.category_id() != Some(c) && !layer.category_matches_tag(tool, c);
        if category.is_some_and(outside) {
            continue;
        }
        let any_tag = tags.iter().any(|t| tool.has_tag(t));
        let tag_ok = layer.category_tags_match(tool, &tags, any_tag);
        if !tags.is_empty() && !tag_ok {
            continue;
        }
        let scored = match &prepared {
            Some(q) => q.score(tool, category_name(snap, tool)),
            None => Scored {
                score: 0,
                matched_on: Vec::new(),
            },
        };
        if query.is_none() || scored.score > 0 {
            matches.push((tool, scored));
        }
    }
    if !layer.skips_ranking(query) {
        matches.sort_by(|a, b| {
            b.1.score
                .cmp(&a.1.score)
                .then_with(|| a.0.name.cmp(&b.0.name))
        });
    }
    let categories = match_counts(snap, &matches);
    let total = matches.len();
    let mut tools: Vec<Value> = layer
        .category_matches(matches)
        .into_iter()
        .take(limit)
        .map(|(t, s)| json!({"tool": summary(t), "score": s.score, "matchedOn": s.matched_on}))
        .collect();
    layer.category_items(&mut tools);
    let total = layer.category_total(total, tools.len());
    // Built by hand: `json!` would deep-copy the arrays through `to_value`.
    let mut result = Map::with_capacity(3);
    result.insert("tools".into(), Value::Array(tools));
    result.insert("totalMatches".into(), Value::from(total));
    result.insert("categories".into(), Value::Array(categories));
    Ok(Value::Object(result))
}

fn parse_limit(value: Option<&Value>) -> Result<usize, String> {
    match value {
        None | Some(Value::Null) => Ok(DEFAULT_LIMIT),
        Some(v) => match v.as_i64() {
            Some(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n as usize),
            _ => Err(format!(
                "'limit' must be an integer from 1 to {MAX_LIMIT}, got {v}"
            )),
        },
    }
}

fn category_name<'a>(snap: &'a Snapshot, tool: &Tool) -> Option<&'a str> {
    tool.category_id()
        .and_then(|c| snap.catalog.category(c))
        .map(|c| c.name.as_str())
}

/// Matches per category, over all matches (not just the first `limit`),
/// in catalog category order, omitting categories without a match.
fn match_counts(snap: &Snapshot, matches: &[(&Tool, Scored)]) -> Vec<Value> {
    snap.catalog
        .categories
        .iter()
        .filter_map(|c| {
            let n = matches
                .iter()
                .filter(|(t, _)| t.category_id() == Some(c.id.as_str()))
                .count();
            (n > 0).then(|| json!({"id": c.id, "name": c.name, "matchCount": n}))
        })
        .collect()
}

fn unknown_category(snap: &Snapshot, c: &str) -> String {
    let ids: Vec<&str> = snap
        .catalog
        .categories
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    format!(
        "unknown category '{c}'; known categories: {}",
        ids.join(", ")
    )
}

/// Every category with the number of tools the caller can see in it.
fn list_categories(layer: &dyn Layer, snap: &Snapshot) -> Value {
    let counted = layer.counted_tools(snap, snap.tools().collect());
    let categories: Vec<Value> = snap
        .catalog
        .categories
        .iter()
        .map(|c| {
            let n = counted
                .iter()
                .filter(|t| t.category_id() == Some(c.id.as_str()))
                .count();
            json!({"id": c.id, "name": c.name, "description": c.description, "toolCount": n})
        })
        .collect();
    json!({ "categories": categories })
}

fn tools_by_category(snap: &Snapshot, args: &Map<String, Value>) -> Result<Value, String> {
    let c = match args.get("category") {
        Some(Value::String(c)) => c,
        Some(_) => return Err("'category' must be a string (a category id)".into()),
        None => return Err("missing required argument 'category'".into()),
    };
    if snap.catalog.category(c).is_none() {
        return Err(unknown_category(snap, c));
    }
    let tools: Vec<Value> = snap
        .tools()
        .filter(|t| t.category_id() == Some(c.as_str()))
        .map(summary)
        .collect();
    let mut result = Map::with_capacity(2);
    result.insert("category".into(), Value::String(c.clone()));
    result.insert("tools".into(), Value::Array(tools));
    Ok(Value::Object(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, desc: &str, tags: &[&str], cat: &str) -> Tool {
        serde_json::from_value(json!({
            "name": name, "description": desc, "inputSchema": {"type": "object"},
            "tags": tags, "category": cat
        }))
        .expect("tool")
    }

    #[test]
    fn seed_example_scores_85() {
        let t = tool(
            "page_create",
            "Create a new page",
            &["create", "write", "new", "document"],
            "page",
        );
        let s = score(&t, Some("Page Management"), "create page");
        assert_eq!(s.score, 85);
        assert_eq!(s.matched_on, ["name", "description", "tags (create)"]);
    }

    #[test]
    fn every_row_of_the_table() {
        let t = tool("task_create", "Create a task", &["task", "write"], "task");
        // exact name (+100), description full via substring? "task_create" is not in it,
        // but both words are description tokens (+30), tag "task" (+15).
        let s = score(&t, Some("Task Management"), "task create");
        assert_eq!(
            (s.score, s.matched_on.clone()),
            (
                145,
                vec!["name".into(), "description".into(), "tags (task)".into()]
            )
        );
        // name contains (+50), description contains q (+30), tag (+15), category id (+10).
        let s = score(&t, Some("Task Management"), "task");
        assert_eq!(s.score, 50 + 30 + 15 + 10);
        assert_eq!(
            s.matched_on,
            ["name", "description", "tags (task)", "category"]
        );
        // category name (+10) only, plus partial name on "task" (+20), desc partial (+10), tag (+15).
        let s = score(&t, Some("Task Management"), "task management");
        assert_eq!(s.score, 20 + 10 + 15 + 10);
        // nothing
        assert_eq!(score(&t, None, "zebra").score, 0);
    }
}
