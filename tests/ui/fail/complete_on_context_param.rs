use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

fn suggest(_: &CompletionRequest) -> Vec<String> {
    Vec::new()
}

#[mcp_prompt(groups = [MCP])]
fn greet(
    #[complete(with = suggest)] ctx: &RequestContext,
    #[complete(with = suggest)]
    #[param(context)]
    lang: Language,
) -> String {
    format!("{} {}", ctx.group(), lang.0)
}

pub struct Language(String);

impl FromContext for Language {
    fn from_context(ctx: &RequestContext) -> Result<Self, RpcError> {
        Ok(Language(ctx.language().unwrap_or("en").to_owned()))
    }
}

fn main() {}
