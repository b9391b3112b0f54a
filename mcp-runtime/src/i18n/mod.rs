//! Translated titles and descriptions: files, per-field fallback chains and
//! `Accept-Language` negotiation, all resolved once at startup.

mod negotiate;
pub mod translations;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

pub(crate) use negotiate::well_formed;
pub use negotiate::{MAX_LANGUAGE_RANGES, negotiate, negotiate_limited};
pub use translations::{File, Texts, TranslationError};

use crate::catalog::MethodInfo;
use crate::registry::Registry;

/// The key of the server's own texts in translation files: `title` and `description` of
/// its MCP endpoints' server cards (per group in a group's file).
pub const SERVER_TEXTS: &str = "server";

/// How problems in translation files are handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strictness {
    /// A problem is a startup error (default).
    #[default]
    Error,
    /// A problem is logged as a warning.
    Warn,
}

/// Every loaded translation, indexed for the fallback chains.
#[derive(Debug, Clone)]
pub struct Translations {
    default_lang: String,
    /// (group or None for base, lang) → method → texts.
    files: BTreeMap<(Option<String>, String), BTreeMap<String, Texts>>,
    langs: Vec<String>,
}

/// The resolved texts of one method in one group and language.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    /// Title, if any link of the chain has one (else the caller uses the doc or the name).
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Parameter descriptions.
    pub params: BTreeMap<String, String>,
}

impl Translations {
    /// No files: every text comes from doc comments.
    pub fn none(default_lang: &str) -> Self {
        Self {
            default_lang: default_lang.to_ascii_lowercase(),
            files: BTreeMap::new(),
            langs: vec![default_lang.to_ascii_lowercase()],
        }
    }

    /// Indexes files and checks them against the catalogs: unknown methods or groups and
    /// reserved group names are reported.
    pub fn new(
        default_lang: &str,
        files: Vec<File>,
        registry: &Registry,
        strictness: Strictness,
    ) -> Result<Self, Vec<TranslationError>> {
        let mut errors = Vec::new();
        for g in registry.groups() {
            if translations::RESERVED_DOMAINS.contains(&g.name()) {
                errors.push(TranslationError {
                        file: format!("group `{}`", g.name()),
                    line: 0,
                    message: format!(
                        "the group name `{}` is reserved for a translation domain ({}); rename the group",
                        g.name(),
                        translations::RESERVED_DOMAINS.join(", ")
                    ),
                });
            }
        }
        let known: BTreeSet<&str> = registry
            .catalogs()
            .flat_map(|c| {
                // Resources and prompts are keyed by their call's name: `resource:<uri>`,
                // `prompt:<name>`.
                c.methods()
                    .iter()
                    .chain(c.resources().iter().map(|r| &r.call))
                    .chain(c.resource_templates().iter().map(|r| &r.call))
                    .chain(c.prompts().iter().map(|p| &p.call))
                    .map(|m| m.name())
            })
            .collect();
        let mut soft = Vec::new();
        let mut index: BTreeMap<(Option<String>, String), BTreeMap<String, Texts>> =
            BTreeMap::new();
        let mut langs: BTreeSet<String> = BTreeSet::from([default_lang.to_ascii_lowercase()]);
        // A skill translated into a language makes it one of the server's: a request may ask
        // for it, and the lists are built in it.
        langs.extend(
            registry
                .catalogs()
                .flat_map(|c| c.skills().iter())
                .flat_map(|s| s.languages().map(str::to_owned)),
        );
        for f in files {
            if let Some(g) = &f.group
                && !registry.groups().iter().any(|x| x.name() == g)
            {
                soft.push(TranslationError {
                    file: f.source.clone(),
                    line: 0,
                    message: format!("no group `{g}` exists"),
                });
            }
            for (m, t) in &f.methods {
                // The server's own texts (its cards' title and description), in any file.
                let in_group = m == SERVER_TEXTS
                    || match &f.group {
                        None => known.contains(m.as_str()),
                        Some(g) => registry
                            .catalogs()
                            .filter(|c| c.group().name() == g)
                            .any(|c| {
                                c.get(m).is_some()
                                    || c.resources().iter().any(|r| r.call.name() == m)
                                    || c.resource_templates().iter().any(|r| r.call.name() == m)
                                    || c.prompts().iter().any(|p| p.call.name() == m)
                            }),
                    };
                if !in_group {
                    soft.push(TranslationError {
                        file: f.source.clone(),
                        line: t.line,
                        message: format!("unknown method `{m}`"),
                    });
                }
            }
            langs.insert(f.lang.clone());
            index
                .entry((f.group.clone(), f.lang.clone()))
                .or_default()
                .extend(f.methods);
        }
        match strictness {
            Strictness::Error => errors.extend(soft),
            Strictness::Warn => {
                for e in soft {
                    tracing::warn!("translations: {e}");
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Self {
            default_lang: default_lang.to_ascii_lowercase(),
            files: index,
            langs: langs.into_iter().collect(),
        })
    }

    /// The default language.
    pub fn default_lang(&self) -> &str {
        &self.default_lang
    }

    /// Every language with files (and the default), sorted.
    pub fn languages(&self) -> &[String] {
        &self.langs
    }

    /// Negotiates a language for an `Accept-Language` header (the default when none fits).
    ///
    /// Linear in the header and allocation-free: at most [`MAX_LANGUAGE_RANGES`] ranges are
    /// read, the rest are ignored.
    pub fn pick(&self, accept_language: Option<&str>) -> &str {
        self.pick_limited(accept_language, MAX_LANGUAGE_RANGES)
    }

    /// [`Translations::pick`] reading at most `max_ranges` ranges (at most
    /// [`MAX_LANGUAGE_RANGES`]).
    pub fn pick_limited(&self, accept_language: Option<&str>, max_ranges: usize) -> &str {
        match negotiate::negotiate_in(accept_language, &self.langs, &self.default_lang, max_ranges)
        {
            Some(Some(i)) => self.langs.get(i).map_or(&self.default_lang, String::as_str),
            _ => &self.default_lang,
        }
    }

    fn texts(&self, group: Option<&str>, lang: &str, method: &str) -> Option<&Texts> {
        self.files
            .get(&(group.map(str::to_owned), lang.to_owned()))?
            .get(method)
    }

    /// Resolves each field through its own chain: group + language → group + default →
    /// base + language → base + default (the doc comment is the caller's last link).
    pub fn resolve(&self, group: &str, lang: &str, method: &str) -> Resolved {
        let chain = [
            self.texts(Some(group), lang, method),
            self.texts(Some(group), &self.default_lang, method),
            self.texts(None, lang, method),
            self.texts(None, &self.default_lang, method),
        ];
        let mut r = Resolved {
            title: chain.iter().flatten().find_map(|t| t.title.clone()),
            description: chain.iter().flatten().find_map(|t| t.description.clone()),
            params: BTreeMap::new(),
        };
        for t in chain.iter().flatten().rev() {
            for (k, v) in &t.params {
                r.params.insert(k.clone(), v.clone());
            }
        }
        r
    }
}

/// A method's texts in one group and language, with the doc comment as last link. Borrows
/// the catalog's data where no translation applies, so building 10 000 tools copies nothing.
#[derive(Debug, Clone)]
pub struct MethodTexts<'a> {
    /// Title (never empty: falls back to the name).
    pub title: Cow<'a, str>,
    /// Description, if any.
    pub description: Option<Cow<'a, str>>,
    /// Input schema with translated parameter descriptions.
    pub input_schema: Cow<'a, serde_json::Value>,
}

impl<'a> MethodTexts<'a> {
    /// Resolves the texts of `info` for `group` and `lang`.
    pub fn of(info: &'a MethodInfo, t: &Translations, group: &str, lang: &str) -> Self {
        let r = t.resolve(group, lang, info.name());
        let title = match r.title {
            Some(t) => Cow::Owned(t),
            None => Cow::Borrowed(
                info.def
                    .annotations
                    .title
                    .or(info.title.as_deref())
                    .unwrap_or(info.name()),
            ),
        };
        let description = match r.description {
            Some(d) => Some(Cow::Owned(d)),
            None => info.description.as_deref().map(Cow::Borrowed),
        };
        let mut input_schema = Cow::Borrowed(&info.input_schema);
        if !r.params.is_empty()
            && let Some(props) = input_schema
                .to_mut()
                .get_mut("properties")
                .and_then(|p| p.as_object_mut())
        {
            for (name, text) in r.params {
                if let Some(serde_json::Value::Object(p)) = props.get_mut(&name) {
                    p.insert("description".into(), text.into());
                }
            }
        }
        Self {
            title,
            description,
            input_schema,
        }
    }
}
