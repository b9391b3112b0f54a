use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri = "db://store/hours", groups = [MCP])]
#[mcp_tool(read_only_hint)]
fn hours() -> String {
    String::new()
}

fn main() {}
