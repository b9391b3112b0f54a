use mcp_runtime::prelude::*;

#[derive(RpcError)]
pub union Bits {
    int: u32,
    float: f32,
}

fn main() {}
