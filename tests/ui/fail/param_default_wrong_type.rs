use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn search(#[param(default = 2.5)] limit: u32) -> u32 {
    limit
}

fn main() {}
