use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP], lock(ttl = "10 days"))]
fn ping() {}

fn main() {}
