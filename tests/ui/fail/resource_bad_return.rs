use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

pub struct Hours;

#[mcp_resource(uri = "db://store/hours", groups = [MCP])]
fn hours() -> Hours {
    Hours
}

fn main() {}
