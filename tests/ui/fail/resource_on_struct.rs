use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri = "db://store/hours", groups = [MCP])]
struct Hours;

#[mcp_prompt(groups = [MCP])]
struct Greeting;

fn main() {}
