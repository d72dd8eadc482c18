//! The helpers and the engine they run in, through the scenarios' language.

use serde_json::{json, Value};

use super::profile::sample_indices;
use super::{compile, eval, eval_bool};
use crate::expr::{Bindings, ExprError};
use crate::schema::Schemas;

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

fn b(v: Value) -> Bindings {
    Bindings::from(v.as_object().cloned().unwrap_or_default())
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
    let bindings =
        b(json!({"all": {"result": {"tools": [{"name": "a", "groups": ["g"]}, {"name": "b"}]}}}));
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

/// The walker trusts a declaration for one read per argument.
#[test]
fn every_declared_read_gives_one_read_per_argument() {
    for helper in super::PROFILE.iter().copied().flatten() {
        if let Some(reads) = helper.reads {
            let unknown = vec![None; helper.arity];
            let literal = vec![Some("a.b"); helper.arity];
            assert_eq!(reads(&unknown).len(), helper.arity, "{}", helper.name);
            assert_eq!(reads(&literal).len(), helper.arity, "{}", helper.name);
        }
    }
}
