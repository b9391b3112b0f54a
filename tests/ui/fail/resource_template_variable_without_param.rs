use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri_template = "db://shelves/{shelf}/items/{id}", groups = [MCP])]
fn item(id: u64) -> String {
    id.to_string()
}

fn main() {}
