use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn search(query: String, #[param(rename = "query")] text: Option<String>) -> String {
    text.unwrap_or(query)
}

fn main() {}
