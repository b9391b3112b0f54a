use mcp_runtime::prelude::*;

#[derive(Debug, thiserror::Error, RpcError)]
#[error("not found")]
#[rpc]
pub struct NotFound;

fn main() {}
