use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

/// Takes the request by value but is not async.
fn suggest(req: CompletionRequest) -> Vec<String> {
    vec![req.value]
}

#[mcp_prompt(groups = [MCP])]
fn greet(#[complete(with = suggest)] name: String) -> String {
    name
}

fn main() {}
