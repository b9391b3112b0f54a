use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
#[mcp_tool(read_only_hint)]
#[mcp_tool(title = "Ping")]
fn ping() {}

fn main() {}
