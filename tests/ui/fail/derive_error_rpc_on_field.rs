use mcp_runtime::prelude::*;

#[derive(Debug, thiserror::Error, RpcError)]
#[error("not found: {id}")]
pub struct NotFound {
    #[rpc(code = -32404)]
    id: u64,
}

fn main() {}
