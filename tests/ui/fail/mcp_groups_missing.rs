use mcp_runtime::prelude::*;

#[mcp_resource(uri = "db://store/hours")]
fn hours() -> String {
    String::new()
}

#[mcp_prompt]
fn greet() -> String {
    String::new()
}

fn main() {}
