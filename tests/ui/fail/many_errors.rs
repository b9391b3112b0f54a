//! Every problem is reported at once, each at its own token.
use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[rpc_method(nmae = "x", groups = [MCP], version = "2", removed_in = 0)]
#[mcp_tool(read_only = true, destructive_hint = 1)]
fn ping(
    /// A number
    #[param(rename = 5)]
    a: u32,
    /// A text
    #[param(bogus)]
    b: &str,
    /// A pair
    (c, d): (u8, u8),
) -> u32 {
    a + b.len() as u32 + u32::from(c + d)
}

fn main() {
    let _ = ping(1, "", (2, 3));
}
