use mcp_runtime::prelude::*;

#[rpc_service]
struct Svc;

fn main() {
    let _ = Svc;
}
