use mcp_runtime::prelude::*;

#[rpc_method(name = "Catalog.ping", groups = [])]
fn ping() {}

fn main() {}
