use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
pub struct Ping;

fn main() {
    let _ = Ping;
}
