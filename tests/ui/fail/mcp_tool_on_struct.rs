use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_tool(read_only_hint)]
struct Ping;

fn main() {}
