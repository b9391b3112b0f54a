use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_prompt(groups = [MCP])]
fn count() -> u32 {
    1
}

#[mcp_prompt(groups = [MCP])]
fn nothing() {}

fn main() {}
