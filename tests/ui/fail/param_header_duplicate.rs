use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn route(
    #[param(header = "Region")] region: String,
    #[param(header = "region")] zone: String,
) -> String {
    format!("{region}{zone}")
}

fn main() {}
