//! Walking a paginated list: follow `nextCursor` until it is absent and
//! present the pages as one answer. A walk that goes wrong (a cursor that
//! comes back, no end in sight, a page of the wrong shape) stops where it
//! is and says why beside the answer, so the pages read so far can still be
//! checked.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::{Session, SessionError};

/// How to walk one list.
#[derive(Debug, Clone, Copy)]
pub struct PageWalk<'a> {
    /// The array of `result` the pages are made of (`tools`, `prompts`…).
    pub field: &'a str,
    /// The walk stops (and says so) after this many pages.
    pub max_pages: usize,
    /// How long each page may take.
    pub timeout: Duration,
    /// Add the stateless era's `_meta` to each request.
    pub meta: bool,
}

/// Why a walk stopped before the server said it was done.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PaginationError {
    #[error("pagination of {method} does not terminate: cursor {cursor:?} came back after {pages} pages")]
    CursorRepeated {
        method: String,
        cursor: String,
        pages: usize,
    },
    #[error("pagination of {method} did not end within {max_pages} pages")]
    TooManyPages { method: String, max_pages: usize },
    #[error("page {page} of {method} has no array result.{field}")]
    NotAList {
        method: String,
        page: usize,
        field: String,
    },
    #[error("nextCursor of {method} is not a string: {cursor}")]
    CursorNotAString { method: String, cursor: Value },
}

/// A walk's pages as one answer: the last page's envelope with every page's
/// items under `result.<field>` and no `nextCursor`, plus `page_count` and
/// the raw `pages`; and why the walk stopped early, if it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Walked {
    pub answer: Value,
    pub broken: Option<PaginationError>,
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
        let base = match params {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let mut items = Vec::new();
        let mut pages: Vec<Value> = Vec::new();
        let mut seen_cursors: Vec<String> = Vec::new();
        let mut cursor: Option<String> = None;
        let broken = loop {
            let mut p = base.clone();
            if let Some(c) = &cursor {
                p.insert("cursor".into(), json!(c));
            }
            let answer = self
                .request_with(
                    method,
                    Some(Value::Object(p)),
                    None,
                    Some(walk.timeout),
                    walk.meta,
                )
                .await?;
            let next = next_page(&answer, method, walk.field, pages.len() + 1, &mut items);
            pages.push(answer);
            match next {
                Ok(None) => break None,
                Ok(Some(next)) if seen_cursors.contains(&next) => {
                    break Some(PaginationError::CursorRepeated {
                        method: method.to_string(),
                        cursor: next,
                        pages: pages.len(),
                    })
                }
                Ok(Some(_)) if pages.len() >= walk.max_pages => {
                    break Some(PaginationError::TooManyPages {
                        method: method.to_string(),
                        max_pages: walk.max_pages,
                    })
                }
                Ok(Some(next)) => {
                    seen_cursors.push(next.clone());
                    cursor = Some(next);
                }
                Err(why) => break Some(why),
            }
        };
        Ok(Walked {
            answer: joined(pages, items, walk.field),
            broken,
        })
    }
}

/// Adds one page's `result.<field>` to `items`; gives its `nextCursor`
/// (`None` on the last page, or on an error answer, which ends the walk),
/// or why the page breaks the shape.
fn next_page(
    answer: &Value,
    method: &str,
    field: &str,
    number: usize,
    items: &mut Vec<Value>,
) -> Result<Option<String>, PaginationError> {
    let Some(result) = answer.get("result") else {
        return Ok(None);
    };
    let Some(page) = result.get(field).and_then(Value::as_array) else {
        return Err(PaginationError::NotAList {
            method: method.to_string(),
            page: number,
            field: field.to_string(),
        });
    };
    items.extend(page.iter().cloned());
    match result.get("nextCursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(next)) => Ok(Some(next.clone())),
        Some(other) => Err(PaginationError::CursorNotAString {
            method: method.to_string(),
            cursor: other.clone(),
        }),
    }
}

/// The pages as one answer (see [`Walked`]); an error answer stays as it came.
fn joined(pages: Vec<Value>, items: Vec<Value>, field: &str) -> Value {
    let last = pages.last();
    let mut out = match last.and_then(|l| l.get("result")) {
        Some(result) => {
            let mut result = result.clone();
            if let Some(map) = result.as_object_mut() {
                map.insert(field.to_string(), Value::Array(items));
                map.remove("nextCursor");
            }
            let id = last.and_then(|l| l.get("id")).cloned();
            json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null), "result": result})
        }
        None => last.cloned().unwrap_or(Value::Null),
    };
    if let Some(map) = out.as_object_mut() {
        map.insert("page_count".into(), json!(pages.len()));
        map.insert("pages".into(), Value::Array(pages));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{in_process, Config, Fault};
    use crate::session::{Connection, Era, Transcript};
    use crate::transport::PipeConnection;

    /// A session with a fresh in-process reference server, after its handshake.
    async fn session(faults: &[Fault]) -> Session {
        let config = Config {
            faults: faults.iter().copied().collect(),
            ..Config::default()
        };
        let (input, output) = in_process::spawn(config);
        let conn = Connection::Pipe(Box::new(PipeConnection::new(input, output)));
        let timeout = Duration::from_secs(5);
        let mut s = Session::new(
            "main",
            conn,
            Era::new("2025-11-25"),
            timeout,
            Transcript::new(),
        );
        s.handshake()
            .await
            .expect("the reference server answers its handshake");
        s
    }

    fn walk(field: &str, max_pages: usize) -> PageWalk<'_> {
        PageWalk {
            field,
            max_pages,
            timeout: Duration::from_secs(5),
            meta: true,
        }
    }

    #[tokio::test]
    async fn joins_every_page_into_one_answer() {
        let mut s = session(&[]).await;
        let walked = s.paginate("tools/list", None, walk("tools", 50)).await;
        let Walked { answer, broken } = walked.expect("answered");
        assert_eq!(broken, None);
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
    async fn a_cursor_that_comes_back_ends_the_walk() {
        let mut s = session(&[Fault::GroupingCursorIgnored]).await;
        let walked = s.paginate("groups/list", None, walk("groups", 50)).await;
        let Walked { answer, broken } = walked.expect("answered");
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

    #[tokio::test]
    async fn stops_after_the_most_pages_allowed() {
        let mut s = session(&[]).await;
        let walked = s.paginate("tools/list", None, walk("tools", 2)).await;
        let broken = walked.expect("answered").broken;
        assert_eq!(
            broken.map(|b| b.to_string()).as_deref(),
            Some("pagination of tools/list did not end within 2 pages")
        );
    }

    #[tokio::test]
    async fn an_error_answer_is_the_last_page() {
        let mut s = session(&[]).await;
        let params = json!({"cursor": "not a cursor this server gave"});
        let walked = s
            .paginate("tools/list", Some(params), walk("tools", 50))
            .await;
        let Walked { answer, broken } = walked.expect("answered");
        assert_eq!(broken, None);
        assert_eq!(answer["error"]["code"], json!(-32602));
        assert_eq!(answer["page_count"], json!(1));
    }

    #[test]
    fn a_page_of_the_wrong_shape_says_what_is_wrong() {
        let mut items = Vec::new();
        let no_list = json!({"result": {"tools": "none"}});
        assert_eq!(
            next_page(&no_list, "tools/list", "tools", 2, &mut items).map_err(|e| e.to_string()),
            Err("page 2 of tools/list has no array result.tools".to_string())
        );
        let number_cursor = json!({"result": {"tools": [1], "nextCursor": 7}});
        assert_eq!(
            next_page(&number_cursor, "tools/list", "tools", 1, &mut items)
                .map_err(|e| e.to_string()),
            Err("nextCursor of tools/list is not a string: 7".to_string())
        );
        let last = json!({"result": {"tools": [2], "nextCursor": null}});
        assert_eq!(
            next_page(&last, "tools/list", "tools", 3, &mut items),
            Ok(None)
        );
        assert_eq!(items, vec![json!(1), json!(2)]);
    }
}
