use mcp_runtime::prelude::*;

#[rpc_listener(event = "request", crate = "my runtime")]
fn audit(ev: &mut Event<'_>) -> Result<(), RpcError> {
    let _ = ev;
    Ok(())
}

fn main() {}
