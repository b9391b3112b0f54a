//! The OpenRPC 1.3 document of one catalog, served by `GET /rpc/{group}/v{N}` and the
//! `rpc.discover` method (OpenRPC service discovery).

use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
use crate::i18n::{MethodTexts, Translations};
use crate::schema;

/// The name of the service discovery method every JSON-RPC endpoint answers with its
/// document. It is implied, so it is not listed in the document's `methods`.
pub const DISCOVER: &str = "rpc.discover";

/// Builds the document (built once at startup and served as bytes).
pub fn document(
    catalog: &Catalog,
    translations: &Translations,
    lang: &str,
    server_name: &str,
    versions: &[u32],
    url: &str,
) -> Value {
    let p = Parts::of(catalog, translations, lang, server_name, versions, &|_| {
        true
    });
    json!({
        "openrpc": OPENRPC_VERSION,
        "info": p.info,
        "servers": [{ "name": catalog.group().name(), "url": url }],
        "methods": p.methods,
        "components": { "schemas": p.components },
    })
}

/// How deep `?unroll` unrolls a recursive schema when it names no depth.
pub(crate) const DEFAULT_UNROLL: usize = 3;

/// The deepest `?unroll=N`: a schema with `k` recursive references grows `k^N` times, so the
/// depth a client may ask for is small (the document is built once per depth and language).
pub(crate) const MAX_UNROLL: usize = 5;

/// The document serialized with its one URL (`servers[0].url`) left out, and the `?info`
/// document: the same head, the URL and `}]}`. With `unroll`, its recursive schemas are
/// unrolled that many levels ([`schema::unroll_recursion`]).
pub(crate) fn spliced(
    catalog: &Catalog,
    translations: &Translations,
    lang: &str,
    server_name: &str,
    versions: &[u32],
    visible: &dyn Fn(&crate::MethodDef) -> bool,
    unroll: Option<usize>,
) -> super::spliced::Spliced {
    let mut p = Parts::of(catalog, translations, lang, server_name, versions, visible);
    if let Some(depth) = unroll {
        schema::unroll_recursion(&mut p.methods, &mut p.components, depth);
    }
    // Writing JSON values into a Vec cannot fail.
    let mut head = format!("{{\"openrpc\":\"{OPENRPC_VERSION}\",\"info\":").into_bytes();
    let _ = serde_json::to_writer(&mut head, &p.info);
    head.extend_from_slice(b",\"servers\":[{\"name\":");
    let _ = serde_json::to_writer(&mut head, catalog.group().name());
    head.extend_from_slice(b",\"url\":");
    let mut tail = b"}],\"methods\":".to_vec();
    let _ = serde_json::to_writer(&mut tail, &p.methods);
    tail.extend_from_slice(b",\"components\":{\"schemas\":");
    let _ = serde_json::to_writer(&mut tail, &p.components);
    tail.extend_from_slice(b"}}");
    super::spliced::Spliced::new(head, tail)
}

const OPENRPC_VERSION: &str = "1.3.2";

/// The error a rate-limited method may answer (OpenRPC Error Object).
fn rate_limited_error() -> Value {
    json!({
        "code": crate::codes::RATE_LIMITED,
        "message": "Too many requests",
        "data": { "retryAfterMs": "the milliseconds to wait before calling again" },
    })
}

/// A method's `x-rate-limit`: `{"limit": 60, "periodMs": 60000, "burst": 10, "per": "caller"}`.
fn rate_limit(limit: &crate::RateLimit) -> Value {
    json!({
        "limit": limit.count(),
        "periodMs": u64::try_from(limit.period().as_millis()).unwrap_or(u64::MAX),
        "burst": limit.burst_size(),
        "per": match limit.per() {
            crate::RatePer::Caller => "caller",
            crate::RatePer::Method => "method",
        },
    })
}

/// The document's parts that do not depend on its URL.
struct Parts {
    info: Value,
    methods: Value,
    components: Map<String, Value>,
}

impl Parts {
    fn of(
        catalog: &Catalog,
        translations: &Translations,
        lang: &str,
        server_name: &str,
        versions: &[u32],
        visible: &dyn Fn(&crate::MethodDef) -> bool,
    ) -> Self {
        let mut components = Map::new();
        let mut methods = Vec::with_capacity(catalog.methods().len());
        for m in catalog.methods().iter().filter(|m| visible(m.def)) {
            let texts = MethodTexts::of(m, translations, catalog.group().name(), lang);
            let input = schema::to_components(&texts.input_schema, &mut components);
            let props = input.get("properties").and_then(Value::as_object);
            let params: Vec<Value> = m
                .def
                .params
                .iter()
                .map(|p| {
                    let mut d = Map::new();
                    d.insert("name".into(), p.name.into());
                    let description = props
                        .and_then(|ps| ps.get(p.name))
                        .and_then(|s| s.get("description"))
                        .cloned();
                    if let Some(text) = description {
                        d.insert("description".into(), text);
                    }
                    d.insert("required".into(), p.is_required().into());
                    let schema = props
                        .and_then(|ps| ps.get(p.name))
                        .cloned()
                        .unwrap_or_else(|| json!({}));
                    d.insert("schema".into(), schema);
                    Value::Object(d)
                })
                .collect();
            let mut method = Map::new();
            method.insert("name".into(), m.name().into());
            method.insert("summary".into(), texts.title.clone().into());
            if let Some(d) = &texts.description {
                method.insert("description".into(), d.clone().into());
            }
            let tag = m.name().split(['.', ':']).next().unwrap_or(m.name());
            method.insert("tags".into(), json!([{ "name": tag }]));
            method.insert("params".into(), Value::Array(params));
            let result_schema = m
                .output_schema
                .as_ref()
                .map(|o| {
                    let o = schema::to_components(o, &mut components);
                    o.pointer("/properties/result")
                        .cloned()
                        .unwrap_or_else(|| json!({}))
                })
                .unwrap_or_else(|| json!({}));
            method.insert(
                "result".into(),
                json!({ "name": "result", "schema": result_schema }),
            );
            method.insert("paramStructure".into(), "either".into());
            if let Some(limit) = m.def.rate_limit.or(catalog.group().default_rate_limit()) {
                method.insert("errors".into(), json!([rate_limited_error()]));
                method.insert("x-rate-limit".into(), rate_limit(&limit));
            }
            methods.push(Value::Object(method));
        }
        let versions: Vec<String> = versions.iter().map(|v| format!("v{v}")).collect();
        Parts {
            info: json!({
                "title": server_name,
                "version": format!("v{}", catalog.version()),
                "x-group": catalog.group().name(),
                "x-versions": versions,
            }),
            methods: Value::Array(methods),
            components,
        }
    }
}
