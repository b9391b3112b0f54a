use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri = "db://store/hours", audience = ["user", "model"], groups = [MCP])]
fn hours() -> String {
    String::new()
}

#[mcp_resource(uri = "db://store/logo", audience = "user", groups = [MCP])]
fn logo() -> String {
    String::new()
}

fn main() {}
