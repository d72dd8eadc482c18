//! Decoding a long answer cut down, as it is parsed, to what a walk keeps of
//! it.
//!
//! A page of a 10,000-tool listing is hundreds of kilobytes, and most walks
//! read a few fields of each tool. Parsing a page whole built every schema
//! and annotation as a JSON value only for the walk to cut it away at once
//! (`prune`); that parsing was the largest single cost of a large catalog's
//! run. Here what is not read is skipped by the parser (still checked to be
//! JSON), so the value is never built. The result is what parsing the whole
//! line and then pruning it gives (see the tests): only the answer's
//! `result` is cut; the envelope, an error answer and anything that is not
//! an answer come whole.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::jsonrpc::DecodeError;
use crate::scenario::expr_reads::ReadTree;

/// What an awaited walk keeps of each page's `result`.
#[derive(Debug, Clone)]
pub struct PageRead {
    /// The array of `result` the pages are made of (`tools`, `prompts`…).
    pub field: String,
    /// What is kept of `result`: at least `nextCursor` and each item's
    /// `name` and `uri`, by which the walk tells items apart.
    pub result: ReadTree,
}

impl PageRead {
    /// The read of a page of `field` whose result is read as `result`.
    pub fn new(field: &str, mut result: ReadTree) -> PageRead {
        let keys = ReadTree::whole_fields(&["name", "uri"]);
        result
            .merge(ReadTree::default().with_field(field, ReadTree::default().with_each_item(keys)));
        result.merge(ReadTree::whole_fields(&["nextCursor"]));
        PageRead {
            field: field.to_string(),
            result,
        }
    }

    /// Decodes a line as JSON, with `result` cut down. A page with an item
    /// that has neither a string `name` nor a string `uri` is decoded whole:
    /// the walk tells such items apart by all they hold.
    pub fn decode(&self, line: &[u8]) -> Result<Value, DecodeError> {
        let text =
            std::str::from_utf8(line).map_err(|e| DecodeError::InvalidUtf8(e.valid_up_to()))?;
        let mut de = serde_json::Deserializer::from_str(text);
        let value = Envelope(&self.result)
            .deserialize(&mut de)
            .and_then(|v| de.end().map(|()| v))
            .map_err(|e| DecodeError::NotJson(e.to_string()))?;
        if self.has_keyless_item(&value) {
            return serde_json::from_str(text).map_err(|e| DecodeError::NotJson(e.to_string()));
        }
        Ok(value)
    }

    fn has_keyless_item(&self, value: &Value) -> bool {
        let items = value
            .get("result")
            .and_then(|r| r.get(&self.field))
            .and_then(Value::as_array);
        items.is_some_and(|items| {
            items.iter().any(|item| {
                !["uri", "name"]
                    .iter()
                    .any(|k| item.get(k).is_some_and(Value::is_string))
            })
        })
    }
}

/// The top level: `result` cut down, everything else whole.
struct Envelope<'a>(&'a ReadTree);

impl<'de> DeserializeSeed<'de> for Envelope<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(PrunedVisitor {
            read: &ReadTree::whole(),
            result: Some(self.0),
        })
    }
}

/// A value cut down to `read`, as `cel_value::prune` cuts a parsed one.
struct Pruned<'a>(&'a ReadTree);

impl<'de> DeserializeSeed<'de> for Pruned<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        if self.0.is_whole() {
            return serde::Deserialize::deserialize(de);
        }
        de.deserialize_any(PrunedVisitor {
            read: self.0,
            result: None,
        })
    }
}

struct PrunedVisitor<'a> {
    read: &'a ReadTree,
    /// At the top level: how `result` is read (the rest is whole).
    result: Option<&'a ReadTree>,
}

impl<'de> Visitor<'de> for PrunedVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        if self.read.is_whole() {
            while let Some(v) = seq.next_element::<Value>()? {
                items.push(v);
            }
            return Ok(Value::Array(items));
        }
        match self.read.item_read() {
            Some(item) => {
                while let Some(v) = seq.next_element_seed(Pruned(item))? {
                    items.push(v);
                }
            }
            // No item is read: the list keeps only its presence and type.
            None if self.read.fields().is_empty() => {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
            }
            None => {
                while let Some(v) = seq.next_element::<Value>()? {
                    items.push(v);
                }
            }
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let read = match self.result {
                Some(result) if key == "result" => Some(std::borrow::Cow::Borrowed(result)),
                Some(_) => Some(std::borrow::Cow::Owned(ReadTree::whole())),
                None => self.read.member_read(&key),
            };
            match read {
                Some(read) => {
                    let v = map.next_value_seed(Pruned(read.as_ref()))?;
                    out.insert(key, v);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::scenario::cel_value::prune;

    fn read_of(names: &[&str]) -> ReadTree {
        ReadTree::whole_fields(names)
    }

    /// What the decoder must give: the line parsed whole, its `result` pruned.
    fn parsed_then_pruned(page: &PageRead, text: &str) -> Value {
        let mut v: Value = serde_json::from_str(text).expect("json");
        if let Some(result) = v.get_mut("result") {
            *result = prune(result.take(), &page.result);
        }
        v
    }

    fn tools_result() -> ReadTree {
        ReadTree::default().with_field(
            "tools",
            ReadTree::default().with_each_item(read_of(&["tags", "groups"])),
        )
    }

    #[test]
    fn a_page_is_what_parsing_it_whole_and_pruning_gives() {
        let page = PageRead::new("tools", tools_result());
        let text = json!({
            "jsonrpc": "2.0", "id": 7,
            "result": {
                "tools": [
                    {"name": "a", "description": "x", "tags": ["t"], "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
                    {"uri": "u", "groups": [{"deep": [1, 2.5, null, true]}], "annotations": {"readOnlyHint": true}},
                    {"name": "c", "name": "c2", "tags": []}
                ],
                "nextCursor": "abc",
                "_meta": {"big": [1, 2, 3]},
                "other": [1, 2]
            },
            "extra": {"kept": ["whole"]}
        })
        .to_string();
        let got = page.decode(text.as_bytes()).expect("decodes");
        assert_eq!(got, parsed_then_pruned(&page, &text));
        assert_eq!(
            got["result"]["tools"][0],
            json!({"name": "a", "tags": ["t"]})
        );
        assert_eq!(got["result"]["nextCursor"], "abc");
        assert!(got["result"].get("_meta").is_none());
        assert_eq!(got["extra"], json!({"kept": ["whole"]}));
    }

    #[test]
    fn lists_read_as_a_whole_or_not_at_all_prune_as_before() {
        // `other` has a field read but no item: kept whole, as `prune` keeps it;
        // `none` is only tested for presence: emptied.
        let result = tools_result()
            .with_field("other", read_of(&["x"]))
            .with_field("none", ReadTree::default());
        let page = PageRead::new("tools", result);
        let text = r#"{"id":1,"result":{"tools":[],"other":[{"a":1},2],"none":[1,{"b":[2]}]}}"#;
        let got = page.decode(text.as_bytes()).expect("decodes");
        assert_eq!(got, parsed_then_pruned(&page, text));
        assert_eq!(got["result"]["other"], json!([{"a": 1}, 2]));
        assert_eq!(got["result"]["none"], json!([]));
    }

    #[test]
    fn errors_envelopes_and_keyless_items_come_whole() {
        let page = PageRead::new("tools", tools_result());
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m","data":{"a":[1]}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":{"x":1}}}"#,
            r#"[1,{"result":{"tools":[{"name":"n","secret":1}]}}]"#,
            // An item with no string name or uri: the walk needs all of it.
            r#"{"id":1,"result":{"tools":[{"name":"n","d":1},{"name":5,"d":2}]}}"#,
        ] {
            let whole: Value = serde_json::from_str(text).expect("json");
            assert_eq!(
                page.decode(text.as_bytes()).expect("decodes"),
                whole,
                "{text}"
            );
        }
    }

    #[test]
    fn what_is_skipped_must_still_be_json() {
        let page = PageRead::new("tools", tools_result());
        for bad in [
            r#"{"id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":}}]}}"#,
            r#"{"id":1,"result":{"tools":[],"_meta":[1,]}}"#,
            r#"{"id":1,"result":{"tools":[]}} trailing"#,
        ] {
            assert!(
                matches!(page.decode(bad.as_bytes()), Err(DecodeError::NotJson(_))),
                "{bad}"
            );
        }
        let not_utf8 = b"{\"id\":1,\"result\":{\"x\":\"\xff\"}}";
        assert_eq!(page.decode(not_utf8), crate::jsonrpc::decode_line(not_utf8));
        assert!(matches!(
            page.decode(not_utf8),
            Err(DecodeError::InvalidUtf8(_))
        ));
    }
}
