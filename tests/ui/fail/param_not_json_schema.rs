use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[derive(serde::Deserialize)]
pub struct Filter {
    pub text: String,
}

#[rpc_method(groups = [MCP])]
fn search(filter: Filter) -> String {
    filter.text
}

fn main() {}
