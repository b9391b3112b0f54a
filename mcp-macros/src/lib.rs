//! Procedural macros of `mcp-runtime`. Use them through `mcp_runtime::prelude`, never directly:
//! the generated code refers to `::mcp_runtime::__private` (override with `crate = "..."`).
//!
//! Structured like serde_derive: each macro parses its attributes (`attr`), builds a model of
//! the item (`model`), checks it against the rules (`check`, one function per rule) and only
//! then expands it (`expand`, small expanders). Every error is accumulated in a `Ctxt` at the
//! span of the user's token; on error the user's item is re-emitted so other diagnostics and
//! IDEs keep working. `driver` runs these steps on `proc_macro2` tokens.

use proc_macro::TokenStream;

mod attr;
mod check;
mod ctxt;
mod derive_error;
mod derive_schema;
mod driver;
mod expand;
mod listener;
mod model;
mod skill;
mod uri;

/// Publishes a function as an RPC method (and, in MCP groups, as an MCP tool).
///
/// Keys: `name = "Svc.method"`, `groups = [GROUP, ...]`, `version = N` (first version, default 1),
/// `removed_in = M`, `crate = "path"`. Parameters take `#[param(default = EXPR, rename = "..",
/// context)]` and doc comments (their descriptions).
#[proc_macro_attribute]
pub fn rpc_method(args: TokenStream, item: TokenStream) -> TokenStream {
    driver::rpc_method(args.into(), item.into()).into()
}

/// MCP tool annotations of an `#[rpc_method]`: `read_only_hint`, `destructive_hint`,
/// `idempotent_hint`, `open_world_hint` (each `key` or `key = bool`) and `title = ".."`.
/// Hints left out are left out of the tool. It never affects publication.
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, item: TokenStream) -> TokenStream {
    driver::mcp_tool(args.into(), item.into()).into()
}

/// Publishes a function (sync or `async`) as an MCP resource: a fixed URI, or a URI template
/// whose variables are the function's JSON parameters. Reading it is a call, as for an RPC
/// method (same parameters, context parameters, defaults, doc comments, `Result<T, E>`), but it
/// is not a method or tool of its groups.
///
/// Keys: `uri = "scheme:..."` or `uri_template = "scheme://.../{var}/{+path}"` (exactly one;
/// level 1 `{var}` and reserved `{+var}` expressions, each variable once, a literal between two
/// of them, and the variables are the JSON parameters' names), `name = ".."` (default: the
/// function's name), `mime_type = ".."`, `groups = [GROUP, ...]`, `version = N`,
/// `removed_in = M`, `size = N` (bytes, fixed `uri` only), `audience = ["user", "assistant"]`,
/// `priority = 0.5` (0 to 1), `last_modified = "2025-01-12T15:00:58Z"`, `icon(src = "https://..",
/// mime_type = "image/png", sizes = ["48x48"], theme = "light" | "dark")` (repeatable),
/// `cache(ttl = "60s", envs = ["prod"])`, `crate = "path"`. It returns a `String` (text), a
/// `Blob`, `ResourceContent`s, or any `serde::Serialize` value (JSON).
///
/// A template variable's parameter may take `#[complete(with = f)]`: `f` is
/// `fn(&CompletionRequest) -> R` or `async fn(CompletionRequest) -> R`, `R` a `Vec<String>`,
/// `Vec<&str>`, `Completion`, or one of them in a `Result`.
#[proc_macro_attribute]
pub fn mcp_resource(args: TokenStream, item: TokenStream) -> TokenStream {
    driver::mcp_resource(args.into(), item.into()).into()
}

/// Publishes a function (sync or `async`) as an MCP prompt. Its JSON parameters are the
/// prompt's arguments: their names, their doc comments (descriptions), required unless
/// `Option<T>` or `#[param(default = ..)]`; values arrive as strings and are converted to the
/// parameter types before the call. Context parameters work as for an RPC method.
///
/// Keys: `name = ".."` (default: the function's name; `^[a-zA-Z0-9_.-]{1,128}$`),
/// `groups = [GROUP, ...]`, `version = N`, `removed_in = M`, `icon(src = "https://..", ...)`
/// (repeatable, as for `#[mcp_resource]`), `crate = "path"`. It returns `Vec<PromptMessage>`, a
/// `PromptMessage`, a `PromptResult` or a `String` (one user message), or one of them in a
/// `Result<T, E>`.
///
/// An argument may take `#[complete(with = f)]`, as a template variable of `#[mcp_resource]`.
#[proc_macro_attribute]
pub fn mcp_prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    driver::mcp_prompt(args.into(), item.into()).into()
}

/// Publishes the `#[rpc_method]`s of an impl block; the instance comes from the server's state
/// (`ServerBuilder::state`).
///
/// Keys: `name = "Catalog"` (default: the type name), `concat = "."` (between name and method),
/// `groups = [...]` and `version = N` (defaults for its methods), `crate = "path"`.
#[proc_macro_attribute]
pub fn rpc_service(args: TokenStream, item: TokenStream) -> TokenStream {
    driver::rpc_service(args.into(), item.into()).into()
}

/// Registers a function as a listener of a pipeline event: `#[rpc_listener(event =
/// "post_response", priority = 10)]` on `async fn f(event: &mut Event<'_>) -> Result<(), RpcError>`
/// (or a sync fn). Events: request, pre_execute, post_execute, response, error, post_response.
#[proc_macro_attribute]
pub fn rpc_listener(args: TokenStream, item: TokenStream) -> TokenStream {
    driver::rpc_listener(args.into(), item.into()).into()
}

/// Publishes a directory of the crate as an MCP skill (SEP-2640, the
/// `io.modelcontextprotocol/skills` extension), on a unit struct that names it:
/// `#[mcp_skill(dir = "skills/shopping", groups = [MCP])] pub struct Shopping;`.
///
/// The directory (relative to the crate's `Cargo.toml`) holds a `SKILL.md` whose YAML
/// frontmatter gives the skill's `name` (the directory's name) and `description`, and any
/// supporting files; each is embedded in the binary and served as
/// `skill://[<prefix>/]<name>/<file>`. Keys: `dir`, `groups`, `prefix = "acme/billing"`,
/// `version`, `removed_in`, `crate`.
#[proc_macro_attribute]
pub fn mcp_skill(args: TokenStream, item: TokenStream) -> TokenStream {
    driver::mcp_skill(args.into(), item.into()).into()
}

/// Converts an error type into `RpcError`: `#[rpc(code = -32404)]` on the type or on each
/// variant (default -32603). The `Display` text is the message, the type name the exception.
#[proc_macro_derive(RpcError, attributes(rpc))]
pub fn derive_rpc_error(input: TokenStream) -> TokenStream {
    driver::derive_rpc_error(input.into()).into()
}

/// Derives `JsonSchema` (schemars' trait) exactly as schemars' own derive does, with the same
/// attributes (`#[serde(...)]`, `#[schemars(...)]`, `#[validate(...)]`, `#[garde(...)]`, doc
/// comments) and the same schema, name and id, but without the user's crate depending on
/// `schemars`: everything it expands to is reached through `::mcp_runtime::__private`
/// (`#[rpc(crate = "path")]` on the type when `mcp_runtime` is renamed).
#[proc_macro_derive(JsonSchema, attributes(schemars, serde, validate, garde, rpc))]
pub fn derive_json_schema(input: TokenStream) -> TokenStream {
    match syn::parse2::<syn::DeriveInput>(input.into()) {
        Ok(input) => derive_schema::expand(&input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}
