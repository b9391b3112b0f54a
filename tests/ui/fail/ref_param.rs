use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn greet(name: &str) -> String {
    format!("hello, {name}")
}

fn main() {}
