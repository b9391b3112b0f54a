use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri_template = "db://items/{id}", size = 1024, groups = [MCP])]
fn item(id: u64) -> String {
    id.to_string()
}

fn main() {}
