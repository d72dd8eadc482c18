//! Decoding a page of a walk cut down, as it is parsed, to what the walk
//! keeps of it.
//!
//! A walk of a long list keeps of each item only what the scenario reads
//! (`paginate::Keep`), often a name and a field or two of each tool. Parsing
//! each page whole built every description, schema and annotation as a JSON
//! value only for the walk to drop it at once. Here what is not kept is
//! skipped by the parser (still checked to be JSON), so it is never built.
//! The result is what parsing the whole line and cutting its items down
//! gives (see the tests): only the items of `result.<field>` are cut; the
//! envelope, the rest of the result, an error answer and anything that is
//! not an answer come whole.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::json::ReadTree;
use crate::jsonrpc::compact::{self, array_of, json_scalars, object_of, Compact};
use crate::jsonrpc::DecodeError;

/// What an awaited walk keeps of each page: each item of `result.<field>`
/// cut down to `item`; the rest of the page as it came, as the walk keeps
/// it.
#[derive(Debug, Clone)]
pub struct PageRead {
    /// The array of `result` the pages are made of (`tools`, `prompts`…).
    pub field: String,
    /// What is kept of each item: at least its `name` and `uri`, by which
    /// the walk tells items apart.
    pub item: ReadTree,
}

impl PageRead {
    /// The read of a page of `field` whose items are read as `item`.
    pub fn new(field: &str, mut item: ReadTree) -> PageRead {
        item.merge(ReadTree::whole_fields(&["name", "uri"]));
        PageRead {
            field: field.to_string(),
            item,
        }
    }

    /// Decodes a line as JSON, with the items of `result.<field>` cut down.
    /// A page with an item that has neither a string `name` nor a string
    /// `uri` is decoded whole: the walk tells such items apart by all they
    /// hold.
    pub fn decode(&self, line: &[u8]) -> Result<Value, DecodeError> {
        let text =
            std::str::from_utf8(line).map_err(|e| DecodeError::InvalidUtf8(e.valid_up_to()))?;
        let mut de = serde_json::Deserializer::from_str(text);
        let value = Envelope(self)
            .deserialize(&mut de)
            .and_then(|v| de.end().map(|()| v))
            .map_err(|e| DecodeError::NotJson(e.to_string()))?;
        if self.has_keyless_item(&value) {
            return compact::from_str(text).map_err(|e| DecodeError::NotJson(e.to_string()));
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

/// The top level, and `result` in it: the items of `result.<field>` cut
/// down, everything else whole.
struct Envelope<'a>(&'a PageRead);

impl<'de> DeserializeSeed<'de> for Envelope<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(WholeBut {
            member: Some("result"),
            within: Within::Result(self.0),
        })
    }
}

/// What is cut within the one member a [`WholeBut`] does not keep whole.
#[derive(Clone, Copy)]
enum Within<'a> {
    /// `result`: its `field` holds the items.
    Result(&'a PageRead),
    /// The list of items: each cut down to this.
    Items(&'a ReadTree),
}

impl<'de> DeserializeSeed<'de> for Within<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        match self {
            Within::Result(page) => de.deserialize_any(WholeBut {
                member: Some(&page.field),
                within: Within::Items(&page.item),
            }),
            Within::Items(_) => de.deserialize_any(WholeBut {
                member: None,
                within: self,
            }),
        }
    }
}

/// A value kept whole but for one member of an object (`member`, cut as
/// `within` says), or, with no member, the items of an array.
struct WholeBut<'a> {
    member: Option<&'a str>,
    within: Within<'a>,
}

impl<'de> Visitor<'de> for WholeBut<'_> {
    type Value = Value;

    json_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        match (self.member, self.within) {
            (None, Within::Items(item)) => items_of(seq, Some(item)),
            _ => items_of(seq, None),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        object_of(|members| {
            while let Some(key) = map.next_key::<String>()? {
                let v = if self.member == Some(key.as_str()) {
                    map.next_value_seed(self.within)?
                } else {
                    map.next_value_seed(Compact)?
                };
                members.push((key, v));
            }
            Ok(())
        })
    }
}

/// The items of an array, each cut down to `item` (None: whole).
fn items_of<'de, A: SeqAccess<'de>>(
    mut seq: A,
    item: Option<&ReadTree>,
) -> Result<Value, A::Error> {
    array_of(|items| {
        match item {
            Some(item) => {
                while let Some(v) = seq.next_element_seed(Pruned(item))? {
                    items.push(v);
                }
            }
            None => {
                while let Some(v) = seq.next_element_seed(Compact)? {
                    items.push(v);
                }
            }
        }
        Ok(())
    })
}

/// A value cut down to `read`, as `crate::json::prune` cuts a parsed one.
struct Pruned<'a>(&'a ReadTree);

impl<'de> DeserializeSeed<'de> for Pruned<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        if self.0.is_whole() {
            return Compact.deserialize(de);
        }
        de.deserialize_any(PrunedVisitor(self.0))
    }
}

struct PrunedVisitor<'a>(&'a ReadTree);

impl<'de> Visitor<'de> for PrunedVisitor<'_> {
    type Value = Value;

    json_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        match self.0.item_read() {
            // No item is read: the list keeps only its presence and type.
            None if self.0.fields().is_empty() => {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Value::Array(Vec::new()))
            }
            item => items_of(seq, item),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        object_of(|members| {
            while let Some(key) = map.next_key::<String>()? {
                match self.0.member_read(&key) {
                    Some(read) => {
                        let v = map.next_value_seed(Pruned(read.as_ref()))?;
                        members.push((key, v));
                    }
                    None => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::json::prune;

    fn read_of(names: &[&str]) -> ReadTree {
        ReadTree::whole_fields(names)
    }

    /// What the decoder must give: the line parsed whole, the items of its
    /// `result.<field>` pruned, as the walk prunes them.
    fn parsed_then_pruned(page: &PageRead, text: &str) -> Value {
        let mut v: Value = serde_json::from_str(text).expect("json");
        if let Some(Value::Array(items)) = v.pointer_mut(&format!("/result/{}", page.field)) {
            for item in items.iter_mut() {
                *item = prune(item.take(), &page.item);
            }
        }
        v
    }

    fn tags_and_groups() -> PageRead {
        PageRead::new("tools", read_of(&["tags", "groups"]))
    }

    #[test]
    fn a_page_is_what_parsing_it_whole_and_pruning_gives() {
        let page = tags_and_groups();
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
        assert_eq!(
            got["result"]["tools"][1],
            json!({"uri": "u", "groups": [{"deep": [1, 2.5, null, true]}]})
        );
        assert_eq!(got["result"]["nextCursor"], "abc");
        assert_eq!(
            got["result"]["_meta"],
            json!({"big": [1, 2, 3]}),
            "the rest of the result is whole"
        );
        assert_eq!(got["extra"], json!({"kept": ["whole"]}));
    }

    #[test]
    fn lists_in_items_read_as_a_whole_or_not_at_all_prune_as_before() {
        // `other` has a field read but no item: kept whole, as `prune` keeps it;
        // `none` is only tested for presence: emptied.
        let item = read_of(&["tags"])
            .with_field("other", read_of(&["x"]))
            .with_field("none", ReadTree::default());
        let page = PageRead::new("tools", item);
        let text = r#"{"id":1,"result":{"tools":[{"name":"a","other":[{"a":1},2],"none":[1,{"b":[2]}],"d":"x"}]}}"#;
        let got = page.decode(text.as_bytes()).expect("decodes");
        assert_eq!(got, parsed_then_pruned(&page, text));
        assert_eq!(
            got["result"]["tools"][0],
            json!({"name": "a", "other": [{"a": 1}, 2], "none": []})
        );
    }

    #[test]
    fn a_field_that_is_not_a_list_comes_whole() {
        let page = tags_and_groups();
        let text = r#"{"id":1,"result":{"tools":{"a":{"name":"a","d":1}},"nextCursor":"c"}}"#;
        let whole: Value = serde_json::from_str(text).expect("json");
        assert_eq!(page.decode(text.as_bytes()).expect("decodes"), whole);
    }

    #[test]
    fn errors_envelopes_and_keyless_items_come_whole() {
        let page = tags_and_groups();
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
        let page = tags_and_groups();
        for bad in [
            r#"{"id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":}}]}}"#,
            r#"{"id":1,"result":{"tools":[{"name":"a","_meta":[1,]}]}}"#,
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
