//! JSON Schemas of methods (schemars 1.x, draft 2020-12) and their compiled validators.
//!
//! Every method's schema is self-contained: DTOs and enums are `$ref`s into the schema's own
//! `$defs`, recursive ones included. Nullable types are written as `anyOf` with
//! `{"type":"null"}`, never as `type` arrays, which some MCP hosts reject.

use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::record::{MethodDef, ParamKind};

/// A JSON Schema (schemars'), as `#[rpc_method(transform = f)]` functions change it.
pub use schemars::Schema;

/// A schema generator with the framework's settings (2020-12, `$defs`, no `$schema`).
pub fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| s.meta_schema = None)
        .into_generator()
}

/// The `inputSchema` of a method:
/// `{"type":"object","properties":{...},"required":[...],"additionalProperties":false}`.
pub fn input_schema(def: &MethodDef) -> Value {
    let mut g = generator();
    let mut properties = Map::new();
    let mut required = Vec::new();
    for p in def.params {
        let mut s: Value = (p.schema)(&mut g).into();
        normalize(&mut s);
        let Value::Object(obj) = &mut s else {
            // `true`/`false` schemas: keep them as objects so description/default fit.
            properties.insert(p.name.to_owned(), json!({}));
            continue;
        };
        if !p.constraints.is_empty() {
            // Written by the macro from literals: valid JSON by construction.
            if let Ok(Value::Object(c)) = serde_json::from_str::<Value>(p.constraints) {
                obj.extend(c);
            }
        }
        if !p.description.is_empty() {
            obj.insert("description".into(), p.description.into());
        }
        match p.kind {
            ParamKind::Required => required.push(Value::String(p.name.to_owned())),
            ParamKind::Default(default) => {
                obj.insert("default".into(), default());
            }
            ParamKind::Optional => {}
        }
        properties.insert(p.name.to_owned(), s);
    }
    let mut root = Map::new();
    root.insert("type".into(), "object".into());
    if !properties.is_empty() {
        root.insert("properties".into(), Value::Object(properties));
    }
    if !required.is_empty() {
        root.insert("required".into(), Value::Array(required));
    }
    root.insert("additionalProperties".into(), false.into());
    add_defs(&mut root, &mut g);
    match def.transform {
        Some(transform) => {
            let mut schema = Schema::from(root);
            transform(&mut schema);
            schema.into()
        }
        None => Value::Object(root),
    }
}

/// The `outputSchema` of a method: `{"type":"object","properties":{"result":S},"required":["result"]}`,
/// or `None` when it returns `()` or untyped JSON.
pub fn output_schema(def: &MethodDef) -> Option<Value> {
    let mut g = generator();
    let mut result: Value = (def.output_schema)(&mut g)?.into();
    normalize(&mut result);
    let mut root = Map::new();
    root.insert("type".into(), "object".into());
    root.insert("properties".into(), json!({ "result": result }));
    root.insert("required".into(), json!(["result"]));
    add_defs(&mut root, &mut g);
    Some(Value::Object(root))
}

fn add_defs(root: &mut Map<String, Value>, g: &mut SchemaGenerator) {
    let mut defs = g.take_definitions(true);
    if !defs.is_empty() {
        for d in defs.values_mut() {
            normalize(d);
        }
        root.insert("$defs".into(), Value::Object(defs));
    }
}

/// Replaces schemars' non-standard numeric formats (`uint32`, `int64`, `double`, ...), which
/// validators ignore with a warning, by the `minimum`/`maximum` they mean.
fn numeric_bounds(obj: &mut Map<String, Value>) {
    let Some(Value::String(f)) = obj.get("format") else {
        return;
    };
    let (min, max): (Option<Value>, Option<Value>) = match f.as_str() {
        "int8" => (Some(i8::MIN.into()), Some(i8::MAX.into())),
        "uint8" => (Some(0.into()), Some(u8::MAX.into())),
        "int16" => (Some(i16::MIN.into()), Some(i16::MAX.into())),
        "uint16" => (Some(0.into()), Some(u16::MAX.into())),
        "int32" => (Some(i32::MIN.into()), Some(i32::MAX.into())),
        "uint32" => (Some(0.into()), Some(u32::MAX.into())),
        "int64" | "int" => (Some(i64::MIN.into()), Some(i64::MAX.into())),
        "uint64" | "uint" => (Some(0.into()), Some(u64::MAX.into())),
        "uint128" | "int128" | "float" | "double" => (None, None),
        _ => return,
    };
    obj.remove("format");
    for (k, v) in [("minimum", min), ("maximum", max)] {
        if let Some(v) = v {
            obj.entry(k).or_insert(v);
        }
    }
}

/// Annotation keywords stay on the outer schema when a `type` array becomes an `anyOf`.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Makes a schemars schema portable across MCP hosts, everywhere in it: rewrites
/// `{"type":["T","null"], ...}` into `{"anyOf":[{"type":"T", ...},{"type":"null"}]}`, and
/// numeric formats into bounds.
pub fn normalize(schema: &mut Value) {
    match schema {
        Value::Object(obj) => {
            for v in obj.values_mut() {
                normalize(v);
            }
            numeric_bounds(obj);
            let Some(Value::Array(types)) = obj.get("type") else {
                return;
            };
            if !types.iter().any(|t| t == "null") {
                return;
            }
            let mut others: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            let mut inner = Map::new();
            let mut outer = Map::new();
            for (k, v) in std::mem::take(obj) {
                if k == "type" {
                    continue;
                }
                if ANNOTATIONS.contains(&k.as_str()) {
                    outer.insert(k, v);
                } else {
                    inner.insert(k, v);
                }
            }
            let ty = if others.len() == 1 {
                others.remove(0)
            } else {
                Value::Array(others)
            };
            let mut first = Map::new();
            first.insert("type".into(), ty);
            first.extend(inner);
            let mut result = Map::new();
            result.insert(
                "anyOf".into(),
                json!([Value::Object(first), {"type": "null"}]),
            );
            result.extend(outer);
            *obj = result;
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

/// How nullable types are written in tool schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Nullable {
    /// `{"anyOf":[{"type":"T"},{"type":"null"}]}` (default: accepted by every host tried).
    #[default]
    AnyOf,
    /// `{"type":["T","null"]}` (shorter; some hosts reject type arrays).
    TypeArray,
}

/// Rewrites `anyOf: [{type: T, ...}, {type: null}]` back into `type: [T, "null"]` where the
/// first branch is a plain typed schema.
pub fn to_type_arrays(schema: &mut Value) {
    match schema {
        Value::Object(obj) => {
            obj.values_mut().for_each(to_type_arrays);
            let Some(Value::Array(branches)) = obj.get("anyOf") else {
                return;
            };
            let [Value::Object(first), Value::Object(null)] = branches.as_slice() else {
                return;
            };
            if null.len() != 1 || null.get("type") != Some(&Value::String("null".into())) {
                return;
            }
            let Some(Value::String(ty)) = first.get("type") else {
                return;
            };
            if first.contains_key("$ref") || first.contains_key("anyOf") {
                return;
            }
            let mut merged = Map::new();
            merged.insert("type".into(), json!([ty, "null"]));
            for (k, v) in first.iter().filter(|(k, _)| *k != "type") {
                merged.insert(k.clone(), v.clone());
            }
            for (k, v) in obj.iter().filter(|(k, _)| *k != "anyOf") {
                merged.insert(k.clone(), v.clone());
            }
            *obj = merged;
        }
        Value::Array(items) => items.iter_mut().for_each(to_type_arrays),
        _ => {}
    }
}

/// Inlines `#/$defs/...` references, keeping only the definitions a recursion needs (a
/// recursive type cannot be inlined): for hosts that reject `$ref`.
pub fn inline_defs(schema: &mut Value) {
    let Some(Value::Object(defs)) = schema.as_object_mut().and_then(|o| o.remove("$defs")) else {
        return;
    };
    let mut kept = Map::new();
    let mut stack = Vec::new();
    inline_in(schema, &defs, &mut stack, &mut kept);
    // Definitions kept for recursion may refer to others: inline inside them too.
    let mut i = 0;
    while i < kept.len() {
        let name = kept.keys().nth(i).cloned().unwrap_or_default();
        if let Some(mut def) = defs.get(&name).cloned() {
            let mut stack = vec![name.clone()];
            inline_in(&mut def, &defs, &mut stack, &mut kept);
            kept.insert(name, def);
        }
        i += 1;
    }
    if !kept.is_empty()
        && let Value::Object(o) = schema
    {
        o.insert("$defs".into(), Value::Object(kept));
    }
}

fn inline_in(
    v: &mut Value,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
    kept: &mut Map<String, Value>,
) {
    match v {
        Value::Object(obj) => {
            let target = obj
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .map(str::to_owned);
            if let Some(name) = target {
                if stack.contains(&name) {
                    // Recursion: keep the reference and its definition.
                    kept.entry(name).or_insert(Value::Null);
                    return;
                }
                if let Some(Value::Object(def)) = defs.get(&name) {
                    let mut inlined = def.clone();
                    for (k, val) in obj.iter().filter(|(k, _)| *k != "$ref") {
                        inlined.insert(k.clone(), val.clone());
                    }
                    let mut inlined = Value::Object(inlined);
                    stack.push(name);
                    inline_in(&mut inlined, defs, stack, kept);
                    stack.pop();
                    *v = inlined;
                    return;
                }
            }
            for val in obj.values_mut() {
                inline_in(val, defs, stack, kept);
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|i| inline_in(i, defs, stack, kept)),
        _ => {}
    }
}

/// Compiles a validator for a schema (2020-12, formats checked, no network access).
pub fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Turns a schema written for a tool (`$defs`) into one for an OpenRPC document
/// (`#/components/schemas/...`), moving its definitions into `components`.
pub(crate) fn to_components(schema: &Value, components: &mut Map<String, Value>) -> Value {
    let mut s = schema.clone();
    if let Value::Object(obj) = &mut s
        && let Some(Value::Object(defs)) = obj.remove("$defs")
    {
        for (name, mut def) in defs {
            rewrite_refs(&mut def);
            components.entry(name).or_insert(def);
        }
    }
    rewrite_refs(&mut s);
    s
}

fn rewrite_refs(v: &mut Value) {
    match v {
        Value::Object(obj) => {
            if let Some(Value::String(r)) = obj.get_mut("$ref")
                && let Some(rest) = r.strip_prefix("#/$defs/")
            {
                *r = format!("#/components/schemas/{rest}");
            }
            obj.values_mut().for_each(rewrite_refs);
        }
        Value::Array(a) => a.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// Where an OpenRPC document keeps its named schemas.
const COMPONENTS: &str = "#/components/schemas/";

/// Unrolls the recursion of an OpenRPC document's named schemas, for tools that expand every
/// `$ref` and cannot stop at a cycle (`@open-rpc/generator` 2.x runs out of memory on one).
/// In `methods` and in every component off a cycle, each reference to a component on a cycle
/// is replaced by a copy of that component, `depth` levels deep; below them the value is any
/// JSON (`{}`, with `x-unrolled` naming the type no longer described). The components on a
/// cycle are removed; the others stay references.
///
/// A component with `k` recursive references grows `k^depth` times: `depth` is kept small by
/// the caller. Finding the cycles is linear in the components and their references.
pub(crate) fn unroll_recursion(
    methods: &mut Value,
    components: &mut Map<String, Value>,
    depth: usize,
) {
    let cyclic = cyclic_components(components);
    if cyclic.is_empty() {
        return;
    }
    let all = std::mem::take(components);
    let unroll = Unroll {
        all: &all,
        cyclic: &cyclic,
    };
    unroll.expand(methods, depth);
    let mut kept = Map::new();
    for (name, schema) in &all {
        if !cyclic.contains(name.as_str()) {
            let mut schema = schema.clone();
            unroll.expand(&mut schema, depth);
            kept.insert(name.clone(), schema);
        }
    }
    *components = kept;
}

struct Unroll<'a> {
    all: &'a Map<String, Value>,
    cyclic: &'a std::collections::HashSet<String>,
}

impl Unroll<'_> {
    fn expand(&self, v: &mut Value, depth: usize) {
        match v {
            Value::Object(obj) => {
                let target = obj
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.strip_prefix(COMPONENTS))
                    .filter(|name| self.cyclic.contains(*name))
                    .map(str::to_owned);
                let Some(name) = target else {
                    obj.values_mut().for_each(|x| self.expand(x, depth));
                    return;
                };
                let mut copy = match depth.checked_sub(1) {
                    None => Map::from_iter([("x-unrolled".to_owned(), Value::String(name))]),
                    Some(below) => {
                        let mut copy = self.all.get(&name).cloned().unwrap_or(Value::Null);
                        self.expand(&mut copy, below);
                        match copy {
                            Value::Object(o) => o,
                            _ => Map::new(),
                        }
                    }
                };
                // What the reference says beside it (its description) stays.
                for (k, val) in obj.iter().filter(|(k, _)| *k != "$ref") {
                    copy.insert(k.clone(), val.clone());
                }
                *v = Value::Object(copy);
            }
            Value::Array(items) => items.iter_mut().for_each(|x| self.expand(x, depth)),
            _ => {}
        }
    }
}

/// The components on a cycle of references (one that refers to itself, or to another that
/// leads back to it): the strongly connected components of more than one, or with a loop
/// (Tarjan's algorithm, without recursion).
fn cyclic_components(components: &Map<String, Value>) -> std::collections::HashSet<String> {
    let names: Vec<&str> = components.keys().map(String::as_str).collect();
    let index_of: std::collections::HashMap<&str, usize> =
        names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let edges: Vec<Vec<usize>> = components
        .values()
        .map(|schema| {
            let mut out = Vec::new();
            refs_in(schema, &mut |r| {
                if let Some(i) = r.strip_prefix(COMPONENTS).and_then(|n| index_of.get(n)) {
                    out.push(*i);
                }
            });
            out
        })
        .collect();
    let n = names.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut cyclic = std::collections::HashSet::new();
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut calls = vec![(start, 0)];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut at)) = calls.last_mut() {
            if let Some(&w) = edges[v].get(*at) {
                *at += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(u, _)) = calls.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut members = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                if members.len() > 1 || edges[v].contains(&v) {
                    cyclic.extend(members.into_iter().map(|m| names[m].to_owned()));
                }
            }
        }
    }
    cyclic
}

/// Calls `f` with every `$ref` in `v`.
fn refs_in(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::Object(obj) => {
            if let Some(Value::String(r)) = obj.get("$ref") {
                f(r);
            }
            obj.values().for_each(|x| refs_in(x, f));
        }
        Value::Array(items) => items.iter().for_each(|x| refs_in(x, f)),
        _ => {}
    }
}

/// Splits a doc comment into a title (its first line) and a description (the whole text).
pub(crate) fn split_docs(docs: &str) -> (Option<String>, Option<String>) {
    let text = docs.trim();
    if text.is_empty() {
        return (None, None);
    }
    let title = text
        .lines()
        .next()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty());
    (title, Some(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_becomes_any_of() {
        let mut s = json!({"type":["string","null"],"minLength":1,"description":"d"});
        normalize(&mut s);
        assert_eq!(
            s,
            json!({"anyOf":[{"type":"string","minLength":1},{"type":"null"}],"description":"d"})
        );
        let mut s = json!({"properties":{"a":{"type":["integer","null"]}}});
        normalize(&mut s);
        assert_eq!(
            s,
            json!({"properties":{"a":{"anyOf":[{"type":"integer"},{"type":"null"}]}}})
        );
        let mut s = json!({"type":"string"});
        normalize(&mut s);
        assert_eq!(s, json!({"type":"string"}));
    }

    #[test]
    fn numeric_formats_become_bounds() {
        let mut s = json!({"type":"integer","format":"uint32","minimum":0});
        normalize(&mut s);
        assert_eq!(
            s,
            json!({"type":"integer","minimum":0,"maximum":4294967295u32})
        );
        let mut s = json!({"type":"number","format":"double"});
        normalize(&mut s);
        assert_eq!(s, json!({"type":"number"}));
        let mut s = json!({"type":"string","format":"email"});
        normalize(&mut s);
        assert_eq!(s, json!({"type":"string","format":"email"}));
    }

    #[test]
    fn inline_defs_keeps_only_recursive_ones() {
        let mut s = json!({"type":"object","properties":{
            "p":{"$ref":"#/$defs/Product","description":"d"},
            "c":{"$ref":"#/$defs/Cat"}},
            "$defs":{"Product":{"type":"object","properties":{"id":{"type":"integer"}}},
                     "Cat":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/Cat"}},
                                                          "top":{"$ref":"#/$defs/Product"}}}}});
        inline_defs(&mut s);
        assert_eq!(
            s["properties"]["p"],
            json!({"type":"object","properties":{"id":{"type":"integer"}},"description":"d"})
        );
        assert_eq!(
            s["properties"]["c"]["properties"]["kids"]["items"],
            json!({"$ref":"#/$defs/Cat"})
        );
        assert_eq!(
            s["$defs"]
                .as_object()
                .map(|d| d.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["Cat".to_owned()])
        );
        assert_eq!(s["$defs"]["Cat"]["properties"]["top"]["type"], "object");
    }

    #[test]
    fn type_arrays_round_trip() {
        let mut s = json!({"type":["string","null"],"minLength":1,"description":"d"});
        normalize(&mut s);
        to_type_arrays(&mut s);
        assert_eq!(
            s,
            json!({"type":["string","null"],"minLength":1,"description":"d"})
        );
        let mut r = json!({"anyOf":[{"$ref":"#/$defs/X"},{"type":"null"}]});
        to_type_arrays(&mut r);
        assert_eq!(r, json!({"anyOf":[{"$ref":"#/$defs/X"},{"type":"null"}]}));
    }

    #[test]
    fn docs_split() {
        assert_eq!(split_docs(""), (None, None));
        assert_eq!(
            split_docs(" Search.\n\n More text."),
            (
                Some("Search.".into()),
                Some("Search.\n\n More text.".into())
            )
        );
    }

    #[test]
    fn components_rewrite() {
        let s = json!({"type":"object","properties":{"c":{"$ref":"#/$defs/Cat"}},
            "$defs":{"Cat":{"type":"object","properties":{"kids":{"items":{"$ref":"#/$defs/Cat"}}}}}});
        let mut comps = Map::new();
        let out = to_components(&s, &mut comps);
        assert_eq!(
            out,
            json!({"type":"object","properties":{"c":{"$ref":"#/components/schemas/Cat"}}})
        );
        assert_eq!(
            comps["Cat"]["properties"]["kids"]["items"]["$ref"],
            "#/components/schemas/Cat"
        );
    }

    #[test]
    fn recursion_is_unrolled_to_the_depth_asked_and_the_rest_stays_references() {
        let mut components = json!({
            "Category": {"type": "object", "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Category"}}
            }},
            "Shelf": {"type": "object", "properties": {
                "top": {"$ref": "#/components/schemas/Category", "description": "The top."},
                "label": {"$ref": "#/components/schemas/Label"}
            }},
            "Label": {"type": "string"},
            "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}}}
        })
        .as_object()
        .cloned()
        .unwrap();
        let mut methods = json!([{"name": "tree", "params": [],
            "result": {"name": "result", "schema": {"$ref": "#/components/schemas/Category"}}}]);
        unroll_recursion(&mut methods, &mut components, 2);
        let level = |inner: Value| {
            json!({"type": "object", "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": inner}
            }})
        };
        let unrolled = level(level(json!({"x-unrolled": "Category"})));
        assert_eq!(methods[0]["result"]["schema"], unrolled);
        // Off the cycles: kept, its references to a cycle unrolled, the others left.
        let mut top = unrolled.clone();
        top["description"] = json!("The top.");
        assert_eq!(
            Value::Object(components),
            json!({
                "Shelf": {"type": "object", "properties": {
                    "top": top,
                    "label": {"$ref": "#/components/schemas/Label"}
                }},
                "Label": {"type": "string"}
            })
        );
    }

    #[test]
    fn cycles_are_found_through_other_components_and_only_there() {
        let components = json!({
            "A": {"$ref": "#/components/schemas/B"},
            "B": {"items": {"$ref": "#/components/schemas/A"}},
            "C": {"$ref": "#/components/schemas/A"},
            "D": {"$ref": "#/components/schemas/D"},
            "E": {"$ref": "#/components/schemas/Missing"}
        });
        let mut found: Vec<String> = cyclic_components(components.as_object().unwrap())
            .into_iter()
            .collect();
        found.sort();
        assert_eq!(found, ["A", "B", "D"]);
        // Without a cycle nothing changes.
        let mut methods = json!([{"$ref": "#/components/schemas/C"}]);
        let mut flat = json!({"C": {"type": "string"}})
            .as_object()
            .cloned()
            .unwrap();
        unroll_recursion(&mut methods, &mut flat, 3);
        assert_eq!(methods, json!([{"$ref": "#/components/schemas/C"}]));
        assert_eq!(Value::Object(flat), json!({"C": {"type": "string"}}));
    }
}
