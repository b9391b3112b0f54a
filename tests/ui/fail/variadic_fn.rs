use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn ping(count: u32, ...) {
    let _ = count;
}

fn main() {}
