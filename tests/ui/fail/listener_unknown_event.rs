use mcp_runtime::prelude::*;

#[rpc_listener(event = "post_request")]
fn audit(ev: &mut Event<'_>) -> Result<(), RpcError> {
    let _ = ev;
    Ok(())
}

fn main() {}
