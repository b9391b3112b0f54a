use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
#[mcp_tool(retry = false)]
async fn charge() {}

fn main() {}
