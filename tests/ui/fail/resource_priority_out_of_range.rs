use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri = "db://store/hours", priority = 1.5, groups = [MCP])]
fn hours() -> String {
    String::new()
}

#[mcp_resource(uri = "db://store/logo", priority = -0.25, groups = [MCP])]
fn logo() -> String {
    String::new()
}

#[mcp_resource(uri = "db://store/name", priority = "high", groups = [MCP])]
fn name() -> String {
    String::new()
}

fn main() {}
