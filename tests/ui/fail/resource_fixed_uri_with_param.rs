use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri = "db://store/hours", groups = [MCP])]
fn hours(day: String, ctx: RequestContext) -> String {
    let _ = ctx;
    day
}

fn main() {}
