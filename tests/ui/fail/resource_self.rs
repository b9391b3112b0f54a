use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

pub struct Store;

impl Store {
    #[mcp_resource(uri = "db://store/hours", groups = [MCP])]
    fn hours(&self) -> String {
        String::new()
    }
}

fn main() {}
