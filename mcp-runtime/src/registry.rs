//! The registry: every catalog of the server, built once at startup from the method records
//! (`#[rpc_method]`'s, collected with `inventory`, and those given to the builder), with every
//! problem reported at once.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::catalog::{Catalog, CatalogError, MethodInfo, PromptInfo, ResourceInfo, SchemaError};
use crate::group::ApiGroup;
use crate::record::{MethodDef, PromptDef, ResourceDef, SkillDef};
use crate::skill::SkillInfo;

/// Every catalog of the server.
#[derive(Debug)]
pub struct Registry {
    groups: Vec<ApiGroup>,
    catalogs: BTreeMap<(&'static str, u32), Arc<Catalog>>,
}

impl Registry {
    /// Builds the catalogs from method records, reporting every problem found.
    pub fn build(
        defs: impl IntoIterator<Item = &'static MethodDef>,
    ) -> Result<Self, Vec<CatalogError>> {
        Self::build_all(defs, [], [], [])
    }

    /// Builds the catalogs from method, resource, prompt and skill records, reporting every
    /// problem found (duplicates name both definitions).
    pub fn build_all(
        defs: impl IntoIterator<Item = &'static MethodDef>,
        resources: impl IntoIterator<Item = &'static ResourceDef>,
        prompts: impl IntoIterator<Item = &'static PromptDef>,
        skills: impl IntoIterator<Item = &'static SkillDef>,
    ) -> Result<Self, Vec<CatalogError>> {
        let mut skills: Vec<&'static SkillDef> = skills.into_iter().collect();
        skills.sort_by(|a, b| {
            (a.path, a.location.file, a.location.line).cmp(&(
                b.path,
                b.location.file,
                b.location.line,
            ))
        });
        let mut resources: Vec<&'static ResourceDef> = resources.into_iter().collect();
        let mut prompts: Vec<&'static PromptDef> = prompts.into_iter().collect();
        let key = |d: &MethodDef| (d.name, d.location.file, d.location.line);
        resources.sort_by(|a, b| key(a.method).cmp(&key(b.method)));
        prompts.sort_by(|a, b| key(a.method).cmp(&key(b.method)));
        let mut defs: Vec<&'static MethodDef> = defs.into_iter().collect();
        // inventory guarantees no order: sort so catalogs and errors are deterministic.
        defs.sort_by(|a, b| {
            (a.name, a.location.file, a.location.line).cmp(&(
                b.name,
                b.location.file,
                b.location.line,
            ))
        });
        let mut errors = Vec::new();
        let mut groups: BTreeMap<&'static str, ApiGroup> = BTreeMap::new();
        let mut max_version: BTreeMap<&'static str, u32> = BTreeMap::new();
        let calls = resources
            .iter()
            .map(|r| r.method)
            .chain(prompts.iter().map(|p| p.method));
        for def in defs.iter().filter(|d| d.name.starts_with("rpc.")) {
            errors.push(CatalogError::ReservedName {
                name: def.name.into(),
                at: def.location,
            });
        }
        for def in defs.iter().copied().chain(calls) {
            if def.since == 0 || def.removed_in.is_some_and(|r| r <= def.since) {
                errors.push(CatalogError::BadVersions {
                    name: def.name.into(),
                    at: def.location,
                    since: def.since,
                    removed_in: def.removed_in,
                });
            }
            if def.groups.is_empty() {
                errors.push(CatalogError::NoGroup {
                    name: def.name.into(),
                    at: def.location,
                });
            }
            for g in def.groups {
                if !def.scopes.is_empty() && !g.is_protected() {
                    errors.push(CatalogError::ScopesOnOpenGroup {
                        name: def.name.into(),
                        group: g.name().into(),
                        at: def.location,
                    });
                }
                let known = groups.entry(g.name()).or_insert(*g);
                if known != g {
                    errors.push(CatalogError::GroupConflict {
                        group: g.name().into(),
                        at: def.location,
                    });
                }
                let top = def.since.max(def.removed_in.unwrap_or(0));
                let e = max_version.entry(g.name()).or_insert(1);
                *e = (*e).max(top);
            }
        }
        let infos = method_infos(&defs);
        let mut resource_infos = Vec::new();
        for r in &resources {
            match ResourceInfo::new(r) {
                Ok(info) => resource_infos.push(Arc::new(info)),
                Err(e) => errors.push(*e),
            }
        }
        let mut skill_infos = Vec::new();
        for d in &skills {
            if d.groups.is_empty() {
                errors.push(CatalogError::BadSkill {
                    path: d.path.into(),
                    at: d.location,
                    reason: "it is published in no group".into(),
                });
            }
            for g in d.groups {
                if !d.scopes.is_empty() && !g.is_protected() {
                    errors.push(CatalogError::BadSkill {
                        path: d.path.into(),
                        at: d.location,
                        reason: format!(
                            "it requires scopes, but group `{}` is not protected \
                             (`ApiGroup::protected()`): no caller there has scopes, so nobody \
                             could read it",
                            g.name()
                        ),
                    });
                }
                let known = groups.entry(g.name()).or_insert(*g);
                if known != g {
                    errors.push(CatalogError::GroupConflict {
                        group: g.name().into(),
                        at: d.location,
                    });
                }
                let top = d.since.max(d.removed_in.unwrap_or(0));
                let e = max_version.entry(g.name()).or_insert(1);
                *e = (*e).max(top);
            }
            match SkillInfo::new(d) {
                Ok(info) => skill_infos.push(Arc::new(info)),
                Err(reason) => errors.push(CatalogError::BadSkill {
                    path: d.path.into(),
                    at: d.location,
                    reason,
                }),
            }
        }
        let prompt_infos: Vec<Arc<PromptInfo>> = prompts
            .iter()
            .map(|p| Arc::new(PromptInfo::new(p)))
            .collect();
        let in_catalog = |d: &MethodDef, name: &str, version: u32| {
            d.in_version(version) && d.groups.iter().any(|g| g.name() == name)
        };
        let mut catalogs = BTreeMap::new();
        for (name, group) in &groups {
            for version in 1..=max_version[name] {
                let methods: Vec<Arc<MethodInfo>> = infos
                    .iter()
                    .filter(|m| {
                        m.def.in_version(version) && m.def.groups.iter().any(|g| g.name() == *name)
                    })
                    .cloned()
                    .collect();
                for pair in methods.windows(2) {
                    if pair[0].name() == pair[1].name() {
                        errors.push(CatalogError::Duplicate {
                            name: pair[0].name().into(),
                            group: (*name).into(),
                            version,
                            first: pair[0].def.location,
                            second: pair[1].def.location,
                        });
                    }
                }
                let (mut fixed, mut templates): (Vec<_>, Vec<_>) = resource_infos
                    .iter()
                    .filter(|r| in_catalog(r.def.method, name, version))
                    .cloned()
                    .partition(|r| !r.def.is_template);
                let mut prompts: Vec<Arc<PromptInfo>> = prompt_infos
                    .iter()
                    .filter(|p| in_catalog(p.def.method, name, version))
                    .cloned()
                    .collect();
                for list in [&mut fixed, &mut templates] {
                    list.sort_by(|a, b| a.uri().cmp(b.uri()));
                    for pair in list.windows(2) {
                        if pair[0].uri() == pair[1].uri() {
                            errors.push(CatalogError::DuplicateResource {
                                uri: pair[0].uri().into(),
                                group: (*name).into(),
                                version,
                                first: pair[0].def.method.location,
                                second: pair[1].def.method.location,
                            });
                        }
                    }
                }
                // A JSON-RPC-only group has no tools, so no apps to show them in.
                for m in methods.iter().filter(|_| group.is_mcp()) {
                    let Some(app) = m.def.app else { continue };
                    let found = fixed
                        .binary_search_by(|r| r.uri().cmp(app.resource_uri))
                        .is_ok_and(|i| fixed[i].def.app.is_some());
                    if !found {
                        errors.push(CatalogError::AppNotFound {
                            name: m.name().into(),
                            uri: app.resource_uri.into(),
                            group: (*name).into(),
                            version,
                            at: m.def.location,
                        });
                    }
                }
                prompts.sort_by(|a, b| a.name().cmp(b.name()));
                for pair in prompts.windows(2) {
                    if pair[0].name() == pair[1].name() {
                        errors.push(CatalogError::DuplicatePrompt {
                            name: pair[0].name().into(),
                            group: (*name).into(),
                            version,
                            first: pair[0].def.method.location,
                            second: pair[1].def.method.location,
                        });
                    }
                }
                let mut skills: Vec<Arc<SkillInfo>> = skill_infos
                    .iter()
                    .filter(|s| {
                        s.def.in_version(version) && s.def.groups.iter().any(|g| g.name() == *name)
                    })
                    .cloned()
                    .collect();
                skills.sort_by(|a, b| a.uri().cmp(b.uri()));
                let skill_files = skill_files(&skills, &fixed, name, version, &mut errors);
                catalogs.insert(
                    (*name, version),
                    Arc::new(Catalog {
                        group: *group,
                        version,
                        methods,
                        resources: fixed,
                        templates,
                        prompts,
                        skills,
                        skill_files,
                    }),
                );
            }
        }
        if errors.is_empty() {
            Ok(Self {
                groups: groups.into_values().collect(),
                catalogs,
            })
        } else {
            Err(errors)
        }
    }

    /// The groups, sorted by name.
    pub fn groups(&self) -> &[ApiGroup] {
        &self.groups
    }

    /// Every catalog, sorted by group and version.
    pub fn catalogs(&self) -> impl Iterator<Item = &Arc<Catalog>> {
        self.catalogs.values()
    }

    /// The catalog of a group and version.
    pub fn catalog(&self, group: &str, version: u32) -> Option<&Arc<Catalog>> {
        self.catalogs
            .iter()
            .find(|((g, v), _)| *g == group && *v == version)
            .map(|(_, c)| c)
    }

    /// Compiles every method's input validator (each method once, however many catalogs it
    /// is in; on every core for large registries), reporting every schema that does not
    /// compile. `ServerBuilder::build` calls it, so no call ever meets an uncompiled schema.
    pub fn compile_validators(&self) -> Result<(), Vec<SchemaError>> {
        let mut seen = std::collections::HashSet::new();
        let methods: Vec<&Arc<MethodInfo>> = self
            .catalogs
            .values()
            .flat_map(|c| {
                c.methods
                    .iter()
                    .chain(c.resources.iter().chain(&c.templates).map(|r| &r.call))
                    .chain(c.prompts.iter().map(|p| &p.call))
            })
            .filter(|m| seen.insert(Arc::as_ptr(m)))
            .collect();
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let mut errors: Vec<SchemaError> = if methods.len() < 512 || threads < 2 {
            methods.iter().flat_map(|m| m.check_validator()).collect()
        } else {
            let chunk = methods.len().div_ceil(threads);
            std::thread::scope(|s| {
                let parts: Vec<_> = methods
                    .chunks(chunk)
                    .map(|part| {
                        s.spawn(move || {
                            part.iter()
                                .flat_map(|m| m.check_validator())
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                let mut errors = Vec::new();
                for (part, handle) in methods.chunks(chunk).zip(parts) {
                    match handle.join() {
                        Ok(v) => errors.extend(v),
                        // Compile that part here, where a panic propagates as it would
                        // without threads.
                        Err(_) => errors.extend(part.iter().flat_map(|m| m.check_validator())),
                    }
                }
                errors
            })
        };
        if errors.is_empty() {
            return Ok(());
        }
        errors.sort_by(|a, b| (&a.method, &a.param).cmp(&(&b.method, &b.param)));
        Err(errors)
    }

    /// The versions of a group, ascending.
    pub fn versions(&self, group: &str) -> Vec<u32> {
        self.catalogs
            .keys()
            .filter(|(g, _)| *g == group)
            .map(|(_, v)| *v)
            .collect()
    }
}

/// The methods' schemas, built on every core for large catalogs: each method's schema
/// generation is independent, and it is most of a 10 000-method startup.
fn method_infos(defs: &[&'static MethodDef]) -> Vec<Arc<MethodInfo>> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if defs.len() < 512 || threads < 2 {
        return defs.iter().map(|d| Arc::new(MethodInfo::new(d))).collect();
    }
    let chunk = defs.len().div_ceil(threads);
    std::thread::scope(|s| {
        let parts: Vec<_> = defs
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|d| Arc::new(MethodInfo::new(d)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut infos = Vec::with_capacity(defs.len());
        for (part, handle) in defs.chunks(chunk).zip(parts) {
            match handle.join() {
                Ok(v) => infos.extend(v),
                // A panicking schema fn: build that part here, where the panic propagates
                // exactly as it would without threads.
                Err(_) => infos.extend(part.iter().map(|d| Arc::new(MethodInfo::new(d)))),
            }
        }
        infos
    })
}

/// Every file of a catalog's skills by URI, sorted (`skills` sorted by their `SKILL.md`'s URI,
/// which it checks for duplicates); a file whose URI is another's, or a fixed resource's, is a
/// duplicate resource.
fn skill_files(
    skills: &[Arc<SkillInfo>],
    fixed: &[Arc<ResourceInfo>],
    group: &str,
    version: u32,
    errors: &mut Vec<CatalogError>,
) -> Vec<(String, usize, usize)> {
    let mut files: Vec<(String, usize, usize)> = skills
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            let files = s.files();
            (0..files.len()).map(move |j| (files[j].uri.clone(), i, j))
        })
        .collect();
    files.sort();
    let mut duplicate = |uri: &str, first, second| {
        errors.push(CatalogError::DuplicateResource {
            uri: uri.into(),
            group: group.into(),
            version,
            first,
            second,
        });
    };
    for pair in files.windows(2) {
        if pair[0].0 == pair[1].0 {
            let (a, b) = (&skills[pair[0].1], &skills[pair[1].1]);
            duplicate(&pair[0].0, a.def.location, b.def.location);
        }
    }
    for (uri, i, _) in &files {
        if let Ok(r) = fixed.binary_search_by(|r| r.uri().cmp(uri)) {
            duplicate(uri, fixed[r].def.method.location, skills[*i].def.location);
        }
    }
    files.dedup_by(|a, b| a.0 == b.0);
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::ParamDef;
    use crate::record::fixtures::method as def;

    const fn param(name: &'static str, constraints: &'static str) -> ParamDef {
        crate::record::fixtures::param(name, |g| g.subschema_for::<String>(), constraints)
    }

    /// A pattern the regex engine refuses, in a record registered at run time (the macro
    /// refuses it at compile time, so this is the build's own check).
    static BAD_PATTERN: MethodDef = def(
        "Bad.pattern",
        &[
            param("ok", r#"{"pattern":"^[a-z]+$"}"#),
            param("sku", r#"{"pattern":"[z-a]"}"#),
        ],
    );
    static GOOD: MethodDef = def("Good.ping", &[param("who", r#"{"pattern":"^\\w+$"}"#)]);

    #[test]
    fn every_validator_compiles_at_build_and_a_bad_one_names_its_parameter() {
        let registry = Registry::build([&GOOD, &BAD_PATTERN]).unwrap();
        let errors = registry.compile_validators().unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        let e = &errors[0];
        assert_eq!(
            (e.method.as_str(), e.param.as_deref()),
            ("Bad.pattern", Some("sku"))
        );
        let text = e.to_string();
        assert!(
            text.starts_with(
                "method `Bad.pattern`, parameter `sku`, at record::fixtures::ping \
                 (mcp-runtime/src/record.rs:1): the input schema does not compile: "
            ),
            "{text}"
        );
        // The good one was compiled at once: calls never compile.
        let good = registry.catalog("g", 1).and_then(|c| c.get("Good.ping"));
        assert!(good.is_some_and(|m| m.validator.get().is_some_and(Result::is_ok)));
        assert!(
            Registry::build([&GOOD])
                .unwrap()
                .compile_validators()
                .is_ok()
        );
    }

    #[test]
    fn a_bad_pattern_fails_the_server_build() {
        let built = crate::Server::builder()
            .without_registered_methods()
            .method(&GOOD)
            .method(&BAD_PATTERN)
            .build();
        match built {
            Err(crate::BuildError::Schema(errors)) => {
                assert_eq!(errors.len(), 1);
                assert_eq!(errors[0].method, "Bad.pattern");
                assert_eq!(errors[0].param.as_deref(), Some("sku"));
            }
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("a server with an invalid pattern was built"),
        }
    }

    /// A skill `audit` of one `SKILL.md`, in group `g`.
    const AUDIT: crate::record::SkillDef = crate::record::SkillDef {
        path: "audit",
        files: &[crate::record::SkillFile {
            path: "SKILL.md",
            mime_type: "text/markdown",
            bytes: b"---\nname: audit\ndescription: Audits.\n---\n",
        }],
        groups: &[crate::ApiGroup::mcp("g")],
        since: 1,
        removed_in: None,
        scopes: &[],
        translations: &[],
        location: crate::record::SourceLocation {
            file: "skills.rs",
            line: 3,
            rust_path: "skills::Audit",
        },
    };

    #[test]
    fn a_scoped_skill_in_an_open_group_fails_the_build() {
        static SKILL: crate::record::SkillDef = crate::record::SkillDef {
            scopes: &["orders:audit"],
            ..AUDIT
        };
        let errors = Registry::build_all([&GOOD], [], [], [&SKILL]).unwrap_err();
        let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                "skill `audit` at skills::Audit (skills.rs:3): it requires scopes, but group `g` \
                 is not protected (`ApiGroup::protected()`): no caller there has scopes, so \
                 nobody could read it"
            ]
        );
    }

    #[test]
    fn a_skill_s_translations_are_its_languages_and_the_server_s() {
        static FR: [crate::record::SkillFile; 1] = [crate::record::SkillFile {
            path: "SKILL.md",
            mime_type: "text/markdown",
            bytes: b"---\nname: audit\ndescription: Audite.\n---\n",
        }];
        static EXTRA: [crate::record::SkillFile; 1] = [crate::record::SkillFile {
            path: "more.md",
            mime_type: "text/markdown",
            bytes: b"more",
        }];
        static SKILL: crate::record::SkillDef = crate::record::SkillDef {
            translations: &[crate::record::SkillTranslation {
                lang: "FR",
                files: &FR,
            }],
            ..AUDIT
        };
        let registry = Registry::build_all([&GOOD], [], [], [&SKILL]).unwrap();
        let skill = &registry.catalog("g", 1).unwrap().skills()[0];
        assert_eq!(skill.languages().collect::<Vec<_>>(), ["fr"]);
        assert_eq!(skill.description(), "Audits.");
        let fr = skill.variant(Some("fr"));
        assert!(String::from_utf8_lossy(&fr.entry).contains("Audite."));
        assert!(String::from_utf8_lossy(&skill.variant(Some("de")).entry).contains("Audits."));
        let t = crate::i18n::Translations::new(
            "en",
            Vec::new(),
            &registry,
            crate::i18n::Strictness::Error,
        )
        .unwrap();
        assert_eq!(t.languages(), ["en", "fr"]);
        // A translation adds no file the skill does not have.
        static ADDS: crate::record::SkillDef = crate::record::SkillDef {
            translations: &[crate::record::SkillTranslation {
                lang: "fr",
                files: &EXTRA,
            }],
            ..SKILL
        };
        let errors = Registry::build_all([&GOOD], [], [], [&ADDS]).unwrap_err();
        assert_eq!(
            errors[0].to_string(),
            "skill `audit` at skills::Audit (skills.rs:3): its `fr` translation: `more.md` is \
             not a file of the skill (a translation replaces the skill's files, it adds none)"
        );
    }

    #[test]
    fn scopes_on_a_group_nobody_is_identified_in_fail_the_build() {
        static SCOPED: MethodDef = MethodDef {
            scopes: &["orders:write"],
            ..crate::record::fixtures::method("Good.scoped", &[])
        };
        let errors = Registry::build([&GOOD, &SCOPED]).unwrap_err();
        let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                "method `Good.scoped` at record::fixtures::ping (mcp-runtime/src/record.rs:1) \
              requires scopes, but group `g` is not protected (`ApiGroup::protected()`): no \
              caller there has scopes, so nobody could call it"
            ]
        );
    }

    #[test]
    fn settings_naming_unknown_groups_or_methods_fail_the_build() {
        let built = crate::Server::builder()
            .without_registered_methods()
            .method(&GOOD)
            .mcp_stateful("gg")
            .call_timeout_for("Good.pong", std::time::Duration::from_secs(1))
            .call_timeout_for("Good.ping", std::time::Duration::from_secs(1))
            .build();
        match built {
            Err(crate::BuildError::Settings(errors)) => assert_eq!(
                errors,
                [
                    "mcp_stateful(\"gg\"): no MCP group `gg` (MCP groups: g)",
                    "call_timeout_for(\"Good.pong\"): no method `Good.pong`",
                ]
            ),
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("a server with unknown names in its settings was built"),
        }
    }

    static RESERVED: MethodDef = def("rpc.discover", &[]);

    #[test]
    fn a_method_named_rpc_dot_anything_fails_the_build() {
        let errors = Registry::build([&GOOD, &RESERVED]).unwrap_err();
        let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                "method `rpc.discover` at record::fixtures::ping (mcp-runtime/src/record.rs:1): names that begin with `rpc.` are reserved by JSON-RPC 2.0 (the server answers `rpc.discover` itself)"
            ]
        );
    }

    static READ_A: MethodDef = def("resource:x://a", &[]);
    static READ_B: MethodDef = def("resource:x://a", &[]);
    const fn resource(method: &'static MethodDef) -> ResourceDef {
        ResourceDef {
            method,
            name: "a",
            uri: "x://a",
            is_template: false,
            mime_type: None,
            size: None,
            annotations: crate::record::Annotations::NONE,
            icons: &[],
            completions: &[],
            app: None,
        }
    }
    static RES_A: ResourceDef = resource(&READ_A);
    static RES_B: ResourceDef = resource(&READ_B);
    static PROMPT_CALL: MethodDef = def("prompt:p", &[]);
    static PROMPT_A: PromptDef = PromptDef {
        method: &PROMPT_CALL,
        name: "p",
        icons: &[],
        completions: &[],
    };
    static PROMPT_B: PromptDef = PromptDef {
        method: &PROMPT_CALL,
        name: "p",
        icons: &[],
        completions: &[],
    };

    #[test]
    fn a_duplicate_uri_or_prompt_name_names_both_definitions() {
        let errors =
            Registry::build_all([&GOOD], [&RES_A, &RES_B], [&PROMPT_A, &PROMPT_B], []).unwrap_err();
        let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
        let at = "record::fixtures::ping (mcp-runtime/src/record.rs:1)";
        assert_eq!(
            texts,
            [
                format!(
                    "duplicate resource `x://a` in group `g` version v1: defined at {at} and at {at}"
                ),
                format!(
                    "duplicate prompt `p` in group `g` version v1: defined at {at} and at {at}"
                ),
            ]
        );
        // One of each: a catalog with a resource and a prompt beside its methods.
        let registry = Registry::build_all([&GOOD], [&RES_A], [&PROMPT_A], []).unwrap();
        let c = registry.catalog("g", 1).unwrap();
        assert_eq!((c.resources().len(), c.prompts().len()), (1, 1));
        assert!(c.resolve("x://a").is_some() && c.prompt("p").is_some());
    }
}
