//! What a resource returns: text (a `String`), JSON (any other serializable value, written as
//! text with the resource's MIME type), binary ([`Blob`]) or several contents at once
//! ([`ResourceContent`]s).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::Serialize;

use crate::error::RpcError;
use crate::output::{Output, Probe, SchemaProbe, SpecialOutput, SpecialOutputSchema};

/// Binary contents, sent base64-encoded as `blob`.
///
/// ```
/// use mcp_runtime::mcp::Blob;
/// let png = Blob::from(vec![0x89, b'P', b'N', b'G']);
/// assert_eq!(png.0.len(), 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Blob(pub Vec<u8>);

impl From<Vec<u8>> for Blob {
    fn from(b: Vec<u8>) -> Self {
        Blob(b)
    }
}

impl From<&[u8]> for Blob {
    fn from(b: &[u8]) -> Self {
        Blob(b.to_vec())
    }
}

/// One content of a resource read. Its `uri` and `mimeType` default to the resource's.
///
/// ```
/// use mcp_runtime::mcp::ResourceContent;
/// let readme = ResourceContent::text("# Hello").with_uri("file:///docs/README.md").with_mime_type("text/markdown");
/// assert_eq!(readme.uri.as_deref(), Some("file:///docs/README.md"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContent {
    /// The URI (the one read, when `None`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The MIME type (the resource's, when `None`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Binary contents, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

impl ResourceContent {
    /// Text contents.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            uri: None,
            mime_type: None,
            text: Some(text.into()),
            blob: None,
        }
    }

    /// A value serialized as JSON text (`application/json` unless the resource says otherwise).
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, RpcError> {
        serde_json::to_string(value)
            .map(Self::text)
            .map_err(|e| RpcError::internal(format!("cannot serialize the resource: {e}")))
    }

    /// Binary contents, base64-encoded.
    pub fn blob(bytes: impl AsRef<[u8]>) -> Self {
        Self {
            uri: None,
            mime_type: None,
            text: None,
            blob: Some(B64.encode(bytes)),
        }
    }

    /// Binary contents already base64-encoded (as they are stored or received).
    pub fn base64(data: impl Into<String>) -> Self {
        Self {
            uri: None,
            mime_type: None,
            text: None,
            blob: Some(data.into()),
        }
    }

    /// With its own URI (a part of a directory, say).
    pub fn with_uri(mut self, uri: impl Into<String>) -> Self {
        self.uri = Some(uri.into());
        self
    }

    /// With its own MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// Several contents, as the handler's output (a JSON array the resource reader completes).
fn contents(list: &[ResourceContent]) -> Result<Output, RpcError> {
    serde_json::value::to_raw_value(list)
        .map(Output::Tool)
        .map_err(|e| RpcError::internal(format!("cannot serialize the resource: {e}")))
}

impl SpecialOutput for Probe<'_, ResourceContent> {
    fn __rpc_output(&self) -> Result<Output, RpcError> {
        contents(std::slice::from_ref(self.0))
    }
}
impl SpecialOutput for Probe<'_, Vec<ResourceContent>> {
    fn __rpc_output(&self) -> Result<Output, RpcError> {
        contents(self.0)
    }
}
impl SpecialOutput for Probe<'_, Blob> {
    fn __rpc_output(&self) -> Result<Output, RpcError> {
        contents(&[ResourceContent::blob(&self.0.0)])
    }
}
impl SpecialOutputSchema for SchemaProbe<ResourceContent> {
    fn __rpc_output_schema(&self, _: &mut schemars::SchemaGenerator) -> Option<schemars::Schema> {
        None
    }
}
impl SpecialOutputSchema for SchemaProbe<Vec<ResourceContent>> {
    fn __rpc_output_schema(&self, _: &mut schemars::SchemaGenerator) -> Option<schemars::Schema> {
        None
    }
}
impl SpecialOutputSchema for SchemaProbe<Blob> {
    fn __rpc_output_schema(&self, _: &mut schemars::SchemaGenerator) -> Option<schemars::Schema> {
        None
    }
}

/// A type a resource function may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP resource",
    label = "return a `String` (text), a `Blob`, `ResourceContent`s or a `serde::Serialize` value (JSON)"
)]
#[doc(hidden)]
pub trait ResourceReturn {}
impl ResourceReturn for Blob {}
impl<T: Serialize> ResourceReturn for T {}
