//! `#[mcp_tool]` written above `#[rpc_method]` works the same as below it.
#![deny(warnings)]

use mcp_runtime::prelude::*;

pub const MCP: ApiGroup = ApiGroup::mcp("mcp");

/// Deletes everything.
#[mcp_tool(destructive_hint, idempotent_hint = false, title = "Delete all")]
#[rpc_method(name = "Store.clear", groups = [MCP])]
fn clear() -> bool {
    true
}

/// Paths work too.
#[mcp_runtime::mcp_tool(open_world_hint = true)]
#[mcp_runtime::rpc_method(name = "Store.fetch", groups = [MCP])]
fn fetch(url: String) -> String {
    url
}

fn main() {
    let server = Server::builder().build().expect("valid catalog");
    let mcp = server.registry().catalog("mcp", 1).expect("mcp v1");
    let a = mcp.get("Store.clear").expect("Store.clear").def.annotations;
    assert_eq!(a.title, Some("Delete all"));
    assert_eq!(a.destructive_hint, Some(true));
    assert_eq!(a.idempotent_hint, Some(false));
    assert_eq!(a.read_only_hint, None);
    assert_eq!(a.open_world_hint, None);
    let a = mcp.get("Store.fetch").expect("Store.fetch").def.annotations;
    assert_eq!(a.open_world_hint, Some(true));
    assert_eq!(a.title, None);
}
