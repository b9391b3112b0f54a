use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn add((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
