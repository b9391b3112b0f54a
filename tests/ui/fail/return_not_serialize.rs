use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

pub struct Product {
    pub id: u64,
}

#[rpc_method(groups = [MCP])]
fn get(id: u64) -> Product {
    Product { id }
}

fn main() {}
