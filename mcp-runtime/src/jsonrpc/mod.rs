//! The JSON-RPC 2.0 face: single calls, batches and notifications on the edge's reader and
//! writer, and the OpenRPC document.

pub mod callback;
pub(crate) mod face;
pub mod openrpc;
