use mcp_runtime::prelude::*;

#[rpc_listener(evnt = "request")]
fn audit(ev: &mut Event<'_>) -> Result<(), RpcError> {
    let _ = ev;
    Ok(())
}

fn main() {}
