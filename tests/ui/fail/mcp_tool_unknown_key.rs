use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
#[mcp_tool(readonly_hint = true)]
fn ping() {}

fn main() {}
