use mcp_runtime::prelude::*;

#[derive(Debug, thiserror::Error, RpcError)]
pub enum ShopError {
    #[error("not found")]
    #[rpc(code = -32404, crate = "mcp_runtime")]
    NotFound,
}

fn main() {}
