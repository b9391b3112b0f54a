use mcp_runtime::prelude::*;

const MCP: &str = "mcp";

#[rpc_method(name = "Catalog.ping", groups = [MCP])]
fn ping() {}

fn main() {}
