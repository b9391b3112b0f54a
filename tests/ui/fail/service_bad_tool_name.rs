use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

struct Svc;

#[rpc_service(concat = ":", groups = [MCP])]
impl Svc {
    #[rpc_method]
    fn x(&self) {}
}

fn main() {}
