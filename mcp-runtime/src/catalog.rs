//! Catalogs: built once at startup, one per (group, version), in a stable sorted order.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::group::ApiGroup;
use crate::record::{MethodDef, SourceLocation};
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
    pub(crate) validator: OnceLock<Result<jsonschema::Validator, String>>,
}

impl MethodInfo {
    pub(crate) fn new(def: &'static MethodDef) -> Self {
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
    pub(crate) fn check_validator(&self) -> Vec<SchemaError> {
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
    pub(crate) group: ApiGroup,
    pub(crate) version: u32,
    pub(crate) methods: Vec<Arc<MethodInfo>>,
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
