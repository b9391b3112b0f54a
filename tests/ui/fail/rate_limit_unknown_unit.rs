use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP], rate_limit(limit = "60/fortnight"))]
fn ping() {}

fn main() {}
