use mcp_runtime::prelude::*;

#[rpc_method(name = "Catalog.ping")]
fn ping() {}

#[rpc_method]
fn bare() {}

fn main() {}
