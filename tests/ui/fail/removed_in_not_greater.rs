use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP], version = 2, removed_in = 2)]
fn ping() {}

#[rpc_method(groups = [MCP], removed_in = 1)]
fn pong() {}

fn main() {}
