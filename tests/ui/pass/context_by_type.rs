//! Context parameters are recognised by their type, not by their name: a user's type named
//! `State` (or `RequestContext`) that is not the runtime's is a JSON parameter, in the schema;
//! the runtime's `State<T>` and `RequestContext` stay context parameters.
#![deny(warnings)]

use mcp_runtime::prelude::*;

pub const MCP: ApiGroup = ApiGroup::mcp("mcp");

pub struct Db;

pub mod dto {
    /// A workflow state, sent by the client.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct State {
        pub step: u32,
    }

    /// Not the runtime's either.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct RequestContext {
        pub trace: String,
    }
}

/// Advances a workflow.
#[rpc_method(name = "Flow.advance", groups = [MCP])]
fn advance(
    /// The current state
    state: dto::State,
    db: State<Db>,
    ctx: RequestContext,
    /// The caller's context
    request: dto::RequestContext,
) -> u32 {
    let _ = (db, ctx.method(), request.trace);
    state.step + 1
}

/// With the user's `State` in scope under its own name (an explicit import comes before the
/// prelude's glob).
mod shadowed {
    use super::dto::State;
    use mcp_runtime::prelude::*;

    use super::MCP;

    /// Resets a workflow.
    #[rpc_method(name = "Flow.reset", groups = [MCP])]
    pub async fn reset(state: State, ctx: mcp_runtime::State<super::Db>) -> u32 {
        let _ = ctx;
        state.step
    }
}

fn main() {
    let server = Server::builder().state(Db).build().expect("valid catalog");
    let v1 = server.registry().catalog("mcp", 1).expect("mcp v1");

    let advance = v1.get("Flow.advance").expect("Flow.advance");
    let names: Vec<&str> = advance.def.params.iter().map(|p| p.name).collect();
    assert_eq!(names, ["state", "request"], "JSON params only");
    let schema = &advance.input_schema;
    let props = schema["properties"].as_object().expect("properties");
    let keys: Vec<&str> = props.keys().map(String::as_str).collect();
    assert_eq!(keys, ["state", "request"], "{schema}");
    assert_eq!(props["state"]["description"], "The current state");
    assert_eq!(
        schema["required"],
        serde_json::json!(["state", "request"]),
        "{schema}"
    );
    assert!(
        schema.to_string().contains("step"),
        "the DTO's schema: {schema}"
    );

    let reset = v1.get("Flow.reset").expect("Flow.reset");
    let names: Vec<&str> = reset.def.params.iter().map(|p| p.name).collect();
    assert_eq!(names, ["state"]);
    assert!(reset.input_schema["properties"]["state"].is_object());
}
