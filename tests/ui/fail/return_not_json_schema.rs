use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[derive(serde::Serialize)]
pub struct Product {
    pub id: u64,
}

#[rpc_method(groups = [MCP])]
async fn get(id: u64) -> Result<Product, RpcError> {
    Ok(Product { id })
}

fn main() {}
