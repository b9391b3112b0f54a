//! Transports: HTTP (axum) for both faces, and stdio for MCP.

pub mod auth;
pub mod http;
pub(crate) mod mcp;
pub mod security;
pub mod serve;
pub mod stdio;

pub use security::HostPolicy;
