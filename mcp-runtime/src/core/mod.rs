//! The one core pipeline that both faces (JSON-RPC and MCP `tools/call`) run calls through.

pub mod params;
pub mod pipeline;
pub mod validate;

pub use pipeline::{CallRequest, Core};
