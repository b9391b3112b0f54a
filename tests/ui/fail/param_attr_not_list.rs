use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn search(#[param] query: String) {
    let _ = query;
}

fn main() {}
