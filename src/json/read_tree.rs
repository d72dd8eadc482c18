//! What is read of a JSON value: the tree of its fields and items an
//! expression, a pattern or a whole scenario can observe. The runner keeps
//! only that much of a long answer ([`super::prune`]), and the expression
//! engine converts only that much of a binding.

use std::collections::BTreeMap;

/// What is read of one value. The empty tree reads nothing but its presence
/// and type (`has(x.f)`, `type(x)`, a loop variable that is never used).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadTree {
    whole: bool,
    fields: BTreeMap<String, ReadTree>,
    items: Option<Box<ReadTree>>,
}

impl ReadTree {
    pub fn whole() -> ReadTree {
        ReadTree {
            whole: true,
            ..ReadTree::default()
        }
    }

    pub fn field(name: &str, read: ReadTree) -> ReadTree {
        ReadTree {
            fields: BTreeMap::from([(name.to_string(), read)]),
            ..ReadTree::default()
        }
    }

    pub fn items(read: ReadTree) -> ReadTree {
        ReadTree {
            items: Some(Box::new(read)),
            ..ReadTree::default()
        }
    }

    /// Reads `item` of each entry of a list, given as the list itself or
    /// as its answer (`result.<field>`).
    pub fn listed(field: &str, item: ReadTree) -> ReadTree {
        let mut read = ReadTree::items(item.clone());
        let list = ReadTree::field(field, ReadTree::items(item));
        read.merge(ReadTree::field("result", list));
        read
    }

    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// Reads these fields of an object whole, and nothing else of it.
    pub fn whole_fields(names: &[&str]) -> ReadTree {
        ReadTree {
            fields: names
                .iter()
                .map(|n| (n.to_string(), ReadTree::whole()))
                .collect(),
            ..ReadTree::default()
        }
    }

    /// This read, and `read` of the field `name` besides.
    pub fn with_field(mut self, name: &str, read: ReadTree) -> ReadTree {
        self.merge(ReadTree::field(name, read));
        self
    }

    /// This read, and `read` of each item of a list besides.
    pub fn with_each_item(mut self, read: ReadTree) -> ReadTree {
        self.merge(ReadTree::items(read));
        self
    }

    /// What is read of field `name` of an object read this way (None: not read).
    pub fn field_read(&self, name: &str) -> Option<ReadTree> {
        if self.whole {
            return Some(ReadTree::whole());
        }
        self.fields.get(name).cloned()
    }

    /// What is read of the member `name` of an object read this way (None:
    /// not read). A read of items on an object is a member read by a key
    /// known only when evaluating (`m[k]`): it reaches every member.
    pub fn member_read(&self, name: &str) -> Option<std::borrow::Cow<'_, ReadTree>> {
        use std::borrow::Cow;
        if self.whole {
            return Some(Cow::Owned(ReadTree::whole()));
        }
        match (self.items.as_deref(), self.fields.get(name)) {
            (None, field) => field.map(Cow::Borrowed),
            (Some(any), None) => Some(Cow::Borrowed(any)),
            (Some(any), Some(field)) => {
                let mut both = any.clone();
                both.merge(field.clone());
                Some(Cow::Owned(both))
            }
        }
    }

    /// What is read of each item of a list read this way (None: no item is
    /// read, the list keeps only its presence and type).
    pub fn each_item(&self) -> Option<ReadTree> {
        if self.whole {
            return Some(ReadTree::whole());
        }
        self.items.as_deref().cloned()
    }

    /// This read and, when the value is a list, what is read of its items:
    /// a `for_each` step's id is bound to each answer, then to their list.
    pub fn with_items_read(&self) -> ReadTree {
        let mut out = self.clone();
        if let Some(items) = self.items.as_deref() {
            out.merge(items.clone());
        }
        out
    }

    /// The fields read of an object.
    pub fn fields(&self) -> &BTreeMap<String, ReadTree> {
        &self.fields
    }

    /// What is read of each item of a list, if the items are read by position
    /// or by iteration.
    pub fn item_read(&self) -> Option<&ReadTree> {
        self.items.as_deref()
    }

    /// The demand on each item of a list whose value has this demand.
    pub fn item_demand(&self) -> ReadTree {
        match &self.items {
            Some(items) if !self.whole => (**items).clone(),
            _ => ReadTree::whole(),
        }
    }

    pub fn merge(&mut self, other: ReadTree) {
        if self.whole {
            return;
        }
        if other.whole {
            *self = ReadTree::whole();
            return;
        }
        for (name, read) in other.fields {
            self.fields.entry(name).or_default().merge(read);
        }
        if let Some(items) = other.items {
            match &mut self.items {
                Some(mine) => mine.merge(*items),
                None => self.items = Some(items),
            }
        }
    }
}
