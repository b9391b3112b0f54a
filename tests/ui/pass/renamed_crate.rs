//! The runtime under another name: `crate = "..."` on every macro.
#![deny(warnings)]

extern crate mcp_runtime as rt;

use rt::prelude::*;

pub const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[derive(Debug, thiserror::Error, rt::RpcError)]
#[rpc(crate = "rt", code = -32001)]
#[error("nope")]
pub struct Nope;

/// Free function.
#[rpc_method(groups = [MCP], crate = "rt")]
fn free(#[param(default = 1)] n: i64) -> Result<i64, Nope> {
    if n < 0 { Err(Nope) } else { Ok(n) }
}

pub mod nested {
    use super::MCP;
    use rt::prelude::*;

    pub struct Svc;

    #[rpc_service(groups = [MCP], crate = "rt")]
    impl Svc {
        /// Method.
        #[rpc_method]
        #[mcp_tool(read_only_hint)]
        pub fn method(&self, ctx: &RequestContext) -> String {
            ctx.method().to_owned()
        }
    }

    /// Tool above.
    #[mcp_tool(title = "Above")]
    #[rpc_method(groups = [MCP], crate = "::rt")]
    pub fn above() {}
}

fn main() {
    assert_eq!(rt::RpcError::from(Nope).code(), -32001);
    let server = Server::builder().state(nested::Svc).build().expect("valid");
    let c = server.registry().catalog("mcp", 1).expect("mcp v1");
    assert!(c.get("free").is_some());
    assert!(c.get("Svc.method").is_some());
    assert_eq!(c.get("above").unwrap().def.annotations.title, Some("Above"));
}
