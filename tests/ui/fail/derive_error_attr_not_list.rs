use mcp_runtime::prelude::*;

#[derive(Debug, thiserror::Error, RpcError)]
#[error("not found")]
#[rpc = -32404]
pub struct NotFound;

fn main() {}
