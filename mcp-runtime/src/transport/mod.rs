//! Transports: HTTP (axum) for both faces, and stdio for MCP.

pub mod auth;
pub mod http;
pub(crate) mod mcp;
pub mod security;
pub mod serve;
pub mod stdio;

pub use security::HostPolicy;

/// The size of the future a two-argument handler returns (axum boxes it for every request).
#[cfg(test)]
pub(crate) fn future_size<A, B, R, F: Fn(A, B) -> R>(_: &F) -> usize {
    std::mem::size_of::<R>()
}
