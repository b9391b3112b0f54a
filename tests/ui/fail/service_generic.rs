use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

pub struct Svc<T>(T);

#[rpc_service(groups = [MCP])]
impl<T: Send + Sync + 'static> Svc<T> {
    #[rpc_method]
    fn ping(&self) {}
}

fn main() {}
