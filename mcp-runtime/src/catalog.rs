//! Catalogs: built once at startup, one per (group, version), in a stable sorted order.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::error::RpcError;
use crate::group::ApiGroup;
use crate::record::{AppUi, MethodDef, PromptDef, ResourceDef, SourceLocation};
use crate::schema;
use crate::skill::SkillInfo;
use crate::uri_template::UriTemplate;

/// Whether `identity` has every scope of `required` (nothing required: anyone).
pub(crate) fn admits(required: &[&str], identity: Option<&crate::Identity>) -> bool {
    required.is_empty() || identity.is_some_and(|who| required.iter().all(|s| who.has_scope(s)))
}

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
    /// Whether a caller with `identity` may call it: it requires no scope, or the identity has
    /// every one it requires.
    pub fn admits(&self, identity: Option<&crate::Identity>) -> bool {
        admits(self.def.scopes, identity)
    }

    /// [`Self::admits`] as the call's error.
    pub(crate) fn check_scopes(&self, identity: Option<&crate::Identity>) -> Result<(), RpcError> {
        if self.admits(identity) {
            Ok(())
        } else {
            Err(RpcError::insufficient_scope(self.def.name, self.def.scopes))
        }
    }

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
    /// The parameters mirrored in headers (`#[param(header = "...")]`, SEP-2243): their name,
    /// header name and JSON type (`string`, `integer` or `boolean`), or the error of one that
    /// cannot be mirrored.
    pub(crate) fn mirrored(&self) -> Vec<Result<Mirrored, SchemaError>> {
        let Some(props) = self
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
        else {
            return Vec::new();
        };
        props
            .iter()
            .filter_map(|(name, p)| {
                let header = p.get("x-mcp-header")?.as_str()?;
                let ty = single_type(p);
                Some(match ty {
                    Some(t @ ("string" | "integer" | "boolean")) => Ok(Mirrored {
                        param: name.clone(),
                        header: format!("mcp-param-{}", header.to_ascii_lowercase()),
                        ty: t,
                    }),
                    _ => Err(SchemaError {
                        method: self.name().to_owned(),
                        param: Some(name.clone()),
                        at: self.def.location,
                        message: format!(
                            "`header = \"{header}\"` mirrors only a string, integer or boolean parameter"
                        ),
                    }),
                })
            })
            .collect()
    }

    pub(crate) fn check_validator(&self) -> Vec<SchemaError> {
        let mut errors: Vec<SchemaError> = self
            .mirrored()
            .into_iter()
            .filter_map(Result::err)
            .collect();
        let Err(message) = self.validator() else {
            return errors;
        };
        let error = |param: Option<&str>, message: &str| SchemaError {
            method: self.name().to_owned(),
            param: param.map(str::to_owned),
            at: self.def.location,
            message: message.to_owned(),
        };
        // Which parameters: each property compiled alone, with the definitions it may use.
        let defs = self.input_schema.get("$defs");
        let mut alone: Vec<SchemaError> = self
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
        if alone.is_empty() {
            alone.push(error(None, message));
        }
        errors.extend(alone);
        errors
    }
}

/// A parameter mirrored in a header (SEP-2243 `x-mcp-header`).
#[derive(Debug, Clone)]
pub(crate) struct Mirrored {
    /// The parameter.
    pub param: String,
    /// The header, lowercase (`mcp-param-region`).
    pub header: String,
    /// `string`, `integer` or `boolean`.
    pub ty: &'static str,
}

/// The one JSON type of a property (`Option`'s `null` aside).
fn single_type(p: &Value) -> Option<&'static str> {
    let name = |t: &str| -> Option<&'static str> {
        ["string", "integer", "boolean", "number", "object", "array"]
            .into_iter()
            .find(|k| *k == t)
    };
    match p.get("type") {
        Some(Value::String(t)) => name(t),
        Some(Value::Array(ts)) => {
            let mut it = ts.iter().filter_map(Value::as_str).filter(|t| *t != "null");
            let t = it.next()?;
            it.next().is_none().then(|| name(t)).flatten()
        }
        _ => {
            let alts = p.get("anyOf")?.as_array()?;
            let mut it = alts
                .iter()
                .filter(|a| a.get("type") != Some(&Value::from("null")));
            let t = single_type(it.next()?)?;
            it.next().is_none().then_some(t)
        }
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

/// How one argument reaches its parameter: prompt arguments and template variables are
/// strings on the wire, converted to the parameter's type the way JSON params are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StringArg {
    /// The parameter's JSON name.
    pub name: &'static str,
    /// Whether the parameter takes the string as is; else the string is read as JSON (`"3"`
    /// for a `u32`), and kept as a string when it is not JSON (so validation names it).
    pub as_string: bool,
}

fn string_args(call: &MethodInfo) -> Vec<StringArg> {
    call.def
        .params
        .iter()
        .map(|p| StringArg {
            name: p.name,
            as_string: call
                .input_schema
                .get("properties")
                .and_then(|ps| ps.get(p.name))
                .is_none_or(|s| accepts_string(s, &call.input_schema, 0)),
        })
        .collect()
}

/// Whether a schema takes a JSON string (following local `$ref`s, a few levels deep).
fn accepts_string(s: &Value, root: &Value, depth: u8) -> bool {
    if depth > 8 {
        return true;
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        return r
            .strip_prefix('#')
            .and_then(|p| root.pointer(p))
            .is_none_or(|t| accepts_string(t, root, depth + 1));
    }
    let any = |k: &str| {
        s.get(k)
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|x| accepts_string(x, root, depth + 1)))
    };
    match s.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => {
            any("anyOf")
                || any("oneOf")
                || s.get("enum")
                    .and_then(Value::as_array)
                    .is_some_and(|e| e.iter().any(Value::is_string))
                || (s.get("anyOf").is_none() && s.get("oneOf").is_none())
        }
    }
}

/// Converts string arguments (prompt arguments, template variables) into named params.
pub(crate) fn bind_strings<'a>(
    args: &[StringArg],
    values: impl IntoIterator<Item = (&'a str, String)>,
) -> crate::record::Params {
    let mut out = crate::record::Params::new();
    for (name, value) in values {
        let as_string = args
            .iter()
            .find(|a| a.name == name)
            .is_none_or(|a| a.as_string);
        let v = if as_string {
            Value::String(value)
        } else {
            serde_json::from_str(&value).unwrap_or(Value::String(value))
        };
        out.insert(name.to_owned(), v);
    }
    out
}

/// The values a URI gives a template's variables, by name.
pub type Bindings<'t> = Vec<(&'t str, String)>;

/// A resource or resource template with what requests read, computed once.
pub struct ResourceInfo {
    /// The compile-time record.
    pub def: &'static ResourceDef,
    /// The call (schemas, validator) through the core pipeline.
    pub call: Arc<MethodInfo>,
    /// The parsed template, for templates.
    pub(crate) template: Option<UriTemplate>,
    pub(crate) args: Vec<StringArg>,
    /// An MCP App's `_meta` (`{"ui": ...}`), written once: every read of the page carries it.
    pub(crate) app_meta: Option<serde_json::Value>,
}

impl ResourceInfo {
    pub(crate) fn new(def: &'static ResourceDef) -> Result<Self, Box<CatalogError>> {
        let call = Arc::new(MethodInfo::new(def.method));
        if def.app.is_some() && (def.is_template || !def.uri.starts_with("ui://")) {
            // Records built at run time are checked here as the macro checks its own.
            return Err(Box::new(CatalogError::BadUri {
                uri: def.uri.to_owned(),
                at: def.method.location,
                reason: "an MCP App is a fixed `ui://` URI".to_owned(),
            }));
        }
        let template = if def.is_template {
            let t = UriTemplate::parse(def.uri).map_err(|e| {
                Box::new(CatalogError::BadUri {
                    uri: def.uri.to_owned(),
                    at: def.method.location,
                    reason: e.reason.to_owned(),
                })
            })?;
            // Records built at run time are checked here as the macro checks its own.
            let vars: Vec<&str> = t.variables().collect();
            let params: Vec<&str> = def.method.params.iter().map(|p| p.name).collect();
            if vars.iter().any(|v| !params.contains(v)) || params.iter().any(|p| !vars.contains(p))
            {
                return Err(Box::new(CatalogError::BadUri {
                    uri: def.uri.to_owned(),
                    at: def.method.location,
                    reason: format!(
                        "the template's variables {vars:?} are not the function's parameters {params:?}"
                    ),
                }));
            }
            Some(t)
        } else {
            None
        };
        Ok(Self {
            def,
            args: string_args(&call),
            call,
            template,
            app_meta: def.app.as_ref().map(AppUi::meta),
        })
    }

    /// The URI or URI template.
    pub fn uri(&self) -> &'static str {
        self.def.uri
    }
}

impl std::fmt::Debug for ResourceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceInfo")
            .field("uri", &self.def.uri)
            .finish_non_exhaustive()
    }
}

/// A prompt with what requests read, computed once.
pub struct PromptInfo {
    /// The compile-time record.
    pub def: &'static PromptDef,
    /// The call (schemas, validator) through the core pipeline.
    pub call: Arc<MethodInfo>,
    pub(crate) args: Vec<StringArg>,
}

impl PromptInfo {
    pub(crate) fn new(def: &'static PromptDef) -> Self {
        let call = Arc::new(MethodInfo::new(def.method));
        Self {
            def,
            args: string_args(&call),
            call,
        }
    }

    /// The prompt's name.
    pub fn name(&self) -> &'static str {
        self.def.name
    }
}

impl std::fmt::Debug for PromptInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptInfo")
            .field("name", &self.def.name)
            .finish_non_exhaustive()
    }
}

/// The methods, resources and prompts of one group in one version, each sorted.
#[derive(Debug)]
pub struct Catalog {
    pub(crate) group: ApiGroup,
    pub(crate) version: u32,
    pub(crate) methods: Vec<Arc<MethodInfo>>,
    /// Fixed-URI resources, sorted by URI.
    pub(crate) resources: Vec<Arc<ResourceInfo>>,
    /// Resource templates, sorted by template.
    pub(crate) templates: Vec<Arc<ResourceInfo>>,
    /// Prompts, sorted by name.
    pub(crate) prompts: Vec<Arc<PromptInfo>>,
    /// Skills, sorted by the URI of their `SKILL.md`.
    pub(crate) skills: Vec<Arc<SkillInfo>>,
    /// Every file of every skill by URI (sorted): the skill's index and the file's.
    pub(crate) skill_files: Vec<(String, usize, usize)>,
}

impl Catalog {
    /// The group.
    pub fn group(&self) -> ApiGroup {
        self.group
    }
    /// Whether any call of the catalog is rate limited (its group has a default, or one of
    /// its methods a limit of its own).
    pub fn is_rate_limited(&self) -> bool {
        self.group.default_rate_limit().is_some()
            || self.methods().iter().any(|m| m.def.rate_limit.is_some())
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
    /// The fixed-URI resources, sorted by URI.
    pub fn resources(&self) -> &[Arc<ResourceInfo>] {
        &self.resources
    }
    /// The resource templates, sorted by template.
    pub fn resource_templates(&self) -> &[Arc<ResourceInfo>] {
        &self.templates
    }
    /// The prompts, sorted by name.
    pub fn prompts(&self) -> &[Arc<PromptInfo>] {
        &self.prompts
    }
    /// A prompt by name.
    pub fn prompt(&self, name: &str) -> Option<&Arc<PromptInfo>> {
        self.prompts
            .binary_search_by(|p| p.name().cmp(name))
            .ok()
            .map(|i| &self.prompts[i])
    }
    /// The resource a URI names: a fixed one, else the first template (in sorted order) that
    /// matches, with its variables' values.
    pub fn resolve(&self, uri: &str) -> Option<(&Arc<ResourceInfo>, Bindings<'_>)> {
        if let Ok(i) = self.resources.binary_search_by(|r| r.uri().cmp(uri)) {
            return Some((&self.resources[i], Vec::new()));
        }
        self.templates.iter().find_map(|r| {
            let t = r.template.as_ref()?;
            t.matches(uri).map(|vars| (r, vars))
        })
    }
    /// The skills, sorted by the URI of their `SKILL.md`.
    pub fn skills(&self) -> &[Arc<SkillInfo>] {
        &self.skills
    }
    /// A skill by the URI of its `SKILL.md`.
    pub fn skill(&self, uri: &str) -> Option<&Arc<SkillInfo>> {
        self.skills
            .binary_search_by(|s| s.uri().cmp(uri))
            .ok()
            .map(|i| &self.skills[i])
    }
    /// A file of one of the skills, by its URI: its skill and its place among the skill's
    /// files (the same in every language, [`SkillInfo::variant`]).
    pub(crate) fn skill_file(&self, uri: &str) -> Option<(&Arc<SkillInfo>, usize)> {
        let i = self
            .skill_files
            .binary_search_by(|(u, _, _)| u.as_str().cmp(uri))
            .ok()?;
        let (_, skill, file) = self.skill_files[i];
        Some((&self.skills[skill], file))
    }
    /// A resource template by its template text.
    pub fn template(&self, template: &str) -> Option<&Arc<ResourceInfo>> {
        self.templates
            .binary_search_by(|r| r.uri().cmp(template))
            .ok()
            .map(|i| &self.templates[i])
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
    /// A method requiring scopes in a group that is not protected: no caller there has an
    /// identity, so nobody could call it.
    #[error(
        "method `{name}` at {at} requires scopes, but group `{group}` is not protected (`ApiGroup::protected()`): no caller there has scopes, so nobody could call it"
    )]
    ScopesOnOpenGroup {
        /// The method.
        name: String,
        /// The group.
        group: String,
        /// Where.
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
    /// A skill that breaks a rule of SEP-2640 or of the Agent Skills format (records built at
    /// run time; `#[mcp_skill]` checks its own when it expands, the frontmatter here).
    #[error("skill `{path}` at {at}: {reason}")]
    BadSkill {
        /// The skill's path.
        path: String,
        /// Where it is declared.
        at: SourceLocation,
        /// What is wrong.
        reason: String,
    },
    /// A tool linked to an MCP App (`#[mcp_tool(app = "ui://...")]`) that its group and
    /// version do not have.
    #[error(
        "tool `{name}` at {at} shows its results in the app `{uri}`, but group `{group}` version v{version} has no app resource with that URI (`#[mcp_resource(uri = \"{uri}\", app, ...)]` in the same groups and versions)"
    )]
    AppNotFound {
        /// The tool.
        name: String,
        /// The app's URI.
        uri: String,
        /// The group.
        group: String,
        /// The version.
        version: u32,
        /// Where the tool is defined.
        at: SourceLocation,
    },
    /// Two resources (or two templates) with one URI in one group and version.
    #[error(
        "duplicate resource `{uri}` in group `{group}` version v{version}: defined at {first} and at {second}"
    )]
    DuplicateResource {
        /// The URI or template.
        uri: String,
        /// The group.
        group: String,
        /// The version.
        version: u32,
        /// One definition.
        first: SourceLocation,
        /// The other.
        second: SourceLocation,
    },
    /// Two prompts with one name in one group and version.
    #[error(
        "duplicate prompt `{name}` in group `{group}` version v{version}: defined at {first} and at {second}"
    )]
    DuplicatePrompt {
        /// The prompt name.
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
    /// A URI template that does not parse (records registered at run time; the macro checks
    /// its own at compile time).
    #[error("resource `{uri}` at {at}: {reason}")]
    BadUri {
        /// The template.
        uri: String,
        /// Where.
        at: SourceLocation,
        /// What is wrong.
        reason: String,
    },
    /// A method without any group.
    #[error("method `{name}` at {at} belongs to no group")]
    NoGroup {
        /// The method.
        name: String,
        /// Where.
        at: SourceLocation,
    },
    /// A method whose name begins with `rpc.`, which JSON-RPC 2.0 reserves for rpc-internal
    /// methods (the server answers `rpc.discover` itself).
    #[error(
        "method `{name}` at {at}: names that begin with `rpc.` are reserved by JSON-RPC 2.0 (the server answers `rpc.discover` itself)"
    )]
    ReservedName {
        /// The method.
        name: String,
        /// Where.
        at: SourceLocation,
    },
}
