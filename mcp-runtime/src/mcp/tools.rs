//! `tools/list`: every method of the catalog as a tool, precomputed as bytes per page and era.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, MethodInfo};
use crate::error::RpcError;
use crate::group::{TOOL_NAME_RULE, is_valid_tool_name};
use crate::i18n::{MethodTexts, Translations};

/// The 2020-12 dialect URL, stated on tool schemas so every client validates by the same rules.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// How tools/list is written.
#[derive(Debug, Clone)]
pub struct ListOptions {
    /// Tools per page.
    pub page_size: usize,
    /// Add `$schema` (2020-12) to tool schemas.
    pub schema_dialect: bool,
    /// Modern `ttlMs`.
    pub ttl_ms: u64,
    /// Inline `$defs` into the schema, except definitions that recursion needs.
    pub inline_defs: bool,
    /// How nullable types are written.
    pub nullable: crate::schema::Nullable,
}

/// The tool object of a method.
pub fn tool_json(info: &MethodInfo, texts: &MethodTexts, opts: &ListOptions) -> Value {
    let mut t = Map::new();
    t.insert("name".into(), info.name().into());
    t.insert("title".into(), texts.title.clone().into());
    // Some clients (and the conformance suite) require a non-empty description.
    let description = texts
        .description
        .clone()
        .unwrap_or_else(|| texts.title.clone());
    t.insert("description".into(), description.into());
    t.insert("inputSchema".into(), portable(&texts.input_schema, opts));
    if let Some(o) = &info.output_schema {
        t.insert("outputSchema".into(), portable(o, opts));
    }
    let a = &info.def.annotations;
    let mut ann = Map::new();
    if let Some(v) = a.title {
        ann.insert("title".into(), v.into());
    }
    for (k, v) in [
        ("readOnlyHint", a.read_only_hint),
        ("destructiveHint", a.destructive_hint),
        ("idempotentHint", a.idempotent_hint),
        ("openWorldHint", a.open_world_hint),
    ] {
        if let Some(v) = v {
            ann.insert(k.into(), v.into());
        }
    }
    if !ann.is_empty() {
        t.insert("annotations".into(), Value::Object(ann));
    }
    Value::Object(t)
}

/// A tool schema in the server's compatibility style: `$defs` inlined or kept, nullable style,
/// `$schema` stated or left out.
fn portable(schema: &Value, opts: &ListOptions) -> Value {
    let mut s = schema.clone();
    if opts.inline_defs {
        crate::schema::inline_defs(&mut s);
    }
    if opts.nullable == crate::schema::Nullable::TypeArray {
        crate::schema::to_type_arrays(&mut s);
    }
    with_dialect(s, opts.schema_dialect)
}

/// Puts `$schema` first; moves the members of the one clone `portable` made (no second copy).
fn with_dialect(schema: Value, dialect: bool) -> Value {
    match schema {
        Value::Object(obj) if dialect && !obj.contains_key("$schema") => {
            let mut m = Map::with_capacity(obj.len() + 1);
            m.insert("$schema".into(), DIALECT.into());
            m.extend(obj);
            Value::Object(m)
        }
        other => other,
    }
}

/// One page of tools/list, as the inside of the result object (`"tools":[...],...`) per era.
#[derive(Debug, Clone)]
pub struct Page {
    /// Handshake-era result members.
    pub legacy: Bytes,
    /// Modern result members (with `ttlMs` and `cacheScope`).
    pub modern: Bytes,
}

/// Every page of one catalog's tools/list.
#[derive(Debug, Clone)]
pub struct ToolPages {
    pages: Vec<Page>,
}

/// The opaque cursor of the page starting at `offset`.
pub fn cursor(offset: usize) -> String {
    B64.encode(offset.to_string())
}

impl ToolPages {
    /// Builds every page once.
    pub fn build(
        catalog: &Catalog,
        translations: &Translations,
        lang: &str,
        opts: &ListOptions,
    ) -> Self {
        let group = catalog.group().name();
        let tools: Vec<String> = catalog
            .methods()
            .iter()
            .map(|m| {
                let texts = MethodTexts::of(m, translations, group, lang);
                serde_json::to_string(&tool_json(m, &texts, opts)).unwrap_or_default()
            })
            .collect();
        let size = opts.page_size.max(1);
        let mut pages = Vec::new();
        let chunks: Vec<&[String]> = if tools.is_empty() {
            vec![&[]]
        } else {
            tools.chunks(size).collect()
        };
        for (i, chunk) in chunks.iter().enumerate() {
            let mut s = String::from("\"tools\":[");
            s.push_str(&chunk.join(","));
            s.push(']');
            let next = (i + 1) * size;
            if next < tools.len() {
                s.push_str(&format!(",\"nextCursor\":\"{}\"", cursor(next)));
            }
            let legacy = Bytes::from(s.clone());
            s.push_str(&format!(
                ",\"ttlMs\":{},\"cacheScope\":\"public\"",
                opts.ttl_ms
            ));
            pages.push(Page {
                legacy,
                modern: Bytes::from(s),
            });
        }
        Self { pages }
    }

    /// The page a cursor points at (`None` = the first).
    pub fn page(&self, cursor: Option<&str>, page_size: usize) -> Result<&Page, RpcError> {
        let Some(c) = cursor else {
            return Ok(&self.pages[0]);
        };
        let bad = || {
            RpcError::invalid_params(format!(
                "Invalid value for pagination parameter \"cursor\": \"{c}\""
            ))
        };
        let offset: usize = B64
            .decode(c)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)?;
        if offset == 0 || !offset.is_multiple_of(page_size.max(1)) {
            return Err(bad());
        }
        self.pages.get(offset / page_size.max(1)).ok_or_else(bad)
    }
}

/// The run-time tool-name check: the methods of an MCP catalog whose names are not valid tools.
pub fn bad_tool_names(catalog: &Catalog) -> Vec<String> {
    catalog
        .methods()
        .iter()
        .filter(|m| !is_valid_tool_name(m.name()))
        .map(|m| {
            format!(
                "`{}` ({}) does not match {TOOL_NAME_RULE}",
                m.name(),
                m.def.location
            )
        })
        .collect()
}

/// The `tools` array of a catalog in one language, as tools/list serves it.
pub fn tools_value(
    catalog: &Catalog,
    translations: &Translations,
    lang: &str,
    opts: &ListOptions,
) -> Value {
    let group = catalog.group().name();
    json!(
        catalog
            .methods()
            .iter()
            .map(|m| tool_json(m, &MethodTexts::of(m, translations, group, lang), opts))
            .collect::<Vec<_>>()
    )
}
