use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri = "db://store/hours", mime_type = "text/plain", mime_type = "text/html", groups = [MCP])]
fn hours() -> String {
    String::new()
}

fn main() {}
