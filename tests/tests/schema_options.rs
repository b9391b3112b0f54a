//! Schema compatibility options, emitted consistently on tools/list.

use mcp_runtime::schema::Nullable;
use mcp_runtime::{Environment, ServerBuilder};
use serde_json::{Value, json};

async fn tools(builder: ServerBuilder) -> Value {
    tools_of(builder, "mcp").await
}

async fn tools_of(builder: ServerBuilder, group: &str) -> Value {
    let server = builder.env(Environment::PROD).build().unwrap();
    let ep = server.mcp_endpoint(group, 1).unwrap().clone();
    let msg = mcp_runtime::test_util::Message::read(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})
            .to_string()
            .as_bytes(),
    )
    .expect("a request");
    let a = ep
        .handle(
            msg,
            mcp_runtime::test_util::Era::of("2025-11-25").expect("a revision"),
            Default::default(),
        )
        .await;
    let v: Value = serde_json::from_slice(&a.body.to_vec()).unwrap();
    let mut by_name = serde_json::Map::new();
    for t in v["result"]["tools"].as_array().unwrap() {
        by_name.insert(t["name"].as_str().unwrap().to_owned(), t.clone());
    }
    Value::Object(by_name)
}

#[tokio::test]
async fn defaults_keep_defs_any_of_and_the_dialect() {
    let t = tools(examples::builder()).await;
    let get = &t["Catalog.get"]["outputSchema"];
    assert_eq!(
        get["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(
        get["properties"]["result"],
        json!({"$ref":"#/$defs/Product"})
    );
    assert!(get["$defs"]["Product"].is_object());
}

#[tokio::test]
async fn inlined_defs_keep_only_what_recursion_needs() {
    let t = tools(
        examples::builder()
            .mcp_inline_defs(true)
            .mcp_schema_dialect(false),
    )
    .await;
    let get = &t["Catalog.get"]["outputSchema"];
    assert!(get.get("$schema").is_none());
    assert!(get.get("$defs").is_none(), "{get}");
    assert_eq!(get["properties"]["result"]["type"], "object");
    assert_eq!(
        get["properties"]["result"]["required"],
        json!(["id", "name"])
    );
    // The recursive Category stays a $ref into its own $defs.
    let tree = &t["Catalog.tree"]["outputSchema"];
    assert_eq!(
        tree["$defs"]
            .as_object()
            .map(|d| d.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["Category".to_owned()])
    );
    assert_eq!(
        tree["$defs"]["Category"]["properties"]["children"]["items"],
        json!({"$ref":"#/$defs/Category"})
    );
}

#[tokio::test]
async fn nullable_style_is_applied_everywhere_in_the_schema() {
    let tool = "json_schema_2020_12_tool";
    let any_of = tools_of(examples::builder(), "conformance").await;
    let arrays = tools_of(
        examples::builder().mcp_nullable(Nullable::TypeArray),
        "conformance",
    )
    .await;
    assert_eq!(
        any_of[tool]["inputSchema"]["properties"]["name"],
        json!({"anyOf":[{"type":"string"},{"type":"null"}],"description":"A name"})
    );
    assert_eq!(
        arrays[tool]["inputSchema"]["properties"]["name"],
        json!({"type":["string","null"],"description":"A name"})
    );
    assert_eq!(
        arrays[tool]["inputSchema"]["$defs"]["address"]["properties"]["city"],
        json!({"type":["string","null"],"description":"City."})
    );
    // A nullable $ref keeps its anyOf: a type array cannot say it.
    assert_eq!(
        any_of[tool]["inputSchema"]["properties"]["address"],
        json!({"$ref":"#/$defs/address","description":"An address"})
    );
}
