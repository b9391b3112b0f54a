use mcp_runtime::prelude::*;

#[rpc_listener(event = "request")]
struct Audit;

fn main() {}
