use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
#[mcp_tool(task = "sometimes")]
async fn crunch() {}

fn main() {}
