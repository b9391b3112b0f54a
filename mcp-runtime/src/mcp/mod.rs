//! The MCP face: every method of an MCP-published group and version is a tool, served over
//! Streamable HTTP (`/mcp/{group}/v{N}`) and stdio, on every protocol revision.

pub mod content;
pub mod handler;
pub mod protocol;
#[cfg(feature = "redis")]
pub mod redis_sessions;
pub mod session;
pub mod tools;

pub use content::{Content, EmbeddedResource, ToolOutput};
pub use handler::{InvalidArguments, McpEndpoint, McpOptions};
pub use protocol::Era;
#[cfg(feature = "redis")]
pub use redis_sessions::RedisSessions;
pub use session::{MemorySessions, SessionStore};
