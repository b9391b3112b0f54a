//! Errors users already have: `anyhow::Result<T>` (the `anyhow` feature),
//! `Result<T, Box<dyn Error + Send + Sync>>`, and `?` on `std::io::Error` and
//! `serde_json::Error` in a method returning `Result<T, RpcError>`.
#![deny(warnings)]

use mcp_runtime::prelude::*;

pub const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn with_anyhow(n: u32) -> anyhow::Result<u32> {
    anyhow::ensure!(n > 0, "n must be positive");
    Ok(n)
}

#[rpc_method(groups = [MCP])]
async fn with_box(path: String) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    Ok(std::fs::read_to_string(path)?)
}

#[rpc_method(groups = [MCP])]
fn with_question_mark(path: String) -> Result<u32, RpcError> {
    let text = std::fs::read_to_string(path)?;
    Ok(serde_json::from_str::<u32>(&text)?)
}

fn main() {}
