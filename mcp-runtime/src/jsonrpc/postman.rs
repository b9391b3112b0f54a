//! The Postman collection (v2.1) of one catalog, served by `GET /rpc/{group}/v{N}/postman`:
//! one `POST` request per method with a JSON-RPC body whose params are examples taken from
//! the method's input schema, and a `{{baseUrl}}` variable.

use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
use crate::i18n::{MethodTexts, Translations};

/// The schema of a Postman Collection v2.1 document.
const SCHEMA: &str = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json";

/// How deep example values follow nested schemas and `$ref`s.
const MAX_DEPTH: usize = 8;

/// What the collection needs beside the catalog.
pub(crate) struct Collection<'a> {
    pub translations: &'a Translations,
    pub lang: &'a str,
    pub server_name: &'a str,
    /// The endpoint's path (`/rpc/shop/v1`), appended to `{{baseUrl}}`.
    pub path: &'a str,
    /// The token header of a protected group (`None`: not protected).
    pub token_header: Option<&'a str>,
    /// Whether a method is shown (the caller has its scopes).
    pub visible: &'a dyn Fn(&crate::MethodDef) -> bool,
}

/// The collection serialized with the value of its `baseUrl` variable left out.
pub(crate) fn spliced(catalog: &Catalog, c: &Collection<'_>) -> super::spliced::Spliced {
    let group = catalog.group().name();
    let segments: Vec<&str> = c.path.split('/').filter(|s| !s.is_empty()).collect();
    let url = json!({
        "raw": format!("{{{{baseUrl}}}}{}", c.path),
        "host": ["{{baseUrl}}"],
        "path": segments,
    });
    let items: Vec<Value> = catalog
        .methods()
        .iter()
        .filter(|m| (c.visible)(m.def))
        .map(|m| {
            let texts = MethodTexts::of(m, c.translations, group, c.lang);
            let mut body = Map::new();
            body.insert("jsonrpc".into(), "2.0".into());
            body.insert("method".into(), m.name().into());
            let params = example_params(&texts.input_schema);
            if !params.is_empty() {
                body.insert("params".into(), Value::Object(params));
            }
            body.insert("id".into(), 1.into());
            let raw = serde_json::to_string_pretty(&body).unwrap_or_default();
            let description = texts.description.as_ref().unwrap_or(&texts.title).to_string();
            json!({
                "name": m.name(),
                "request": {
                    "method": "POST",
                    "header": [{ "key": "Content-Type", "value": "application/json" }],
                    "body": { "mode": "raw", "raw": raw, "options": { "raw": { "language": "json" } } },
                    "url": url,
                    "description": description,
                },
            })
        })
        .collect();
    let info = json!({
        "name": format!("{} {group} v{}", c.server_name, catalog.version()),
        "description": format!(
            "JSON-RPC 2.0 methods of group `{group}` v{} (OpenRPC: GET {{{{baseUrl}}}}{}).",
            catalog.version(),
            c.path
        ),
        "schema": SCHEMA,
    });
    // Writing JSON values into a Vec cannot fail.
    let mut head = b"{\"info\":".to_vec();
    let _ = serde_json::to_writer(&mut head, &info);
    head.extend_from_slice(b",\"item\":");
    let _ = serde_json::to_writer(&mut head, &items);
    if let Some(h) = c.token_header {
        head.extend_from_slice(b",\"auth\":");
        let _ = serde_json::to_writer(&mut head, &auth(h));
    }
    head.extend_from_slice(b",\"variable\":[{\"key\":\"baseUrl\",\"value\":");
    let mut tail = b",\"type\":\"string\"}".to_vec();
    if c.token_header.is_some() {
        tail.extend_from_slice(b",{\"key\":\"token\",\"value\":\"\",\"type\":\"string\"}");
    }
    tail.extend_from_slice(b"]}");
    super::spliced::Spliced::new(head, tail)
}

/// The collection's auth: a bearer token in `Authorization`, else the token in its header.
fn auth(header: &str) -> Value {
    if header.eq_ignore_ascii_case("authorization") {
        json!({"type": "bearer", "bearer": [{"key": "token", "value": "{{token}}", "type": "string"}]})
    } else {
        json!({"type": "apikey", "apikey": [
            {"key": "key", "value": header, "type": "string"},
            {"key": "value", "value": "{{token}}", "type": "string"},
            {"key": "in", "value": "header", "type": "string"},
        ]})
    }
}

/// An example value for every property of an input schema, in its order.
fn example_params(input: &Value) -> Map<String, Value> {
    input
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(k, s)| (k.clone(), example(s, input, 0)))
                .collect()
        })
        .unwrap_or_default()
}

/// An example of a schema: its `default`, its first example, its `const` or first `enum`
/// value, else a placeholder of its type (`"string"`, the minimum or 0, `false`, `[]`, an
/// object of its required properties).
fn example(s: &Value, root: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(v) = s.get("default") {
        return v.clone();
    }
    if let Some(v) = s.get("examples").and_then(|e| e.get(0)) {
        return v.clone();
    }
    if let Some(v) = s.get("example").or_else(|| s.get("const")) {
        return v.clone();
    }
    if let Some(v) = s.get("enum").and_then(|e| e.get(0)) {
        return v.clone();
    }
    if let Some(target) = s
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| root.pointer(p))
    {
        return example(target, root, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = s
            .get(key)
            .and_then(Value::as_array)
            .and_then(|v| v.iter().find(|v| v.get("type") != Some(&json!("null"))))
        {
            return example(first, root, depth + 1);
        }
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ => return Value::Null,
    };
    match ty {
        "string" => match s.get("format").and_then(Value::as_str) {
            Some("email") => "user@example.com".into(),
            Some("uri") => "https://example.com".into(),
            Some("uuid") => "00000000-0000-0000-0000-000000000000".into(),
            Some("date-time") => "1970-01-01T00:00:00Z".into(),
            Some("date") => "1970-01-01".into(),
            _ => "string".into(),
        },
        "integer" | "number" => number(s),
        "boolean" => false.into(),
        "array" => json!([]),
        "object" => {
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let props = s.get("properties").and_then(Value::as_object);
            Value::Object(
                props
                    .into_iter()
                    .flatten()
                    .filter(|(k, _)| required.contains(&k.as_str()))
                    .map(|(k, p)| (k.clone(), example(p, root, depth + 1)))
                    .collect(),
            )
        }
        _ => Value::Null,
    }
}

/// 0, unless the bounds exclude it: then the bound nearest to it (one past an exclusive one).
fn number(s: &Value) -> Value {
    let bound = |k: &str| s.get(k).and_then(Value::as_f64);
    let pick = |v: &Value, step: i64| match v.as_i64() {
        Some(i) => Value::from(i.saturating_add(step)),
        None => Value::from(v.as_f64().unwrap_or_default() + step as f64),
    };
    match (bound("minimum"), bound("exclusiveMinimum")) {
        (Some(m), _) if m > 0.0 => return s["minimum"].clone(),
        (_, Some(m)) if m >= 0.0 => return pick(&s["exclusiveMinimum"], 1),
        _ => {}
    }
    match (bound("maximum"), bound("exclusiveMaximum")) {
        (Some(m), _) if m < 0.0 => s["maximum"].clone(),
        (_, Some(m)) if m <= 0.0 => pick(&s["exclusiveMaximum"], -1),
        _ => 0.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_come_from_the_schema() {
        let root = json!({
            "properties": {
                "a": {"type": "string", "default": "x"},
                "b": {"type": "integer", "examples": [7]},
                "c": {"type": ["string", "null"], "format": "email"},
                "d": {"$ref": "#/$defs/P"},
                "e": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
                "f": {"enum": ["low", "high"]},
                "g": {"type": "number", "minimum": 2.5},
                "h": {"type": "array"},
                "i": {"$ref": "#/$defs/Loop"},
                "j": {"type": "integer", "minimum": -9223372036854775808_i64},
                "k": {"type": "integer", "exclusiveMinimum": 0},
                "l": {"type": "integer", "maximum": -3},
            },
            "$defs": {
                "P": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, "n": {"type": "string"}}},
                "Loop": {"$ref": "#/$defs/Loop"},
            }
        });
        assert_eq!(
            Value::Object(example_params(&root)),
            json!({"a": "x", "b": 7, "c": "user@example.com", "d": {"id": 0}, "e": false,
                   "f": "low", "g": 2.5, "h": [], "i": null, "j": 0, "k": 1, "l": -3})
        );
    }
}
