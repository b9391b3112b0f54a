use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

fn add_rules(_: &mut String) {}

#[rpc_method(groups = [MCP], transform = add_rules)]
fn ping() {}

fn main() {}
