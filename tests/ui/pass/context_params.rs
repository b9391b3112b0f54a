//! Context parameters (never in the schema), `Option<T>`, `rename` and `removed_in`.
#![deny(warnings)]

use mcp_runtime::prelude::*;

pub const MCP: ApiGroup = ApiGroup::mcp("mcp");

pub struct Db {
    pub rows: Vec<String>,
}

/// A custom context value.
pub struct Caller(String);

impl FromContext for Caller {
    fn from_context(ctx: &RequestContext) -> Result<Self, RpcError> {
        Ok(Caller(ctx.method().to_owned()))
    }
}

/// Lists rows.
#[rpc_method(name = "Rows.list", groups = [MCP], version = 1, removed_in = 3)]
fn list(
    ctx: RequestContext,
    /// Skip this many rows
    offset: Option<usize>,
    db: State<Db>,
    other: &RequestContext,
    #[param(context)] caller: Caller,
    /// Only rows containing this text
    #[param(rename = "match")]
    filter: Option<String>,
) -> Vec<String> {
    let _ = (ctx.request_id(), other.version(), caller.0);
    db.rows
        .iter()
        .skip(offset.unwrap_or(0))
        .filter(|r| filter.as_deref().is_none_or(|f| r.contains(f)))
        .cloned()
        .collect()
}

/// Raw identifiers lose their `r#`.
#[rpc_method(groups = [MCP], version = 2)]
async fn r#type(r#in: String, ctx: &RequestContext) -> String {
    format!("{in} in {}", ctx.group(), in = r#in)
}

fn main() {
    let server = Server::builder()
        .state(Db { rows: vec![] })
        .build()
        .expect("valid catalog");
    let reg = server.registry();
    assert_eq!(reg.versions("mcp"), vec![1, 2, 3]);
    let v1 = reg.catalog("mcp", 1).expect("mcp v1");
    let list = v1.get("Rows.list").expect("Rows.list in v1");
    let schema = &list.input_schema;
    let props = schema["properties"].as_object().expect("properties");
    let names: Vec<&str> = props.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["offset", "match"],
        "context params are not in {schema}"
    );
    assert_eq!(props["offset"]["description"], "Skip this many rows");
    assert_eq!(
        props["match"]["description"],
        "Only rows containing this text"
    );
    assert!(
        schema.get("required").is_none(),
        "Option params are optional: {schema}"
    );
    assert_eq!(list.def.params.len(), 2);
    assert!(list.def.params.iter().all(|p| !p.is_required()));
    assert!(v1.get("type").is_none());
    let v2 = reg.catalog("mcp", 2).expect("mcp v2");
    assert!(v2.get("Rows.list").is_some());
    let ty = v2.get("type").expect("`type` since v2");
    assert_eq!(
        ty.input_schema["required"],
        serde_json::json!(["in"]),
        "{}",
        ty.input_schema
    );
    let v3 = reg.catalog("mcp", 3).expect("mcp v3");
    assert!(v3.get("Rows.list").is_none(), "removed in v3");
    assert!(v3.get("type").is_some());
}
