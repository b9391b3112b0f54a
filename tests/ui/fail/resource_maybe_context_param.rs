//! A parameter named like a context type that is not one is a JSON parameter: checked against
//! the template once its type is known.
use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

mod dto {
    #[derive(serde::Deserialize, mcp_runtime::JsonSchema)]
    pub struct State {
        pub step: u32,
    }
}

#[mcp_resource(uri_template = "db://items/{id}", groups = [MCP])]
fn item(id: u64, state: dto::State) -> String {
    format!("{id} {}", state.step)
}

#[mcp_resource(uri = "db://store/hours", groups = [MCP])]
fn hours(state: dto::State) -> String {
    state.step.to_string()
}

pub struct Store;

#[mcp_resource(uri_template = "db://stores/{state}", groups = [MCP])]
fn store(state: State<Store>) -> String {
    let _ = state;
    String::new()
}

fn main() {}
