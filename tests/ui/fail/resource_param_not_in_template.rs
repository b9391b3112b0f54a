use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri_template = "db://items/{id}", groups = [MCP])]
fn item(
    id: u64,
    verbose: bool,
    #[param(rename = "fmt")] format: String,
    ctx: &RequestContext,
) -> String {
    let _ = ctx;
    format!("{id} {verbose} {format}")
}

fn main() {}
