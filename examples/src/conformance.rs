//! Group `conformance`: the tools the official MCP conformance suite calls, written with the
//! framework's own attributes. Served in the stateful mode (sessions, resumable SSE).

use std::time::Duration;

use mcp_runtime::prelude::*;
use serde::Deserialize;

/// Published over MCP at `/mcp/conformance/v1` (stateful mode).
pub const CONFORMANCE: ApiGroup = ApiGroup::mcp("conformance");

/// A 1×1 PNG image, base64.
pub const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";
/// A tiny WAV file (44-byte header, one silent sample), base64.
pub const WAV_SILENCE: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==";

/// Returns simple text.
#[rpc_method(name = "test_simple_text", groups = [CONFORMANCE])]
pub fn simple_text() -> ToolOutput {
    Content::text("This is a simple text response for testing.").into()
}

/// Returns an image.
#[rpc_method(name = "test_image_content", groups = [CONFORMANCE])]
pub fn image_content() -> ToolOutput {
    Content::image(PNG_1X1, "image/png").into()
}

/// Returns audio.
#[rpc_method(name = "test_audio_content", groups = [CONFORMANCE])]
pub fn audio_content() -> ToolOutput {
    Content::audio(WAV_SILENCE, "audio/wav").into()
}

/// Returns an embedded resource.
#[rpc_method(name = "test_embedded_resource", groups = [CONFORMANCE])]
pub fn embedded_resource() -> ToolOutput {
    Content::resource_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
    .into()
}

/// Returns text, an image and a resource.
#[rpc_method(name = "test_multiple_content_types", groups = [CONFORMANCE])]
pub fn multiple_content_types() -> ToolOutput {
    ToolOutput::new(vec![
        Content::text("Multiple content types test:"),
        Content::image(PNG_1X1, "image/png"),
        Content::resource_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ])
}

/// Always fails: the error comes back as a tool result with `isError: true`.
#[rpc_method(name = "test_error_handling", groups = [CONFORMANCE])]
pub fn error_handling() -> Result<String, RpcError> {
    Err(RpcError::runtime(
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 of 100, ~50 ms apart.
#[rpc_method(name = "test_tool_with_progress", groups = [CONFORMANCE])]
pub async fn tool_with_progress(ctx: RequestContext) -> ToolOutput {
    for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.report_progress(p, Some(100.0), None);
    }
    Content::text("Progress test completed").into()
}

/// Closes its SSE stream mid-call; the result arrives after the client reconnects.
#[rpc_method(name = "test_reconnection", groups = [CONFORMANCE])]
pub async fn reconnection(ctx: RequestContext) -> ToolOutput {
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.close_sse_stream();
    tokio::time::sleep(Duration::from_millis(200)).await;
    Content::text("Reconnection test completed").into()
}

/// A postal address.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "address")]
pub struct Address {
    /// Street.
    pub street: Option<String>,
    /// City.
    pub city: Option<String>,
}

/// Takes a JSON Schema 2020-12 input (`$schema`, `$defs`, `$ref`).
#[rpc_method(name = "json_schema_2020_12_tool", groups = [CONFORMANCE])]
pub fn json_schema_2020_12(
    /// A name
    name: Option<String>,
    /// An address
    address: Address,
) -> String {
    format!("{} at {:?}", name.unwrap_or_default(), address)
}

/// Logs three messages at `info`, ~50 ms apart (sent when the client asked for logs).
#[rpc_method(name = "test_tool_with_logging", groups = [CONFORMANCE])]
pub async fn tool_with_logging(ctx: RequestContext) -> ToolOutput {
    for (i, step) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.log(LogLevel::Info, step);
    }
    Content::text("Logging test completed").into()
}

/// Logs one message: sent only when the request asked for logs (2026-07-28 `_meta` level).
#[rpc_method(name = "test_logging_tool", groups = [CONFORMANCE])]
pub fn logging_tool(ctx: &RequestContext) -> ToolOutput {
    ctx.log(LogLevel::Info, "test_logging_tool ran");
    Content::text("Logged only if asked").into()
}

/// Static Text Resource
///
/// A static text resource for testing
#[mcp_resource(uri = "test://static-text", name = "static-text", mime_type = "text/plain", groups = [CONFORMANCE])]
pub fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// Static Binary Resource
///
/// A static binary resource (image) for testing
#[mcp_resource(uri = "test://static-binary", name = "static-binary", mime_type = "image/png", groups = [CONFORMANCE])]
pub fn static_binary() -> ResourceContent {
    ResourceContent::base64(PNG_1X1)
}

/// Resource Template
///
/// A resource template with parameter substitution
#[mcp_resource(uri_template = "test://template/{id}/data", name = "template", mime_type = "application/json", groups = [CONFORMANCE])]
pub fn template_data(
    /// The id to substitute
    id: String,
) -> serde_json::Value {
    serde_json::json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") })
}

/// Watched Resource
///
/// A resource clients subscribe to
#[mcp_resource(uri = "test://watched-resource", name = "watched-resource", mime_type = "text/plain", groups = [CONFORMANCE])]
pub fn watched_resource() -> &'static str {
    "Watched resource content"
}

/// Simple Test Prompt
///
/// A simple prompt without arguments
#[mcp_prompt(name = "test_simple_prompt", groups = [CONFORMANCE])]
pub fn simple_prompt() -> Vec<PromptMessage> {
    vec![PromptMessage::user("This is a simple prompt for testing.")]
}

/// Prompt With Arguments
///
/// A prompt with required arguments
#[mcp_prompt(name = "test_prompt_with_arguments", groups = [CONFORMANCE])]
pub fn prompt_with_arguments(
    /// First test argument
    #[complete(with = complete_arg1)]
    arg1: String,
    /// Second test argument
    arg2: String,
) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!(
        "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
    ))]
}

/// Values for `arg1` that start with what was typed.
pub fn complete_arg1(req: &CompletionRequest) -> Vec<&'static str> {
    ["test", "testing", "tested", "value"]
        .into_iter()
        .filter(|v| v.starts_with(req.value.as_str()))
        .collect()
}

/// Prompt With Embedded Resource
///
/// A prompt that includes an embedded resource
#[mcp_prompt(name = "test_prompt_with_embedded_resource", groups = [CONFORMANCE])]
pub fn prompt_with_embedded_resource(
    /// URI of the resource to embed
    #[param(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::resource_text(
            resource_uri,
            "text/plain",
            "Embedded resource content for testing.",
        )),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// Prompt With Image
///
/// A prompt that includes image content
#[mcp_prompt(name = "test_prompt_with_image", groups = [CONFORMANCE])]
pub fn prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::image(PNG_1X1, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// Announces that the tools changed (listen streams that asked get `tools/list_changed`).
#[rpc_method(name = "test_trigger_tool_change", groups = [CONFORMANCE])]
pub fn trigger_tool_change(changes: State<Changes>) -> ToolOutput {
    changes.tools_list_changed();
    Content::text("Tool list change announced").into()
}

/// Announces that the prompts changed (listen streams that asked get `prompts/list_changed`).
#[rpc_method(name = "test_trigger_prompt_change", groups = [CONFORMANCE])]
pub fn trigger_prompt_change(changes: State<Changes>) -> ToolOutput {
    changes.prompts_list_changed();
    Content::text("Prompt list change announced").into()
}

/// Announces that `test://watched-resource` changed (subscribers get `resources/updated`).
#[rpc_method(name = "test_trigger_resource_update", groups = [CONFORMANCE])]
pub fn trigger_resource_update(changes: State<Changes>) -> ToolOutput {
    changes.resource_updated("test://watched-resource");
    Content::text("Resource update announced").into()
}
