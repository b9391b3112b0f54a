use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

mod dto {
    /// Neither a context type nor a JSON parameter type.
    pub struct State {
        pub step: u32,
    }
}

#[rpc_method(groups = [MCP])]
fn advance(state: dto::State) -> u32 {
    state.step
}

fn main() {}
