use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

// An app's page: a fixed `ui://` URI, its one MIME type.
#[mcp_resource(uri = "https://shop.example/card", app, groups = [MCP])]
fn wrong_scheme() -> String {
    String::new()
}

#[mcp_resource(uri_template = "ui://shop/card/{id}", app, groups = [MCP])]
fn templated(id: u64) -> String {
    id.to_string()
}

#[mcp_resource(uri = "ui://shop/text", mime_type = "text/html", app, groups = [MCP])]
fn other_mime() -> String {
    String::new()
}

// `ui://` is for apps only.
#[mcp_resource(uri = "ui://shop/plain", groups = [MCP])]
fn not_an_app() -> String {
    String::new()
}

fn main() {}
