use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(nmae = "Catalog.ping", groups = [MCP])]
fn ping() -> String {
    "pong".into()
}

fn main() {
    // The function is still there: no "cannot find function" error.
    let _ = ping();
}
