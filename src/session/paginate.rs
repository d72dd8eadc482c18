//! Walking a paginated list: follow `nextCursor` until it is absent and
//! present the pages as one answer. A walk that goes wrong (a cursor that
//! comes back, pages that add nothing new, a page of the wrong shape) stops
//! where it is and says why beside the answer, so the pages read so far can
//! still be checked. No fixed page count ends a walk: a correct server of
//! any size is walked to its end, unless the walk outgrows what the server
//! said it has or its time budget; that walk is unfinished, which says
//! nothing against the server.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::pruned_decode::PageRead;
use super::{Session, SessionError};
use crate::json::ReadTree;
use crate::json::{prune, pruned_copy};

/// Pages in a row that may add no new item (empty pages with a cursor)
/// before the walk counts as going nowhere.
const MAX_IDLE_PAGES: usize = 3;

/// How to walk one list.
#[derive(Debug, Clone, Copy)]
pub struct PageWalk<'a> {
    /// The array of `result` the pages are made of (`tools`, `prompts`…).
    pub field: &'a str,
    /// The scenario's own cap on pages (`max_pages:`), if it set one.
    pub max_pages: Option<usize>,
    /// How many items the list has, when the server said so (the probe's
    /// listing): each page adds at least one new item, so a walk of more
    /// pages than that (and a margin for empty pages) is not this list's.
    pub known_items: Option<usize>,
    /// How long the whole walk may take.
    pub budget: Duration,
    /// How long each page may take.
    pub timeout: Duration,
    /// Add the stateless era's `_meta` to each request.
    pub meta: bool,
    /// What the scenario reads of the joined answer, if it says: each page
    /// is cut down to that as it comes (see [`prune`]), so a walk of a long
    /// list holds only what will be read, once. None keeps everything.
    pub keep: Option<&'a ReadTree>,
}

impl PageWalk<'_> {
    /// The most pages this walk reads before it stops unfinished.
    fn page_limit(&self) -> Option<usize> {
        let derived = self.known_items.map(|n| 2 * n + 2 * MAX_IDLE_PAGES + 1);
        match (self.max_pages, derived) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Why a walk stopped before the server said it was done: a server that
/// breaks pagination.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PaginationError {
    #[error("pagination of {method} does not terminate: cursor {cursor:?} came back after {pages} pages")]
    CursorRepeated {
        method: String,
        cursor: String,
        pages: usize,
    },
    #[error("pagination of {method} does not terminate: page {pages} adds no item the walk had not seen, yet gives a new nextCursor ({idle} such pages in a row)")]
    NoProgress {
        method: String,
        pages: usize,
        idle: usize,
    },
    #[error("page {page} of {method} has no array result.{field}")]
    NotAList {
        method: String,
        page: usize,
        field: String,
    },
    #[error("nextCursor of {method} is not a string: {cursor}")]
    CursorNotAString { method: String, cursor: Value },
}

/// A walk the harness stopped although the server was still paging
/// correctly: too long to test here, not a fault of the server.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("not exercised: the walk of {method} was stopped after {pages} pages ({items} items, {ms} ms) before its end: {limit}")]
pub struct Unfinished {
    pub method: String,
    pub pages: usize,
    pub items: usize,
    pub ms: u128,
    pub limit: String,
}

/// A walk's pages as one answer: the last page's envelope with every page's
/// items under `result.<field>` and no `nextCursor`, plus `page_count` and
/// the raw `pages`; why the walk stopped early, if the server broke it; or
/// that the harness stopped it.
#[derive(Debug, Clone, PartialEq)]
pub struct Walked {
    pub answer: Value,
    pub broken: Option<PaginationError>,
    pub unfinished: Option<Unfinished>,
}

/// Why a walk ended, other than its last page.
enum End {
    Broken(PaginationError),
    Unfinished(String),
}

/// What a walk has seen so far: cursors, items (by a hash of each), and how
/// many pages in a row added nothing.
#[derive(Default)]
struct Progress {
    cursors: HashSet<String>,
    items: HashSet<u64>,
    idle: usize,
}

impl Progress {
    /// Takes a page's items and its next cursor: an error when the walk
    /// goes in circles.
    fn page(
        &mut self,
        method: &str,
        pages: usize,
        page: &[Value],
        next: &str,
    ) -> Result<(), PaginationError> {
        if !self.cursors.insert(next.to_string()) {
            return Err(PaginationError::CursorRepeated {
                method: method.to_string(),
                cursor: next.to_string(),
                pages,
            });
        }
        let mut fresh = false;
        for item in page {
            fresh |= self.items.insert(item_key(item));
        }
        self.idle = if fresh { 0 } else { self.idle + 1 };
        // A non-empty page of items seen before goes in circles at once;
        // empty pages are let through a few times.
        if self.idle > 0 && (!page.is_empty() || self.idle >= MAX_IDLE_PAGES) {
            return Err(PaginationError::NoProgress {
                method: method.to_string(),
                pages,
                idle: self.idle,
            });
        }
        Ok(())
    }
}

/// An item's identity for "seen before": its name or URI, else its text.
fn item_key(item: &Value) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    match ["uri", "name"].iter().find_map(|k| item.get(k)?.as_str()) {
        Some(key) => key.hash(&mut h),
        None => item.to_string().hash(&mut h),
    }
    h.finish()
}

impl Session {
    /// Requests `method` page by page, each page with the cursor the one
    /// before gave. An error answer ends the walk (it is the last page).
    pub async fn paginate(
        &mut self,
        method: &str,
        params: Option<Value>,
        walk: PageWalk<'_>,
    ) -> Result<Walked, SessionError> {
        let page_read = walk.keep.and_then(|read| page_read(read, walk.field));
        let outer = std::mem::replace(&mut self.page_read, page_read);
        let walked = self.walk_pages(method, params, walk).await;
        self.page_read = outer;
        walked
    }

    async fn walk_pages(
        &mut self,
        method: &str,
        params: Option<Value>,
        walk: PageWalk<'_>,
    ) -> Result<Walked, SessionError> {
        let base = match params {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let started = Instant::now();
        let limit = walk.page_limit();
        let keep = Keep::of(walk.keep, walk.field);
        let mut items = Vec::new();
        let mut pages: Vec<Value> = Vec::new();
        let mut page_count = 0;
        let mut last;
        let mut progress = Progress::default();
        let mut cursor: Option<String> = None;
        let end = loop {
            let mut p = base.clone();
            if let Some(c) = &cursor {
                p.insert("cursor".into(), json!(c));
            }
            let mut answer = self
                .request_with(
                    method,
                    Some(Value::Object(p)),
                    None,
                    Some(walk.timeout),
                    walk.meta,
                )
                .await?;
            page_count += 1;
            if let Some(read) = &keep.pages {
                pages.push(pruned_copy(&answer, read));
            }
            let next = take_page(&mut answer, method, walk.field, page_count);
            last = answer;
            let (page, next) = match next {
                Ok((page, None)) => {
                    keep.extend(&mut items, page);
                    break None;
                }
                Ok((page, Some(next))) => (page, next),
                Err(why) => break Some(End::Broken(why)),
            };
            // Whether the walk goes in circles is judged on the items as
            // they came, before they are cut down.
            let progressed = progress.page(method, page_count, &page, &next);
            keep.extend(&mut items, page);
            if let Err(why) = progressed {
                break Some(End::Broken(why));
            }
            if let Some(why) = over(&walk, limit, page_count, started.elapsed()) {
                break Some(End::Unfinished(why));
            }
            cursor = Some(next);
        };
        let (broken, unfinished) = match end {
            None => (None, None),
            Some(End::Broken(b)) => (Some(b), None),
            Some(End::Unfinished(limit)) => (
                None,
                Some(Unfinished {
                    method: method.to_string(),
                    pages: page_count,
                    items: items.len(),
                    ms: started.elapsed().as_millis(),
                    limit,
                }),
            ),
        };
        let kept_pages = keep.pages.is_some().then_some(pages);
        Ok(Walked {
            answer: joined(last, kept_pages, page_count, items, walk.field),
            broken,
            unfinished,
        })
    }
}

/// What a walk that keeps `read` of its joined answer needs of each item
/// of each page, when that is less than all of it: what `Keep` keeps of the
/// joined list and of the raw pages.
fn page_read(read: &ReadTree, field: &str) -> Option<PageRead> {
    let keep = Keep::of(Some(read), field);
    let mut item = keep.items;
    if let Some(page) = keep.pages {
        let listed = page.field_read("result").and_then(|r| r.field_read(field));
        match listed {
            Some(list) if list.is_whole() => return None,
            Some(list) => item.merge(list.each_item().unwrap_or_default()),
            None => {}
        }
    }
    (!item.is_whole()).then(|| PageRead::new(field, item))
}

/// What a walk keeps of each page and of each item: all of it, unless the
/// scenario said what it reads.
struct Keep {
    /// Each page as it came (`pages`), cut down; None: `pages` is not read.
    pages: Option<ReadTree>,
    /// Each item of the joined list, cut down.
    items: ReadTree,
}

impl Keep {
    fn of(read: Option<&ReadTree>, field: &str) -> Keep {
        let Some(read) = read else {
            return Keep {
                pages: Some(ReadTree::whole()),
                items: ReadTree::whole(),
            };
        };
        let pages = read
            .field_read("pages")
            .map(|p| p.each_item().unwrap_or_default());
        let items = read
            .field_read("result")
            .and_then(|r| r.field_read(field))
            .and_then(|l| l.each_item())
            .unwrap_or_default();
        Keep { pages, items }
    }

    fn extend(&self, items: &mut Vec<Value>, page: Vec<Value>) {
        if self.items.is_whole() {
            items.extend(page);
        } else {
            items.extend(page.into_iter().map(|i| prune(i, &self.items)));
        }
    }
}

/// Why a walk that still has a next page stops here, if it does.
fn over(walk: &PageWalk<'_>, limit: Option<usize>, pages: usize, took: Duration) -> Option<String> {
    if limit.is_some_and(|l| pages >= l) {
        return Some(match (walk.max_pages, walk.known_items) {
            (Some(m), _) if m == pages => format!("the scenario reads at most {m} pages"),
            (_, Some(n)) => format!(
                "{pages} pages is more than a list of {n} items (as the server listed them) can need"
            ),
            _ => format!("{pages} pages"),
        });
    }
    (took >= walk.budget).then(|| {
        format!(
            "the walk's time budget of {} s ran out",
            walk.budget.as_secs_f64()
        )
    })
}

/// Takes one page's `result.<field>` out of the answer, with its
/// `nextCursor` (`None` on the last page, or on an error answer, which ends
/// the walk), or why the page breaks the shape.
fn take_page(
    answer: &mut Value,
    method: &str,
    field: &str,
    number: usize,
) -> Result<(Vec<Value>, Option<String>), PaginationError> {
    let Some(result) = answer.get_mut("result") else {
        return Ok((Vec::new(), None));
    };
    let Some(page) = result.get_mut(field).and_then(Value::as_array_mut) else {
        return Err(PaginationError::NotAList {
            method: method.to_string(),
            page: number,
            field: field.to_string(),
        });
    };
    let page = std::mem::take(page);
    match result.get("nextCursor") {
        None | Some(Value::Null) => Ok((page, None)),
        Some(Value::String(next)) => Ok((page, Some(next.clone()))),
        Some(other) => Err(PaginationError::CursorNotAString {
            method: method.to_string(),
            cursor: other.clone(),
        }),
    }
}

/// The pages as one answer (see [`Walked`]): the last page's envelope with
/// every item under `result.<field>`; an error answer stays as it came.
fn joined(
    last: Value,
    pages: Option<Vec<Value>>,
    page_count: usize,
    items: Vec<Value>,
    field: &str,
) -> Value {
    let mut out = match last.get("result") {
        Some(result) => {
            let mut result = result.clone();
            if let Some(map) = result.as_object_mut() {
                map.insert(field.to_string(), Value::Array(items));
                map.remove("nextCursor");
            }
            let id = last.get("id").cloned().unwrap_or(Value::Null);
            // Built by hand: `json!` would copy `result`, every item of the
            // walk, through serialization.
            let mut envelope = serde_json::Map::with_capacity(5);
            envelope.insert("jsonrpc".into(), Value::from("2.0"));
            envelope.insert("id".into(), id);
            envelope.insert("result".into(), result);
            Value::Object(envelope)
        }
        None => last,
    };
    if let Some(map) = out.as_object_mut() {
        map.insert("page_count".into(), json!(page_count));
        if let Some(pages) = pages {
            map.insert("pages".into(), Value::Array(pages));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{Config, Fault};

    /// A session with a fresh in-process reference server, after its handshake.
    async fn session(faults: &[Fault]) -> Session {
        let config = Config {
            faults: faults.iter().copied().collect(),
            ..Config::default()
        };
        let mut s = crate::session::with_in_process_reference(config, "2025-11-25");
        s.handshake()
            .await
            .expect("the reference server answers its handshake");
        s
    }

    fn walk(field: &str, max_pages: usize) -> PageWalk<'_> {
        PageWalk {
            field,
            max_pages: Some(max_pages),
            known_items: None,
            budget: Duration::from_secs(60),
            timeout: Duration::from_secs(5),
            meta: true,
            keep: None,
        }
    }

    #[tokio::test]
    async fn joins_every_page_into_one_answer() {
        let mut s = session(&[]).await;
        let walked = s.paginate("tools/list", None, walk("tools", 50)).await;
        let Walked {
            answer,
            broken,
            unfinished,
        } = walked.expect("answered");
        assert_eq!((broken, unfinished), (None, None));
        assert_eq!(answer["page_count"], json!(3));
        assert_eq!(
            answer["result"]["tools"].as_array().map(Vec::len),
            Some(106)
        );
        assert!(answer["result"].get("nextCursor").is_none());
        let second_cursor = &answer["pages"][1]["result"]["nextCursor"];
        assert!(second_cursor.is_string(), "the pages stay as they came");
    }

    #[tokio::test]
    async fn a_walk_that_reads_names_decodes_only_them_and_the_transcript_keeps_all() {
        let mut s = session(&[]).await;
        let names = ReadTree::default().with_each_item(ReadTree::whole_fields(&["name"]));
        let read = ReadTree::default()
            .with_field("result", ReadTree::default().with_field("tools", names));
        let pruned = PageWalk {
            keep: Some(&read),
            ..walk("tools", 50)
        };
        let answer = s
            .paginate("tools/list", None, pruned)
            .await
            .expect("answered")
            .answer;
        let tools = answer["result"]["tools"].as_array().expect("tools");
        assert_eq!(tools.len(), 106);
        assert!(tools
            .iter()
            .all(|t| t.as_object().is_some_and(|t| t.len() == 1) && t["name"].is_string()));
        // The walk asked for no other session state: nothing is cut after it.
        assert!(s.page_read.is_none());
        let (entries, _) = s.transcript.entries();
        let pages: Vec<&Value> = entries
            .iter()
            .filter(|e| e.direction == crate::session::transcript::Direction::Received)
            .map(|e| &e.message)
            .filter(|m| m.pointer("/result/tools").is_some())
            .collect();
        assert_eq!(pages.len(), 3, "each page is in the transcript");
        assert!(
            pages
                .iter()
                .all(|p| p["result"]["tools"][0]["inputSchema"].is_object()),
            "as the server sent it"
        );
        // A whole walk afterwards is decoded whole.
        let whole = s
            .paginate("tools/list", None, walk("tools", 50))
            .await
            .expect("answered");
        assert!(whole.answer["result"]["tools"][0]["inputSchema"].is_object());
    }

    #[tokio::test]
    async fn a_cursor_that_comes_back_ends_the_walk() {
        let mut s = session(&[Fault::GroupingCursorIgnored]).await;
        let walked = s.paginate("groups/list", None, walk("groups", 50)).await;
        let Walked { answer, broken, .. } = walked.expect("answered");
        assert!(
            matches!(
                broken,
                Some(PaginationError::CursorRepeated { pages: 2, .. })
            ),
            "{broken:?}"
        );
        assert_eq!(answer["page_count"], json!(2));
        assert_eq!(
            answer["result"]["groups"].as_array().map(Vec::len),
            Some(20)
        );
    }

    #[test]
    fn the_list_size_the_server_gave_bounds_the_walk() {
        let known = PageWalk {
            max_pages: None,
            known_items: Some(10),
            ..walk("tools", 0)
        };
        assert_eq!(known.page_limit(), Some(20 + 2 * MAX_IDLE_PAGES + 1));
        let both = PageWalk {
            max_pages: Some(3),
            ..known
        };
        assert_eq!(both.page_limit(), Some(3));
    }

    #[tokio::test]
    async fn a_walk_past_its_limits_is_unfinished_not_broken() {
        let mut s = session(&[]).await;
        let walked = s.paginate("tools/list", None, walk("tools", 2)).await;
        let walked = walked.expect("answered");
        assert_eq!(walked.broken, None);
        let unfinished = walked.unfinished.expect("stopped after 2 pages");
        assert_eq!((unfinished.pages, unfinished.items), (2, 100));
        assert!(
            unfinished.to_string().starts_with(
                "not exercised: the walk of tools/list was stopped after 2 pages (100 items, "
            ),
            "{unfinished}"
        );
        assert!(unfinished
            .to_string()
            .ends_with("the scenario reads at most 2 pages"));
        // The time budget bounds the walk too (the bound from the list's
        // size is unit-tested on `PageWalk::page_limit`'s arithmetic).
        // …and so does the time budget.
        let budget = PageWalk {
            max_pages: None,
            budget: Duration::ZERO,
            ..walk("tools", 0)
        };
        let walked = s
            .paginate("tools/list", None, budget)
            .await
            .expect("answered");
        let unfinished = walked.unfinished.expect("out of time after page 1");
        assert_eq!(unfinished.pages, 1);
        assert!(unfinished.limit.contains("time budget"), "{unfinished}");
        // A list of the size the server gave is walked to its end.
        let exact = PageWalk {
            max_pages: None,
            known_items: Some(106),
            ..walk("tools", 0)
        };
        let walked = s
            .paginate("tools/list", None, exact)
            .await
            .expect("answered");
        assert_eq!((walked.broken, walked.unfinished), (None, None));
    }

    #[test]
    fn pages_that_add_nothing_new_go_in_circles() {
        let mut p = Progress::default();
        let a = [json!({"name": "a"}), json!({"name": "b"})];
        assert_eq!(p.page("tools/list", 1, &a, "c1"), Ok(()));
        // A page of items already seen: at once.
        let again = [json!({"name": "b"})];
        assert_eq!(
            p.page("tools/list", 2, &again, "c2").map_err(|e| e.to_string()),
            Err("pagination of tools/list does not terminate: page 2 adds no item the walk had not seen, yet gives a new nextCursor (1 such pages in a row)".to_string())
        );
        // Empty pages: a few are let through, not endlessly.
        let mut p = Progress::default();
        assert_eq!(p.page("groups/list", 1, &a, "c1"), Ok(()));
        assert_eq!(p.page("groups/list", 2, &[], "c2"), Ok(()));
        assert_eq!(p.page("groups/list", 3, &[], "c3"), Ok(()));
        assert!(matches!(
            p.page("groups/list", 4, &[], "c4"),
            Err(PaginationError::NoProgress {
                pages: 4,
                idle: 3,
                ..
            })
        ));
        // A new item resets the count; a cursor seen before is caught too.
        let mut p = Progress::default();
        assert_eq!(p.page("t", 1, &[], "c1"), Ok(()));
        assert_eq!(p.page("t", 2, &a, "c2"), Ok(()));
        assert!(matches!(
            p.page("t", 3, &[json!({"uri": "x"})], "c1"),
            Err(PaginationError::CursorRepeated { pages: 3, .. })
        ));
    }

    #[tokio::test]
    async fn an_error_answer_is_the_last_page() {
        let mut s = session(&[]).await;
        let params = json!({"cursor": "not a cursor this server gave"});
        let walked = s
            .paginate("tools/list", Some(params), walk("tools", 50))
            .await;
        let Walked { answer, broken, .. } = walked.expect("answered");
        assert_eq!(broken, None);
        assert_eq!(answer["error"]["code"], json!(-32602));
        assert_eq!(answer["page_count"], json!(1));
    }

    #[test]
    fn a_page_of_the_wrong_shape_says_what_is_wrong() {
        let mut no_list = json!({"result": {"tools": "none"}});
        assert_eq!(
            take_page(&mut no_list, "tools/list", "tools", 2).map_err(|e| e.to_string()),
            Err("page 2 of tools/list has no array result.tools".to_string())
        );
        let mut number_cursor = json!({"result": {"tools": [1], "nextCursor": 7}});
        assert_eq!(
            take_page(&mut number_cursor, "tools/list", "tools", 1).map_err(|e| e.to_string()),
            Err("nextCursor of tools/list is not a string: 7".to_string())
        );
        let mut last = json!({"result": {"tools": [2], "nextCursor": null}});
        assert_eq!(
            take_page(&mut last, "tools/list", "tools", 3),
            Ok((vec![json!(2)], None))
        );
        assert_eq!(
            last["result"]["tools"],
            json!([]),
            "the items are taken out"
        );
    }

    #[tokio::test]
    async fn a_walk_keeps_only_what_is_read_and_pages_only_when_read() {
        let mut s = session(&[]).await;
        let names =
            crate::scenario::helpers::compile("all.result.tools.map(t, t.name)").expect("compiles");
        let read = names.reads().get("all").cloned().expect("reads all");
        let walked = s
            .paginate(
                "tools/list",
                None,
                PageWalk {
                    keep: Some(&read),
                    ..walk("tools", 50)
                },
            )
            .await
            .expect("answered");
        let tools = walked.answer["result"]["tools"].as_array().expect("a list");
        assert_eq!(tools.len(), 106, "every item, cut down");
        assert!(tools
            .iter()
            .all(|t| t.as_object().is_some_and(|o| o.len() == 1)));
        assert!(walked.answer.get("pages").is_none(), "pages are not read");
        assert_eq!(walked.answer["page_count"], json!(3));
    }
}
