use mcp_runtime::prelude::*;

#[rpc_listener(event = "request", priority = "high")]
fn audit(ev: &mut Event<'_>) -> Result<(), RpcError> {
    let _ = ev;
    Ok(())
}

fn main() {}
