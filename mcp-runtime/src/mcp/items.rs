//! The list entries of resources, resource templates, prompts and skills, serialized once per
//! language when the endpoint is built (tools have theirs in `tools`; skills write theirs once,
//! in `SkillInfo`).

use std::borrow::Cow;

use serde::{Serialize, Serializer, ser::SerializeMap};
use serde_json::{Map, Value};

use crate::catalog::{MethodInfo, PromptInfo, ResourceInfo};
use crate::i18n::{MethodTexts, Translations};
use crate::record::{Annotations, Icon};

/// The texts of a resource or prompt: the translation, else the doc comment (never the
/// internal call name).
pub(crate) struct Texts<'a> {
    title: Option<Cow<'a, str>>,
    pub(crate) description: Option<Cow<'a, str>>,
    schema: Cow<'a, Value>,
}

impl<'a> Texts<'a> {
    pub(crate) fn of(call: &'a MethodInfo, t: &Translations, group: &str, lang: &str) -> Self {
        let m = MethodTexts::of(call, t, group, lang);
        Texts {
            title: (m.title != call.name()).then_some(m.title),
            description: m.description,
            schema: m.input_schema,
        }
    }
}

struct AnnotationsView<'a>(&'a Annotations);

impl Serialize for AnnotationsView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = self.0;
        let mut m = s.serialize_map(None)?;
        if !a.audience.is_empty() {
            let roles: Vec<&str> = a.audience.iter().map(|r| r.as_str()).collect();
            m.serialize_entry("audience", &roles)?;
        }
        if let Some(p) = a.priority {
            m.serialize_entry("priority", &p)?;
        }
        if let Some(l) = a.last_modified {
            m.serialize_entry("lastModified", l)?;
        }
        m.end()
    }
}

struct IconView<'a>(&'a Icon);

impl Serialize for IconView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let i = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("src", i.src)?;
        if let Some(t) = i.mime_type {
            m.serialize_entry("mimeType", t)?;
        }
        if !i.sizes.is_empty() {
            m.serialize_entry("sizes", i.sizes)?;
        }
        if let Some(t) = i.theme {
            m.serialize_entry("theme", t)?;
        }
        m.end()
    }
}

fn icons<M: SerializeMap>(m: &mut M, list: &[Icon]) -> Result<(), M::Error> {
    if !list.is_empty() {
        let v: Vec<IconView<'_>> = list.iter().map(IconView).collect();
        m.serialize_entry("icons", &v)?;
    }
    Ok(())
}

/// A `resources/list` or `resources/templates/list` entry.
struct ResourceView<'a> {
    r: &'a ResourceInfo,
    texts: Texts<'a>,
}

impl Serialize for ResourceView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.r.def;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry(if d.is_template { "uriTemplate" } else { "uri" }, d.uri)?;
        m.serialize_entry("name", d.name)?;
        if let Some(t) = &self.texts.title {
            m.serialize_entry("title", t)?;
        }
        if let Some(t) = &self.texts.description {
            m.serialize_entry("description", t)?;
        }
        if let Some(t) = d.mime_type {
            m.serialize_entry("mimeType", t)?;
        }
        if let Some(n) = d.size.filter(|_| !d.is_template) {
            m.serialize_entry("size", &n)?;
        }
        if !d.annotations.is_empty() {
            m.serialize_entry("annotations", &AnnotationsView(&d.annotations))?;
        }
        icons(&mut m, d.icons)?;
        if let Some(app) = &d.app {
            m.serialize_entry("_meta", &app.meta())?;
        }
        m.end()
    }
}

/// A `prompts/list` entry.
struct PromptView<'a> {
    p: &'a PromptInfo,
    texts: Texts<'a>,
}

impl Serialize for PromptView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.p.def;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", d.name)?;
        if let Some(t) = &self.texts.title {
            m.serialize_entry("title", t)?;
        }
        // Some clients (and the conformance suite) require a description: the title stands in.
        if let Some(t) = self
            .texts
            .description
            .as_ref()
            .or(self.texts.title.as_ref())
        {
            m.serialize_entry("description", t)?;
        }
        let props = self.texts.schema.get("properties");
        let args: Vec<Value> = d
            .method
            .params
            .iter()
            .map(|p| {
                let mut a = Map::new();
                a.insert("name".into(), p.name.into());
                if let Some(t) = props
                    .and_then(|ps| ps.get(p.name))
                    .and_then(|x| x.get("description"))
                    .filter(|t| t.as_str().is_some_and(|t| !t.is_empty()))
                {
                    a.insert("description".into(), t.clone());
                }
                a.insert("required".into(), p.is_required().into());
                Value::Object(a)
            })
            .collect();
        if !args.is_empty() {
            m.serialize_entry("arguments", &args)?;
        }
        icons(&mut m, d.icons)?;
        m.end()
    }
}

/// The JSON objects of the list entries of one catalog in one language, those whose method
/// scopes `visible` admits: resources (each skill's `SKILL.md` among them, in URI order), templates,
/// prompts.
pub(crate) fn list_items(
    catalog: &crate::Catalog,
    t: &Translations,
    lang: &str,
    visible: &dyn Fn(&[&str]) -> bool,
) -> [Vec<Vec<u8>>; 3] {
    let group = catalog.group().name();
    let resource = |r: &std::sync::Arc<ResourceInfo>| {
        if !visible(r.call.def.scopes) {
            return None;
        }
        let item = serde_json::to_vec(&ResourceView {
            r,
            texts: Texts::of(&r.call, t, group, lang),
        })
        .ok()?;
        Some((r.uri(), item))
    };
    let mut resources: Vec<(&str, Vec<u8>)> =
        catalog.resources().iter().filter_map(resource).collect();
    if !catalog.skills().is_empty() {
        resources.extend(
            catalog
                .skills()
                .iter()
                .filter(|s| visible(s.def.scopes))
                .map(|s| (s.uri(), s.variant(Some(lang)).resource_entry.clone())),
        );
        resources.sort_by(|a, b| a.0.cmp(b.0));
    }
    [
        resources.into_iter().map(|(_, item)| item).collect(),
        catalog
            .resource_templates()
            .iter()
            .filter_map(resource)
            .map(|(_, item)| item)
            .collect(),
        catalog
            .prompts()
            .iter()
            .filter(|p| visible(p.call.def.scopes))
            .filter_map(|p| {
                serde_json::to_vec(&PromptView {
                    p,
                    texts: Texts::of(&p.call, t, group, lang),
                })
                .ok()
            })
            .collect(),
    ]
}

/// The `skills/list` entries in `lang` of a catalog's skills whose scopes `visible` admits, in
/// URI order (each written once by its `SkillInfo`).
pub(crate) fn skills(
    catalog: &crate::Catalog,
    lang: &str,
    visible: &dyn Fn(&[&str]) -> bool,
) -> Vec<Vec<u8>> {
    catalog
        .skills()
        .iter()
        .filter(|s| visible(s.def.scopes))
        .map(|s| s.variant(Some(lang)).entry.clone())
        .collect()
}
