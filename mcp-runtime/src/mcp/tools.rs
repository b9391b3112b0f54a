//! `tools/list`: every method of the catalog as a tool, precomputed as bytes per page and era.

use serde::{Serialize, Serializer, ser::SerializeMap};
use serde_json::Value;
use std::borrow::Cow;

use super::pages::ListPages;
use crate::catalog::{Catalog, MethodInfo};
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

/// A tool object serialized straight from the catalog's data: startup writes 10 000 of them,
/// and building a `Value` first (then copying every schema into it) was most of the cost.
struct ToolView<'a> {
    info: &'a MethodInfo,
    texts: &'a MethodTexts<'a>,
    input: Portable<'a>,
    output: Option<Portable<'a>>,
    /// Whether `execution.taskSupport` is shown (2025-11-25 task tools).
    execution: bool,
}

impl<'a> ToolView<'a> {
    fn new(info: &'a MethodInfo, texts: &'a MethodTexts<'a>, opts: &ListOptions) -> Self {
        Self {
            info,
            texts,
            execution: false,
            input: Portable::new(&texts.input_schema, opts),
            output: info.output_schema.as_ref().map(|o| Portable::new(o, opts)),
        }
    }
}

impl Serialize for ToolView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", self.info.name())?;
        m.serialize_entry("title", &*self.texts.title)?;
        // Some clients (and the conformance suite) require a non-empty description.
        let description = self.texts.description.as_ref().unwrap_or(&self.texts.title);
        m.serialize_entry("description", &**description)?;
        m.serialize_entry("inputSchema", &self.input)?;
        if let Some(o) = &self.output {
            m.serialize_entry("outputSchema", o)?;
        }
        let annotations = Annotations(&self.info.def.annotations);
        if !annotations.is_empty() {
            m.serialize_entry("annotations", &annotations)?;
        }
        // `forbidden` is the default: left out.
        if self.execution && self.info.def.task != crate::record::TaskSupport::Forbidden {
            let support = self.info.def.task.as_str();
            m.serialize_entry("execution", &serde_json::json!({ "taskSupport": support }))?;
        }
        if let Some(app) = &self.info.def.app {
            m.serialize_entry("_meta", &app.meta())?;
        }
        m.end()
    }
}

/// The `annotations` object: only the hints the method states.
struct Annotations<'a>(&'a crate::record::ToolAnnotations);

impl Annotations<'_> {
    fn hints(&self) -> [(&'static str, Option<bool>); 4] {
        let a = self.0;
        [
            ("readOnlyHint", a.read_only_hint),
            ("destructiveHint", a.destructive_hint),
            ("idempotentHint", a.idempotent_hint),
            ("openWorldHint", a.open_world_hint),
        ]
    }

    fn is_empty(&self) -> bool {
        self.0.title.is_none() && self.hints().iter().all(|(_, v)| v.is_none())
    }
}

impl Serialize for Annotations<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(v) = self.0.title {
            m.serialize_entry("title", v)?;
        }
        for (k, v) in self.hints() {
            if let Some(v) = v {
                m.serialize_entry(k, &v)?;
            }
        }
        m.end()
    }
}

/// A tool schema in the server's compatibility style: `$defs` inlined or kept, nullable style,
/// `$schema` stated or left out. Borrowed unless a rewrite is configured.
struct Portable<'a> {
    schema: Cow<'a, Value>,
    dialect: bool,
}

impl<'a> Portable<'a> {
    fn new(schema: &'a Value, opts: &ListOptions) -> Self {
        let mut schema = Cow::Borrowed(schema);
        if opts.inline_defs {
            crate::schema::inline_defs(schema.to_mut());
        }
        if opts.nullable == crate::schema::Nullable::TypeArray {
            crate::schema::to_type_arrays(schema.to_mut());
        }
        Self {
            schema,
            dialect: opts.schema_dialect,
        }
    }
}

impl Serialize for Portable<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &*self.schema {
            // `$schema` goes first, written ahead of the borrowed members.
            Value::Object(obj) if self.dialect && !obj.contains_key("$schema") => {
                let mut m = s.serialize_map(Some(obj.len() + 1))?;
                m.serialize_entry("$schema", DIALECT)?;
                for (k, v) in obj {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            other => other.serialize(s),
        }
    }
}

/// Every page of one catalog's tools/list.
pub type ToolPages = ListPages;

/// Builds every tools/list page of `catalog` in `lang` once, of the tools `visible` admits;
/// `meta_member` is the `_meta` member stamped on modern results.
pub fn tool_pages(
    catalog: &Catalog,
    translations: &Translations,
    lang: &str,
    opts: &ListOptions,
    meta_member: &str,
    execution: bool,
    visible: &dyn Fn(&[&str]) -> bool,
) -> ToolPages {
    let group = catalog.group().name();
    let items: Vec<Vec<u8>> = catalog
        .methods()
        .iter()
        .filter(|m| visible(m.def.scopes))
        .filter_map(|m| {
            let texts = MethodTexts::of(m, translations, group, lang);
            let mut view = ToolView::new(m, &texts, opts);
            view.execution = execution;
            // Fails only on a serializer error, which a map with string keys never raises;
            // the tool would then be missing, the page still JSON.
            serde_json::to_vec(&view).ok()
        })
        .collect();
    ListPages::build("tools", &items, opts.page_size, opts.ttl_ms, meta_member)
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
