//! Methods of the JSON-RPC-only group `internal`.

use mcp_runtime::prelude::*;

use crate::INTERNAL;

/// A service whose method name (`Bad:ping`) is valid JSON-RPC but not a valid MCP tool name:
/// fine here, since `internal` is not published over MCP.
#[derive(Debug, Default)]
pub struct Bad;

#[rpc_service(name = "Bad", concat = ":", groups = [INTERNAL])]
impl Bad {
    /// Ping through a service method.
    #[rpc_method]
    pub fn ping(&self) -> String {
        "PONG".to_owned()
    }
}

/// Panics, to show that a panicking method becomes a JSON-RPC error and the server keeps serving.
#[rpc_method(name = "Chaos.panic", groups = [INTERNAL])]
pub fn chaos_panic() -> String {
    panic!("chaos: this method always panics")
}
