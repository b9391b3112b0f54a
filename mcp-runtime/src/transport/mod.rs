//! Transports: HTTP (axum) for both faces.

pub mod http;
