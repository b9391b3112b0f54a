use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

struct Svc;

#[rpc_service(prefix = "Svc", groups = [MCP])]
impl Svc {
    #[rpc_method]
    fn ping(&self) {}
}

fn main() {}
