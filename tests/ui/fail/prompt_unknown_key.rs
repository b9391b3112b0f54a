use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_prompt(groups = [MCP], uri = "prompt://greet", cache(ttl = "1m"))]
fn greet() -> String {
    String::new()
}

fn main() {}
