use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

fn suggest(_: &CompletionRequest) -> Vec<String> {
    Vec::new()
}

#[mcp_prompt(groups = [MCP])]
fn greet(
    #[complete(with = suggest)]
    #[complete(with = suggest)]
    name: String,
) -> String {
    name
}

fn main() {}
