//! Transports: HTTP (axum) for both faces, and stdio for MCP.

pub mod auth;
mod cards;
mod changes;
mod deadline;
pub(crate) mod detached;
pub(crate) mod health;
pub(crate) mod http;
#[cfg(feature = "jwt")]
pub mod jwt;
pub(crate) mod mcp;
#[cfg(feature = "otel")]
pub(crate) mod metrics;
pub(crate) mod mount;
pub(crate) mod respond;
pub(crate) mod route;
pub(crate) mod serve;
pub(crate) mod site;
pub(crate) mod stdio;

/// The size of the future a two-argument handler returns (axum boxes it for every request).
#[cfg(test)]
pub(crate) fn future_size<A, B, R, F: Fn(A, B) -> R>(_: &F) -> usize {
    std::mem::size_of::<R>()
}
