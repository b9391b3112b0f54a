use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

// CSP lists are origins: no credentials, paths, queries; each permission once; a real domain.
#[mcp_resource(
    uri = "ui://shop/card",
    app(
        connect_domains = ["https://api.shop.example", "https://user:pw@api.shop.example"],
        resource_domains = ["https://cdn.shop.example/assets", "cdn.shop.example"],
        frame_domains = ["https://video.example?autoplay=1"],
        permissions = ["camera", "clipboardWrite", "camera"],
        domain = "",
    ),
    groups = [MCP],
)]
fn card() -> String {
    String::new()
}

fn main() {}
