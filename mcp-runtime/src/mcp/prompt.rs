//! What a prompt returns: messages ([`PromptMessage`]), a [`PromptResult`] with a description,
//! or a `String` (one user message).

use serde::{Serialize, Serializer};

use super::content::Content;
pub use crate::record::Role;

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One message of a prompt: a role and a content block (text, image, audio, an embedded
/// resource or a resource link).
///
/// ```
/// use mcp_runtime::mcp::{Content, PromptMessage};
/// let m = PromptMessage::user("Find a red mug.");
/// assert_eq!(m.content, Content::text("Find a red mug."));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<Content>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// A prompt's messages with a description of this rendering.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptResult {
    /// What this rendering of the prompt is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl From<Vec<PromptMessage>> for PromptResult {
    fn from(messages: Vec<PromptMessage>) -> Self {
        Self {
            description: None,
            messages,
        }
    }
}

/// A type a prompt function may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP prompt",
    label = "return `Vec<PromptMessage>`, a `PromptMessage`, a `PromptResult` or a `String` (one user message)"
)]
#[doc(hidden)]
pub trait PromptReturn {}
impl PromptReturn for String {}
impl PromptReturn for &'static str {}
impl PromptReturn for PromptMessage {}
impl PromptReturn for Vec<PromptMessage> {}
impl PromptReturn for PromptResult {}
