//! JSON Schemas of methods (schemars 1.x, draft 2020-12) and their compiled validators.
//!
//! Every method's schema is self-contained: DTOs and enums are `$ref`s into the schema's own
//! `$defs`, recursive ones included. Nullable types are written as `anyOf` with
//! `{"type":"null"}`, never as `type` arrays, which some MCP hosts reject.

use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::registry::{MethodDef, ParamKind};

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
    Value::Object(root)
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
}
