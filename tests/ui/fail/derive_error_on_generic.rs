use mcp_runtime::prelude::*;

#[derive(Debug, thiserror::Error, RpcError)]
#[error("wrapped: {0}")]
pub struct Wrapped<E: std::error::Error>(E);

fn main() {}
