use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

struct Svc;

trait Ping {
    fn ping(&self) -> String;
}

#[rpc_service(groups = [MCP])]
impl Ping for Svc {
    #[rpc_method]
    fn ping(&self) -> String {
        "pong".into()
    }
}

fn main() {}
