use mcp_runtime::prelude::*;

#[mcp_tool(read_only_hint)]
fn ping() {}

fn main() {
    ping();
}
