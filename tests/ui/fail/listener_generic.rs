use mcp_runtime::prelude::*;

#[rpc_listener(event = "request")]
fn audit<T>(ev: &mut Event<'_>) -> Result<(), RpcError> {
    let _ = ev;
    Ok(())
}

fn main() {}
