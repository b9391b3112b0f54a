use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP], lock(param = "order"))]
fn pay(order_id: u64, amount: u64) {
    let _ = (order_id, amount);
}

fn main() {}
