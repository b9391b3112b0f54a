use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP], cache(envs = "prod"))]
fn ping() {}

fn main() {}
