use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn search(#[param(length(min = 1, mx = 10))] query: String) {
    let _ = query;
}

fn main() {}
