use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

fn suggest(_: &CompletionRequest) -> Vec<String> {
    Vec::new()
}

#[mcp_prompt(groups = [MCP])]
fn greet(
    #[complete] name: String,
    #[complete(wiht = suggest)] lang: String,
    #[complete(with = "suggest")] tone: String,
) -> String {
    format!("{name} {lang} {tone}")
}

fn main() {}
