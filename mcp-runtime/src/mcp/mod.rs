//! The MCP face: every method of an MCP-published group and version is a tool, and its
//! `#[mcp_resource]`s and `#[mcp_prompt]`s are resources and prompts, served over Streamable
//! HTTP (`/mcp/{group}/v{N}`) and stdio, on every protocol revision.

pub(crate) mod cancel;
pub(crate) mod card;
pub(crate) mod content;
pub(crate) mod engine;
mod extensions;
pub(crate) mod handler;
pub(crate) mod headers;
pub mod input;
mod items;
pub(crate) mod language;
pub(crate) mod listen;
pub(crate) mod meta;
pub(crate) mod pages;
pub(crate) mod prompt;
pub(crate) mod protocol;
#[cfg(feature = "redis")]
pub(crate) mod redis_sessions;
#[cfg(feature = "redis")]
pub(crate) mod redis_streams;
pub(crate) mod resource;
pub mod session;
mod skills;
mod surface;
pub(crate) mod tasks;
pub(crate) mod tools;
pub(crate) mod trace;

pub use crate::completion::{
    Completer, Completion, CompletionRequest, FromCompletion, IntoCompletion, States,
};
pub use crate::log_level::{LogLevel, UnknownLevel};
pub use content::{Content, EmbeddedResource, ToolOutput};
pub use handler::{InvalidArguments, McpOptions};
pub use input::{Elicited, RequestStateKeys, Root, SamplingRequest, SamplingResult};
pub use prompt::{PromptMessage, PromptResult, Role};
#[cfg(feature = "redis")]
pub use redis_sessions::RedisSessions;
pub use resource::{Blob, ResourceContent};
pub use session::{MemorySessions, SessionStore};
