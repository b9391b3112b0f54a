use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri = "ui://shop/card", app(prefers_borders = true), groups = [MCP])]
fn card() -> String {
    String::new()
}

#[mcp_resource(uri = "ui://shop/video", app(permissions = ["telepathy"]), groups = [MCP])]
fn video() -> String {
    String::new()
}

#[mcp_resource(uri = "ui://shop/list", app = true, groups = [MCP])]
fn list() -> String {
    String::new()
}

fn main() {}
