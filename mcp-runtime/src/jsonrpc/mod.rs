//! The JSON-RPC 2.0 face: single calls, batches and notifications on the edge's reader and
//! writer, and the discovery documents (OpenRPC, `rpc.discover`, the Postman collection).

pub mod callback;
#[cfg(feature = "redis")]
pub(crate) mod deliveries;
pub(crate) mod discovery;
#[cfg(feature = "webhooks")]
pub(crate) mod egress;
pub(crate) mod face;
pub mod openrpc;
pub(crate) mod postman;
mod spliced;
pub(crate) mod webhook;
