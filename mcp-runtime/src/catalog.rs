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
    /// Compiled on first use: compiling costs ~30 µs, which 10 000 methods would pay at startup.
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
