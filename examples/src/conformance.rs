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
