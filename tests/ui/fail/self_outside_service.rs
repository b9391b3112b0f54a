use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

struct Svc;

impl Svc {
    #[rpc_method(groups = [MCP])]
    fn ping(&self) -> String {
        "pong".into()
    }
}

fn main() {
    let _ = Svc.ping();
}
