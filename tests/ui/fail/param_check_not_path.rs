use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn name(#[param(check = "not_blank")] name: String) -> String {
    name
}

fn main() {}
