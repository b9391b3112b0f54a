use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[derive(Debug)]
pub struct MyError;

#[rpc_method(groups = [MCP])]
fn parse(text: String) -> Result<u32, MyError> {
    text.parse().map_err(|_| MyError)
}

fn main() {}
