use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

/// A link to a page that is not an app's.
#[rpc_method(name = "Shop.card", groups = [MCP])]
#[mcp_tool(app = "https://shop.example/card")]
fn card() -> String {
    String::new()
}

/// Visibility without an app, empty, unknown or twice.
#[rpc_method(name = "Shop.hidden", groups = [MCP])]
#[mcp_tool(visibility = [])]
fn hidden() -> String {
    String::new()
}

/// Who may call it, said wrong.
#[rpc_method(name = "Shop.refresh", groups = [MCP])]
#[mcp_tool(app = "ui://shop/card", visibility = ["app", "user", "app"])]
fn refresh() -> String {
    String::new()
}

fn main() {}
