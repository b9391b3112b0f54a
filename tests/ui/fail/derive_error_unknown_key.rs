use mcp_runtime::prelude::*;

#[derive(Debug, thiserror::Error, RpcError)]
pub enum StoreError {
    #[error("not found")]
    #[rpc(cdoe = -32404)]
    NotFound,
}

fn main() {
    // The conversion still exists: no second error here.
    let _ = RpcError::from(StoreError::NotFound);
}
