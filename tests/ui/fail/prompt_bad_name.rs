use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_prompt(name = "code review", groups = [MCP])]
fn review() -> String {
    String::new()
}

#[mcp_prompt(groups = [MCP])]
fn café() -> String {
    String::new()
}

fn main() {}
