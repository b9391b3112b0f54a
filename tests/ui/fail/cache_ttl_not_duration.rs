use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP], cache(ttl = true))]
fn ping() {}

fn main() {}
