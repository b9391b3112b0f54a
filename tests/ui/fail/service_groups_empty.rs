use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[derive(Default)]
pub struct Svc;

#[rpc_service(groups = [])]
impl Svc {
    #[rpc_method]
    fn ping(&self) {}
}

fn main() {}
