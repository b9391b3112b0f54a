use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

struct Counter {
    n: u64,
}

#[rpc_service(groups = [MCP])]
impl Counter {
    #[rpc_method]
    fn bump(&mut self) -> u64 {
        self.n += 1;
        self.n
    }

    #[rpc_method]
    fn take(self) -> u64 {
        self.n
    }
}

fn main() {}
