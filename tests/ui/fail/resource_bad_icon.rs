use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(
    uri = "db://store/hours",
    icon(src = "https://example.com/a.png", theme = "sepia"),
    icon(mime_type = "image/png"),
    icon(src = "https://example.com/b.png", size = ["48x48"]),
    icon = "https://example.com/c.png",
    groups = [MCP],
)]
fn hours() -> String {
    String::new()
}

fn main() {}
