//! Completion functions reach the server's shared state (`req.state::<T>()`), as methods
//! reach it with `State<T>`: ids to complete from a store need no global.

use mcp_runtime::mcp::{CompletionRequest, PromptMessage, PromptResult};
use mcp_runtime::prelude::*;
use serde_json::json;

const NOTES: ApiGroup = ApiGroup::mcp("completion_notes");

/// The notes' titles, in the server's state.
struct Titles(Vec<&'static str>);

fn titles(req: &CompletionRequest) -> Vec<String> {
    let Some(titles) = req.state::<Titles>() else {
        return Vec::new();
    };
    titles
        .0
        .iter()
        .filter(|t| t.starts_with(req.value.as_str()))
        .map(|t| (*t).to_owned())
        .collect()
}

/// Summarises one note.
#[mcp_prompt(name = "summarise", groups = [NOTES])]
fn summarise(
    /// The note's title
    #[complete(with = titles)]
    title: String,
) -> PromptResult {
    PromptResult {
        description: None,
        messages: vec![PromptMessage::user(format!("Summarise {title}"))],
    }
}

#[tokio::test]
async fn a_completion_function_reads_the_servers_state() {
    let server = examples::with_states(Server::builder())
        .state(Titles(vec!["groceries", "garden", "taxes"]))
        .build()
        .expect("valid catalog");
    let r = server
        .client("completion_notes", 1)
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "summarise"},
                "argument": {"name": "title", "value": "g"}}),
        )
        .await
        .expect("completed");
    assert_eq!(r["completion"], json!({"values": ["groceries", "garden"]}));
}
