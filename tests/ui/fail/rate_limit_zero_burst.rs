use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP], rate_limit(limit = "60/min", burst = 0))]
fn ping() {}

fn main() {}
