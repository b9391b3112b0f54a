use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn greet(name: impl Into<String>) -> String {
    name.into()
}

fn main() {}
