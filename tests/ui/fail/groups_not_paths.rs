use mcp_runtime::prelude::*;

#[rpc_method(groups = ["mcp"])]
fn ping() {}

fn main() {}
