use mcp_runtime::prelude::*;

#[derive(Debug, thiserror::Error, RpcError)]
#[error("not found")]
#[rpc(code = -32404)]
#[rpc(code = -32405)]
pub struct NotFound;

fn main() {}
