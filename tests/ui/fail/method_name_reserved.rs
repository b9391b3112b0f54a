use mcp_runtime::prelude::*;

const SHOP: ApiGroup = ApiGroup::rpc("shop");

/// Names beginning with `rpc.` are JSON-RPC 2.0's: the server answers `rpc.discover` itself.
#[rpc_method(name = "rpc.discover", groups = [SHOP])]
fn discover() {}

fn main() {}
