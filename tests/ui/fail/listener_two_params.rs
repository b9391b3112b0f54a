use mcp_runtime::prelude::*;

#[rpc_listener(event = "request")]
fn audit(ev: &mut Event<'_>, extra: u32) -> Result<(), RpcError> {
    let _ = (ev, extra);
    Ok(())
}

fn main() {}
