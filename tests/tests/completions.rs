//! Completion functions reach the server's shared state (`req.state::<T>()`, or a `State<T>`
//! parameter, as methods take it): ids to complete from a store need no global.

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

/// The same, with the state as a parameter (async, as a store's lookup would be).
async fn tags(req: CompletionRequest, titles: State<Titles>) -> Vec<String> {
    let Titles(titles) = &*titles;
    titles
        .iter()
        .filter(|t| t.contains(req.value.as_str()))
        .map(|t| format!("#{t}"))
        .collect()
}

/// The same again, synchronous, with a state the server lacks.
fn missing(_: &CompletionRequest, _: State<String>) -> Vec<String> {
    Vec::new()
}

/// Tags one note.
#[mcp_prompt(name = "tag", groups = [NOTES])]
fn tag(
    /// The note's title
    #[complete(with = titles)]
    title: String,
    /// The tag
    #[complete(with = tags)]
    tag: String,
    /// Never completed: its function needs a state the server has not
    #[complete(with = missing)]
    note: Option<String>,
) -> PromptResult {
    PromptResult {
        description: None,
        messages: vec![PromptMessage::user(format!("Tag {title} {tag} {note:?}"))],
    }
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

#[tokio::test]
async fn a_completion_function_takes_the_state_as_a_parameter() {
    let server = examples::with_states(Server::builder())
        .state(Titles(vec!["groceries", "garden", "taxes"]))
        .build()
        .expect("valid catalog");
    let client = server.client("completion_notes", 1);
    let complete = |argument: &str, value: &str| {
        json!({"ref": {"type": "ref/prompt", "name": "tag"},
            "argument": {"name": argument, "value": value}})
    };
    let r = client
        .request("completion/complete", complete("tag", "ar"))
        .await
        .expect("completed");
    assert_eq!(r["completion"], json!({"values": ["#garden"]}));
    let e = client
        .request("completion/complete", complete("note", ""))
        .await
        .expect_err("no such state");
    assert_eq!(
        (e.code(), e.message()),
        (
            -32603,
            "no state of type `alloc::string::String`: add it with ServerBuilder::state"
        )
    );
}
