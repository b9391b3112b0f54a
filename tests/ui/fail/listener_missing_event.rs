use mcp_runtime::prelude::*;

#[rpc_listener(priority = 10)]
fn audit(ev: &mut Event<'_>) -> Result<(), RpcError> {
    let _ = ev;
    Ok(())
}

fn main() {}
