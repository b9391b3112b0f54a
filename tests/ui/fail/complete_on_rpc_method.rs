use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

fn suggest(_: &CompletionRequest) -> Vec<String> {
    Vec::new()
}

#[rpc_method(groups = [MCP])]
fn search(#[complete(with = suggest)] query: String) -> String {
    query
}

fn main() {}
