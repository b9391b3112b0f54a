use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri = "/store/hours", groups = [MCP])]
fn hours() -> String {
    String::new()
}

#[mcp_resource(uri = "1st://store/logo", groups = [MCP])]
fn logo() -> String {
    String::new()
}

#[mcp_resource(uri = "file:///my docs/README.md", groups = [MCP])]
fn readme() -> String {
    String::new()
}

#[mcp_resource(uri = "db://items/{id}", groups = [MCP])]
fn item() -> String {
    String::new()
}

fn main() {}
