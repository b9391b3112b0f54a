//! The JSON-RPC 2.0 face: the envelope (single, batch, notifications) and the OpenRPC document.

pub mod envelope;
pub mod openrpc;
