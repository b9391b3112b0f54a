//! MCP content a method can return directly: text, images, audio, resources.

use serde::Serialize;
use serde_json::Value;

/// A resource embedded in a tool result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The resource URI.
    pub uri: String,
    /// Its MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Binary contents, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// One content block of a tool result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type (`image/png`).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type (`audio/wav`).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// An embedded resource.
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
    /// A link to a resource.
    ResourceLink {
        /// The URI.
        uri: String,
        /// A name.
        name: String,
        /// MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }
    /// An image block from base64 data.
    pub fn image(base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: base64.into(),
            mime_type: mime_type.into(),
        }
    }
    /// An audio block from base64 data.
    pub fn audio(base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: base64.into(),
            mime_type: mime_type.into(),
        }
    }
    /// A link to a resource (from revision 2025-06-18).
    pub fn resource_link(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: Option<&str>,
    ) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            mime_type: mime_type.map(str::to_owned),
        }
    }
    /// An embedded text resource.
    pub fn resource_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: EmbeddedResource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: Some(text.into()),
                blob: None,
            },
        }
    }
}

/// A tool result made of content blocks, for methods that produce files, images or several
/// parts. Over JSON-RPC the result is this object (`{"content":[...]}`).
///
/// ```
/// use mcp_runtime::mcp::{Content, ToolOutput};
/// let out = ToolOutput::new(vec![Content::text("done")]);
/// assert!(!out.is_error);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    /// The blocks.
    pub content: Vec<Content>,
    /// Optional structured result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether this reports a failure (MCP `isError`).
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn new(content: Vec<Content>) -> Self {
        Self {
            content,
            structured_content: None,
            is_error: false,
        }
    }
    /// A failed result (`isError: true`): the call ran, and reports a problem to the model.
    pub fn error(content: Vec<Content>) -> Self {
        Self {
            content,
            structured_content: None,
            is_error: true,
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::Text { text }
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

impl From<Content> for ToolOutput {
    fn from(c: Content) -> Self {
        ToolOutput::new(vec![c])
    }
}

impl crate::output::RpcReturn for ToolOutput {}
impl crate::output::RpcReturn for Content {}

fn tool_output(out: &ToolOutput) -> Result<crate::output::Output, crate::RpcError> {
    serde_json::value::to_raw_value(out)
        .map(crate::output::Output::Tool)
        .map_err(|e| crate::RpcError::internal(format!("cannot serialize the tool output: {e}")))
}

impl crate::output::SpecialOutput for crate::output::Probe<'_, ToolOutput> {
    fn __rpc_output(&self) -> Result<crate::output::Output, crate::RpcError> {
        tool_output(self.0)
    }
}
impl crate::output::SpecialOutputSchema for crate::output::SchemaProbe<ToolOutput> {
    fn __rpc_output_schema(&self, _: &mut schemars::SchemaGenerator) -> Option<schemars::Schema> {
        None
    }
}
impl crate::output::SpecialOutput for crate::output::Probe<'_, Content> {
    fn __rpc_output(&self) -> Result<crate::output::Output, crate::RpcError> {
        tool_output(&ToolOutput::new(vec![self.0.clone()]))
    }
}
impl crate::output::SpecialOutputSchema for crate::output::SchemaProbe<Content> {
    fn __rpc_output_schema(&self, _: &mut schemars::SchemaGenerator) -> Option<schemars::Schema> {
        None
    }
}
