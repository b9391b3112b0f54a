use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn limit(#[param(default = 1 +)] n: u32) -> u32 {
    n
}

fn main() {}
