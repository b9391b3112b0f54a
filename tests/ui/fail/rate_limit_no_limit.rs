use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP], rate_limit(burst = 10))]
fn ping() {}

fn main() {}
