//! Catalogs: built once at startup, one per (group, version), in a stable sorted order.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::group::ApiGroup;
use crate::registry::{MethodDef, SourceLocation};
use crate::schema;

/// A method with everything the request path reads, computed once.
pub struct MethodInfo {
    /// The compile-time record.
    pub def: &'static MethodDef,
    /// The title: the doc comment's first line.
    pub title: Option<String>,
    /// The description: the whole doc comment.
    pub description: Option<String>,
    /// The input schema (also the MCP `inputSchema`).
    pub input_schema: Value,
    /// The output schema (the `{result}` wrap), if the result is typed.
    pub output_schema: Option<Value>,
    /// Compiled when the server is built ([`Registry::compile_validators`]), so a schema that
    /// does not compile (an invalid `#[param(pattern)]`) fails `build()` rather than every call;
    /// on every core for large catalogs (~30 µs a method).
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

impl MethodInfo {
    fn new(def: &'static MethodDef) -> Self {
        let (title, description) = schema::split_docs(def.docs);
        Self {
            def,
            title,
            description,
            input_schema: schema::input_schema(def),
            output_schema: schema::output_schema(def),
            validator: OnceLock::new(),
        }
    }

    /// The method name.
    pub fn name(&self) -> &'static str {
        self.def.name
    }

    /// The compiled input validator (an error text if the schema does not compile).
    pub fn validator(&self) -> Result<&jsonschema::Validator, &str> {
        self.validator
            .get_or_init(|| schema::compile(&self.input_schema))
            .as_ref()
            .map_err(|e| e.as_str())
    }

    /// Compiles the input validator; when it does not compile, one error per parameter whose
    /// schema does not compile on its own (or one for the method when none does).
    fn check_validator(&self) -> Vec<SchemaError> {
        let Err(message) = self.validator() else {
            return Vec::new();
        };
        let error = |param: Option<&str>, message: &str| SchemaError {
            method: self.name().to_owned(),
            param: param.map(str::to_owned),
            at: self.def.location,
            message: message.to_owned(),
        };
        // Which parameters: each property compiled alone, with the definitions it may use.
        let defs = self.input_schema.get("$defs");
        let mut errors: Vec<SchemaError> = self
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(name, prop)| {
                let mut alone = prop.clone();
                if let (Value::Object(obj), Some(defs)) = (&mut alone, defs) {
                    obj.insert("$defs".into(), defs.clone());
                }
                schema::compile(&alone).err().map(|m| error(Some(name), &m))
            })
            .collect();
        if errors.is_empty() {
            errors.push(error(None, message));
        }
        errors
    }
}

/// A method's input schema that does not compile (an invalid `#[param(pattern)]` regex, say),
/// found when the server is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "method `{method}`{} at {at}: the input schema does not compile: {message}",
    param.as_ref().map(|p| format!(", parameter `{p}`,")).unwrap_or_default()
)]
pub struct SchemaError {
    /// The method.
    pub method: String,
    /// The parameter whose schema does not compile, when one can be named.
    pub param: Option<String>,
    /// Where the method is defined.
    pub at: SourceLocation,
    /// What the schema compiler said.
    pub message: String,
}

impl std::fmt::Debug for MethodInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MethodInfo")
            .field("name", &self.def.name)
            .finish_non_exhaustive()
    }
}

/// The methods of one group in one version, sorted by name.
#[derive(Debug)]
pub struct Catalog {
    group: ApiGroup,
    version: u32,
    methods: Vec<Arc<MethodInfo>>,
}

impl Catalog {
    /// The group.
    pub fn group(&self) -> ApiGroup {
        self.group
    }
    /// The version.
    pub fn version(&self) -> u32 {
        self.version
    }
    /// The methods, sorted by name.
    pub fn methods(&self) -> &[Arc<MethodInfo>] {
        &self.methods
    }
    /// A method by name.
    pub fn get(&self, name: &str) -> Option<&Arc<MethodInfo>> {
        self.methods
            .binary_search_by(|m| m.name().cmp(name))
            .ok()
            .map(|i| &self.methods[i])
    }
}

/// A problem found while building the catalogs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// Two methods with one name in one group and version.
    #[error(
        "duplicate method `{name}` in group `{group}` version v{version}: defined at {first} and at {second}"
    )]
    Duplicate {
        /// The method name.
        name: String,
        /// The group.
        group: String,
        /// The version.
        version: u32,
        /// One definition.
        first: SourceLocation,
        /// The other.
        second: SourceLocation,
    },
    /// One group name declared as MCP-published in one place and JSON-RPC-only in another.
    #[error("group `{group}` is declared both as MCP-published and as JSON-RPC only (see {at})")]
    GroupConflict {
        /// The group.
        group: String,
        /// A method that declares it differently from the first.
        at: SourceLocation,
    },
    /// A version range that is empty or starts below 1.
    #[error(
        "method `{name}` at {at}: version {since} / removed_in {removed_in:?} is not a valid range"
    )]
    BadVersions {
        /// The method.
        name: String,
        /// Where.
        at: SourceLocation,
        /// First version.
        since: u32,
        /// First version without it.
        removed_in: Option<u32>,
    },
    /// A method without any group.
    #[error("method `{name}` at {at} belongs to no group")]
    NoGroup {
        /// The method.
        name: String,
        /// Where.
        at: SourceLocation,
    },
}

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
        for def in &defs {
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
                catalogs.insert(
                    (*name, version),
                    Arc::new(Catalog {
                        group: *group,
                        version,
                        methods,
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
            .flat_map(|c| c.methods.iter())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{Handler, ParamDef, ParamKind, Params, ToolAnnotations};
    use crate::{Output, RequestContext, RpcError};

    fn ping(_: RequestContext, _: Params) -> Result<Output, RpcError> {
        Output::json(&"pong")
    }

    const G: ApiGroup = ApiGroup::mcp("g");

    const fn param(name: &'static str, constraints: &'static str) -> ParamDef {
        ParamDef {
            name,
            description: "",
            kind: ParamKind::Optional,
            schema: |g| g.subschema_for::<String>(),
            constraints,
        }
    }

    const fn def(name: &'static str, params: &'static [ParamDef]) -> MethodDef {
        MethodDef {
            name,
            groups: &[G],
            since: 1,
            removed_in: None,
            docs: "Ping.",
            params,
            annotations: ToolAnnotations::NONE,
            output_schema: |_| None,
            handler: Handler::Sync(ping),
            cache: None,
            lock: None,
            location: SourceLocation {
                file: "mcp-runtime/src/catalog.rs",
                line: 1,
                rust_path: "catalog::tests::ping",
            },
        }
    }

    /// A `#[param(pattern)]` the regex engine refuses, as the macro would write it (its own
    /// check at compile time is a light one: balanced groups and classes).
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
                "method `Bad.pattern`, parameter `sku`, at catalog::tests::ping \
                 (mcp-runtime/src/catalog.rs:1): the input schema does not compile: "
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
}
