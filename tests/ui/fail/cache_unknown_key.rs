use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP], cache(tll = "10s"))]
fn ping() {}

fn main() {}
