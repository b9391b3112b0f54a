use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");
const DESC: &str = "desc";

#[rpc_method(groups = [MCP])]
fn sort(#[param(one_of = ["asc", DESC])] order: String) {
    let _ = order;
}

fn main() {}
