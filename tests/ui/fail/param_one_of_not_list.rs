use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn sort(#[param(one_of = "asc")] order: String) {
    let _ = order;
}

fn main() {}
