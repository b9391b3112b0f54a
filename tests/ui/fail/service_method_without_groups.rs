use mcp_runtime::prelude::*;

struct Svc;

#[rpc_service(name = "Svc")]
impl Svc {
    #[rpc_method]
    fn ping(&self) {}

    #[rpc_method(version = 2)]
    fn pong(&self) {}
}

fn main() {}
