use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(name = 5, groups = [MCP])]
fn ping() {}

fn main() {}
