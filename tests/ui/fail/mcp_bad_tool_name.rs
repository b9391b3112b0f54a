use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");
const INTERNAL: ApiGroup = ApiGroup::rpc("internal");

#[rpc_method(name = "Bad:ping", groups = [INTERNAL, MCP])]
fn ping() {}

fn main() {}
