use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(name = "", groups = [MCP])]
fn ping() {}

fn main() {}
