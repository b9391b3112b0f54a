use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(name = "Catalog.ping", groups = [MPC])]
fn ping() {}

fn main() {
    let _ = MCP;
}
