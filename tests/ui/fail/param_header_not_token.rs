use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn route(#[param(header = "Re gion")] region: String) -> String {
    region
}

fn main() {}
