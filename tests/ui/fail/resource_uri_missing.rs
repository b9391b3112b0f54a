use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(name = "hours", groups = [MCP])]
fn hours() -> String {
    String::new()
}

fn main() {}
