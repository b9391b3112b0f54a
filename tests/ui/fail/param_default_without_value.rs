use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn ping(#[param(default)] n: u32) -> u32 {
    n
}

fn main() {}
