use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP], cache(ttl = "ten seconds"))]
fn ping() {}

fn main() {}
