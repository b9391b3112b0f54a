use mcp_runtime::prelude::*;

#[rpc_listener(event = "request")]
fn audit() -> Result<(), RpcError> {
    Ok(())
}

fn main() {}
