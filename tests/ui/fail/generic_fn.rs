use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn echo<T: serde::Serialize>(value: T) -> T {
    value
}

fn main() {}
