//! An in-memory backend so that `tools/call` results are real: what a
//! `*_create` tool creates, `*_get`, `*_list`, `*_update` and `*_delete`
//! see. A tool's behaviour is read from its name: one token is the verb
//! (`create`, `get`, `update`, …) and the entity is the token after the verb
//! (`project_create_page` → page) or else the first token (`page_create`).
//! Tools whose verb is not recognised answer with an acknowledgement that
//! echoes their validated arguments.

use crate::catalog_file::Tool;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Create,
    Get,
    Update,
    Delete,
    List,
    Search,
}

fn verb(token: &str) -> Option<Verb> {
    Some(match token {
        "create" | "add" | "new" | "invite" | "upload" | "post" | "start" => Verb::Create,
        "get" | "read" | "fetch" | "view" | "show" | "describe" => Verb::Get,
        "update" | "edit" | "rename" | "set" | "assign" | "move" | "complete" | "restore" => {
            Verb::Update
        }
        "delete" | "remove" | "archive" | "trash" | "revoke" => Verb::Delete,
        "list" | "history" => Verb::List,
        "search" | "find" | "query" => Verb::Search,
        _ => return None,
    })
}

/// What a tool name means to the store.
fn parse_name(name: &str) -> Option<(Verb, String)> {
    let tokens: Vec<&str> = name.split('_').filter(|t| !t.is_empty()).collect();
    let (pos, v) = tokens
        .iter()
        .enumerate()
        .find_map(|(i, t)| verb(t).map(|v| (i, v)))?;
    let entity = tokens
        .get(pos + 1)
        .filter(|t| verb(t).is_none())
        .or_else(|| tokens.first().filter(|_| pos > 0))
        .map(|t| singular(t))
        .unwrap_or_else(|| "item".to_string());
    Some((v, entity))
}

fn singular(word: &str) -> String {
    word.strip_suffix('s')
        .filter(|w| w.len() > 2 && !word.ends_with("ss"))
        .unwrap_or(word)
        .to_string()
}

#[derive(Debug, Default)]
pub struct Store {
    entities: BTreeMap<String, BTreeMap<String, Value>>,
    next_id: u64,
}

impl Store {
    /// Runs a tool: `Ok(structured result)` or `Err(message)` for a result
    /// with `isError: true`.
    pub fn execute(&mut self, tool: &Tool, args: &Map<String, Value>) -> Result<Value, String> {
        let Some((verb, entity)) = parse_name(&tool.name) else {
            return Ok(json!({"tool": tool.name, "status": "ok", "arguments": args}));
        };
        match verb {
            Verb::Create => Ok(self.create(&entity, args)),
            Verb::Get => self.get(&entity, args),
            Verb::Update => self.update(&entity, args),
            Verb::Delete => self.delete(&entity, args),
            Verb::List => Ok(self.list(&entity, args, None)),
            Verb::Search => {
                let q = args
                    .get("query")
                    .and_then(Value::as_str)
                    .map(str::to_lowercase);
                Ok(self.list(&entity, args, q.as_deref()))
            }
        }
    }

    fn create(&mut self, entity: &str, args: &Map<String, Value>) -> Value {
        self.next_id += 1;
        let id = format!("{entity}_{}", self.next_id);
        let mut record = args.clone();
        record.insert("id".into(), json!(id));
        record.insert("version".into(), json!(1));
        let record = Value::Object(record);
        self.entities
            .entry(entity.to_string())
            .or_default()
            .insert(id, record.clone());
        json!({ entity: record })
    }

    fn id_of<'a>(entity: &str, args: &'a Map<String, Value>) -> Result<&'a str, String> {
        args.get(&format!("{entity}_id"))
            .or_else(|| args.get("id"))
            .and_then(Value::as_str)
            .ok_or_else(|| format!("an id is required: pass '{entity}_id'"))
    }

    fn get(&self, entity: &str, args: &Map<String, Value>) -> Result<Value, String> {
        let id = Self::id_of(entity, args)?;
        self.entities
            .get(entity)
            .and_then(|m| m.get(id))
            .map(|r| json!({ entity: r }))
            .ok_or_else(|| not_found(entity, id))
    }

    fn update(&mut self, entity: &str, args: &Map<String, Value>) -> Result<Value, String> {
        let id = Self::id_of(entity, args)?.to_string();
        let record = self
            .entities
            .get_mut(entity)
            .and_then(|m| m.get_mut(&id))
            .and_then(Value::as_object_mut)
            .ok_or_else(|| not_found(entity, &id))?;
        let id_key = format!("{entity}_id");
        for (k, v) in args {
            if k != "id" && *k != id_key {
                record.insert(k.clone(), v.clone());
            }
        }
        let version = record.get("version").and_then(Value::as_u64).unwrap_or(0) + 1;
        record.insert("version".into(), json!(version));
        Ok(json!({ entity: Value::Object(record.clone()) }))
    }

    fn delete(&mut self, entity: &str, args: &Map<String, Value>) -> Result<Value, String> {
        let id = Self::id_of(entity, args)?;
        self.entities
            .get_mut(entity)
            .and_then(|m| m.remove(id))
            .map(|_| json!({"deleted": true, "id": id}))
            .ok_or_else(|| not_found(entity, id))
    }

    /// Records of an entity whose fields equal every string argument that
    /// names one of their fields (e.g. `space_id`, `status`), optionally
    /// containing `query`, capped by an integer `limit`.
    fn list(&self, entity: &str, args: &Map<String, Value>, query: Option<&str>) -> Value {
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .unwrap_or(u64::MAX);
        let items: Vec<&Value> = self
            .entities
            .get(entity)
            .into_iter()
            .flat_map(|m| m.values())
            .filter(|r| {
                args.iter().all(|(k, v)| match r.get(k) {
                    Some(field) if k != "limit" && k != "query" => field == v,
                    _ => true,
                })
            })
            .filter(|r| query.is_none_or(|q| r.to_string().to_lowercase().contains(q)))
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .collect();
        json!({ "items": items, "count": items.len() })
    }
}

fn not_found(entity: &str, id: &str) -> String {
    format!("NOT_FOUND: no {entity} with id '{id}'")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        serde_json::from_value(
            json!({"name": name, "description": "d", "inputSchema": {"type": "object"}}),
        )
        .expect("tool")
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("object")
    }

    #[test]
    fn names_map_to_verbs_and_entities() {
        assert_eq!(
            parse_name("page_create"),
            Some((Verb::Create, "page".into()))
        );
        assert_eq!(
            parse_name("project_create_page"),
            Some((Verb::Create, "page".into()))
        );
        assert_eq!(parse_name("list_tasks"), Some((Verb::List, "task".into())));
        assert_eq!(parse_name("ai_generate"), None);
    }

    #[test]
    fn crud_round_trip() {
        let mut s = Store::default();
        let created = s
            .execute(
                &tool("page_create"),
                &args(json!({"title": "Roadmap", "space_id": "s1"})),
            )
            .expect("create");
        let id = created["page"]["id"].as_str().expect("id").to_string();
        let got = s
            .execute(&tool("page_get"), &args(json!({"page_id": id})))
            .expect("get");
        assert_eq!(got["page"]["title"], "Roadmap");
        let upd = s
            .execute(
                &tool("page_update"),
                &args(json!({"page_id": id, "title": "R2"})),
            )
            .expect("update");
        assert_eq!(upd["page"]["version"], 2);
        let listed = s
            .execute(&tool("page_list"), &args(json!({"space_id": "s1"})))
            .expect("list");
        assert_eq!(listed["count"], 1);
        let found = s
            .execute(&tool("page_search"), &args(json!({"query": "r2"})))
            .expect("search");
        assert_eq!(found["count"], 1);
        s.execute(&tool("page_delete"), &args(json!({"page_id": id})))
            .expect("delete");
        let err = s
            .execute(&tool("page_get"), &args(json!({"page_id": id})))
            .expect_err("gone");
        assert!(err.contains("NOT_FOUND"));
        let echo = s
            .execute(&tool("ai_generate"), &args(json!({"prompt": "x"})))
            .expect("echo");
        assert_eq!(echo["arguments"]["prompt"], "x");
    }
}
