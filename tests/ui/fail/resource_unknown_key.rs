use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri = "db://store/hours", mimetype = "text/plain", lock, groups = [MCP])]
fn hours() -> String {
    String::new()
}

fn main() {}
