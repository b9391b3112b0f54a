use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(name = "Catalog.ping", groups = [MCP], name = "Catalog.pong")]
fn ping() {}

fn main() {}
