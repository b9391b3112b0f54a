//! `#[mcp_resource]` (a URI template, a fixed URI, binary and multi-content results) and
//! `#[mcp_prompt]` with completed arguments, and the records the runtime reads.
#![deny(warnings)]

use std::collections::BTreeMap;

use futures_util::FutureExt;
use mcp_runtime::mcp::Role;
use mcp_runtime::prelude::*;
use mcp_runtime::record::{
    CompletionDef, Handler, MethodDef, ParamKind, PromptDef, ResourceDef, registered_methods,
    registered_prompts, registered_resources,
};

pub const MCP: ApiGroup = ApiGroup::mcp("mcp");

pub struct Store {
    pub products: Vec<Product>,
}

#[derive(Clone, serde::Serialize)]
pub struct Product {
    pub id: u64,
    pub name: String,
}

/// A product of the catalog.
///
/// As JSON.
#[mcp_resource(
    uri_template = "catalog://products/{id}",
    mime_type = "application/json",
    groups = [MCP],
    cache(ttl = "30s"),
)]
async fn product(
    /// The product's id
    #[complete(with = product_ids)]
    id: u64,
    store: State<Store>,
) -> Result<Product, RpcError> {
    store
        .products
        .iter()
        .find(|p| p.id == id)
        .cloned()
        .ok_or_else(|| RpcError::not_found(format!("no product {id}")))
}

async fn product_ids(req: CompletionRequest) -> Result<Vec<String>, RpcError> {
    Ok(["1", "12", "123"]
        .into_iter()
        .filter(|id| id.starts_with(req.value.as_str()))
        .map(str::to_owned)
        .collect())
}

/// Opening hours.
#[mcp_resource(
    uri = "catalog://store/hours",
    name = "opening_hours",
    mime_type = "text/plain",
    groups = [MCP],
    version = 2,
    size = 22,
    audience = ["user", "assistant"],
    priority = 0.75,
    last_modified = "2025-01-12T15:00:58Z",
    icon(src = "https://example.com/clock.png", mime_type = "image/png", sizes = ["48x48", "96x96"], theme = "light"),
    icon(src = "https://example.com/clock-dark.svg", theme = "dark"),
)]
fn hours() -> String {
    "Mon-Fri 9:00-18:00 UTC".to_owned()
}

/// The store's logo.
#[mcp_resource(uri = "catalog://store/logo.png", mime_type = "image/png", groups = [MCP], priority = 1)]
fn logo(ctx: &RequestContext) -> Blob {
    let _ = ctx.group();
    Blob(vec![0x89, b'P', b'N', b'G'])
}

/// The files of a directory, each its own content.
#[mcp_resource(uri_template = "file:///docs/{+path}", groups = [MCP], removed_in = 3)]
fn docs(#[param(rename = "path")] dir: String) -> Vec<ResourceContent> {
    vec![
        ResourceContent::text("# Readme").with_uri(format!("file:///docs/{dir}/README.md")),
        ResourceContent::blob([1, 2, 3]).with_uri(format!("file:///docs/{dir}/data.bin")),
    ]
}

/// Recommends products for a need.
#[mcp_prompt(groups = [MCP], icon(src = "data:image/png;base64,iVBORw0KGgo="))]
fn recommend(
    /// What the customer needs
    #[complete(with = need_suggestions)]
    need: String,
    /// How many
    #[param(default = 3)]
    #[complete(with = counts)]
    count: u32,
    /// The customer's name
    customer: Option<String>,
) -> Vec<PromptMessage> {
    let who = customer.unwrap_or_else(|| "a customer".to_owned());
    vec![
        PromptMessage::user(format!(
            "Recommend {count} products to {who} who needs {need}."
        )),
        PromptMessage::assistant("Here are my recommendations:"),
    ]
}

fn need_suggestions(req: &CompletionRequest) -> Vec<&'static str> {
    ["a mug", "a lamp", "a laptop"]
        .into_iter()
        .filter(|n| n.contains(req.value.as_str()))
        .collect()
}

async fn counts(_: CompletionRequest) -> Completion {
    Completion {
        values: vec!["3".into(), "5".into()],
        total: Some(2),
        has_more: Some(false),
    }
}

/// A prompt with its own name, written as `async`.
#[mcp_prompt(name = "store.greeting", groups = [MCP], version = 1, removed_in = 4)]
async fn greeting() -> String {
    "Greet the customer.".to_owned()
}

fn resource(uri: &str) -> &'static ResourceDef {
    registered_resources()
        .find(|r| r.uri == uri)
        .unwrap_or_else(|| panic!("resource {uri} is registered"))
}

fn prompt(name: &str) -> &'static PromptDef {
    registered_prompts()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("prompt {name} is registered"))
}

fn complete(defs: &[CompletionDef], argument: &str, value: &str) -> Completion {
    let def = defs
        .iter()
        .find(|c| c.argument == argument)
        .unwrap_or_else(|| panic!("{argument} completes"));
    let req = CompletionRequest {
        argument: argument.to_owned(),
        value: value.to_owned(),
        arguments: BTreeMap::new(),
        ..CompletionRequest::default()
    };
    (def.complete)(req)
        .now_or_never()
        .expect("ready")
        .expect("no error")
}

fn param_names(def: &MethodDef) -> Vec<&'static str> {
    def.params.iter().map(|p| p.name).collect()
}

fn main() {
    // None of them is a method (a tool).
    assert!(
        registered_methods()
            .all(|m| !m.name.starts_with("resource:") && !m.name.starts_with("prompt:")),
        "resources and prompts are not methods"
    );
    assert_eq!(registered_resources().count(), 4);
    assert_eq!(registered_prompts().count(), 2);

    let product = resource("catalog://products/{id}");
    assert!(product.is_template);
    assert_eq!(product.name, "product");
    assert_eq!(product.mime_type, Some("application/json"));
    assert_eq!(product.size, None);
    assert!(product.annotations.is_empty());
    assert!(product.icons.is_empty());
    let m = product.method;
    assert_eq!(m.name, "resource:catalog://products/{id}");
    assert_eq!(m.groups.len(), 1);
    assert_eq!((m.since, m.removed_in), (1, None));
    assert_eq!(m.docs, "A product of the catalog.\n\nAs JSON.");
    assert_eq!(
        param_names(m),
        ["id"],
        "State<Store> is a context parameter"
    );
    assert_eq!(m.params[0].description, "The product's id");
    assert!(m.params[0].is_required());
    assert!(matches!(m.handler, Handler::Async(_)));
    assert_eq!(m.cache.map(|c| c.ttl_ms), Some(30_000));
    assert!(m.lock.is_none());
    assert!(m.annotations.is_empty());
    assert!((m.output_schema)(&mut schemars::SchemaGenerator::default()).is_none());
    assert_eq!(product.completions.len(), 1);
    assert_eq!(
        complete(product.completions, "id", "12").values,
        ["12", "123"]
    );

    let hours = resource("catalog://store/hours");
    assert!(!hours.is_template);
    assert_eq!(hours.name, "opening_hours");
    assert_eq!(hours.mime_type, Some("text/plain"));
    assert_eq!(hours.size, Some(22));
    assert_eq!(hours.annotations.audience, [Role::User, Role::Assistant]);
    assert_eq!(hours.annotations.priority, Some(0.75));
    assert_eq!(
        hours.annotations.last_modified,
        Some("2025-01-12T15:00:58Z")
    );
    assert_eq!(hours.icons.len(), 2);
    assert_eq!(hours.icons[0].src, "https://example.com/clock.png");
    assert_eq!(hours.icons[0].mime_type, Some("image/png"));
    assert_eq!(hours.icons[0].sizes, ["48x48", "96x96"]);
    assert_eq!(hours.icons[0].theme, Some("light"));
    assert_eq!(
        (
            hours.icons[1].mime_type,
            hours.icons[1].sizes,
            hours.icons[1].theme
        ),
        (None, &[][..], Some("dark"))
    );
    assert!(hours.completions.is_empty());
    assert_eq!(hours.method.name, "resource:catalog://store/hours");
    assert_eq!(hours.method.since, 2);
    assert!(hours.method.params.is_empty());
    assert!(matches!(hours.method.handler, Handler::Sync(_)));
    assert_eq!(hours.method.docs, "Opening hours.");

    let logo = resource("catalog://store/logo.png");
    assert_eq!(logo.name, "logo");
    assert_eq!(logo.annotations.priority, Some(1.0));
    assert!(logo.annotations.audience.is_empty());
    assert!(
        logo.method.params.is_empty(),
        "&RequestContext is a context parameter"
    );

    let docs = resource("file:///docs/{+path}");
    assert!(docs.is_template);
    assert_eq!(docs.mime_type, None);
    assert_eq!(param_names(docs.method), ["path"]);
    assert_eq!(docs.method.removed_in, Some(3));

    let recommend = prompt("recommend");
    assert!(recommend.completions.len() == 2);
    assert_eq!(recommend.icons.len(), 1);
    assert_eq!(recommend.icons[0].src, "data:image/png;base64,iVBORw0KGgo=");
    let m = recommend.method;
    assert_eq!(m.name, "prompt:recommend");
    assert_eq!(m.docs, "Recommends products for a need.");
    assert_eq!(param_names(m), ["need", "count", "customer"]);
    let descriptions: Vec<&str> = m.params.iter().map(|p| p.description).collect();
    assert_eq!(
        descriptions,
        ["What the customer needs", "How many", "The customer's name"]
    );
    assert!(matches!(m.params[0].kind, ParamKind::Required));
    assert!(matches!(m.params[1].kind, ParamKind::Default(d) if d() == serde_json::json!(3)));
    assert!(matches!(m.params[2].kind, ParamKind::Optional));
    assert!(matches!(m.handler, Handler::Sync(_)));
    assert_eq!(
        complete(recommend.completions, "need", "la").values,
        ["a lamp", "a laptop"]
    );
    let counts = complete(recommend.completions, "count", "");
    assert_eq!((counts.values.len(), counts.total), (2, Some(2)));

    let greeting = prompt("store.greeting");
    assert_eq!(greeting.method.name, "prompt:store.greeting");
    assert!(greeting.method.params.is_empty());
    assert!(greeting.completions.is_empty());
    assert_eq!(
        (greeting.method.since, greeting.method.removed_in),
        (1, Some(4))
    );
    assert!(matches!(greeting.method.handler, Handler::Async(_)));
}
