use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(groups = [MCP])]
fn ping(#[param(context, max_length = 3)] ctx: RequestContext) {
    let _ = ctx;
}

fn main() {}
