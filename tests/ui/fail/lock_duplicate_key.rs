use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP], lock(ttl = "10s", ttl = "20s"))]
fn ping() {}

fn main() {}
