//! The documented public surface: a tool with docs, defaults and hints, in two groups.
#![deny(warnings)]

use mcp_runtime::prelude::*;

pub const MCP: ApiGroup = ApiGroup::mcp("mcp");
pub const INTERNAL: ApiGroup = ApiGroup::rpc("internal");

#[derive(serde::Serialize, serde::Deserialize, JsonSchema)]
pub struct Product {
    pub id: u64,
    pub name: String,
}

/// Search products by name.
///
/// Returns up to limit products, the most relevant first.
#[rpc_method(name = "Catalog.search", groups = [MCP, INTERNAL], version = 1)]
#[mcp_tool(read_only_hint = true, idempotent_hint = true)]
async fn search(
    /// Search text
    query: String,
    /// How many products at most
    #[param(default = 10)]
    limit: u32,
) -> Result<Vec<Product>, RpcError> {
    Ok((0..u64::from(limit))
        .map(|id| Product {
            id,
            name: query.clone(),
        })
        .collect())
}

/// Ping.
#[rpc_method(name = "Catalog.ping", groups = [MCP])]
fn ping(
    /// Who is pinging
    #[param(default = "x")]
    who: String,
) -> String {
    format!("pong, {who}")
}

fn main() {
    let server = Server::builder().build().expect("valid catalog");
    let mcp = server.registry().catalog("mcp", 1).expect("group mcp, v1");
    let internal = server
        .registry()
        .catalog("internal", 1)
        .expect("group internal, v1");

    let search = mcp.get("Catalog.search").expect("search is in mcp");
    assert!(internal.get("Catalog.search").is_some());
    assert!(internal.get("Catalog.ping").is_none());
    assert_eq!(search.title.as_deref(), Some("Search products by name."));
    assert_eq!(
        search.def.docs,
        "Search products by name.\n\nReturns up to limit products, the most relevant first."
    );
    // The numeric details of `u32` (format, bounds) are the schema renderer's business.
    let schema = &search.input_schema;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], serde_json::json!(["query"]));
    assert_eq!(
        schema["properties"]["query"],
        serde_json::json!({"type": "string", "description": "Search text"})
    );
    let limit = &schema["properties"]["limit"];
    assert_eq!(limit["type"], "integer", "{schema}");
    assert_eq!(limit["description"], "How many products at most");
    assert_eq!(limit["default"], 10);
    assert_eq!(limit["minimum"], 0);
    let a = search.def.annotations;
    assert_eq!(a.read_only_hint, Some(true));
    assert_eq!(a.idempotent_hint, Some(true));
    assert_eq!(a.destructive_hint, None);
    assert!(search.output_schema.is_some());

    let ping = mcp.get("Catalog.ping").expect("ping is in mcp");
    assert_eq!(
        ping.input_schema,
        serde_json::json!({
            "type": "object",
            "properties": {
                "who": {"type": "string", "description": "Who is pinging", "default": "x"}
            },
            "additionalProperties": false
        })
    );
    assert!(ping.def.annotations.is_empty());
}
