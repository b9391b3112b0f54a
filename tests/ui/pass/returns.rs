//! Return types: a derived `RpcError` in `Result<T, E>`, `()`, `serde_json::Value`, `RpcError`.
#![deny(warnings)]

use mcp_runtime::prelude::*;

pub const INTERNAL: ApiGroup = ApiGroup::rpc("internal");

#[derive(Debug, thiserror::Error, RpcError)]
#[rpc(code = -32000)]
pub enum StoreError {
    #[error("product {0} not found")]
    #[rpc(code = -32404)]
    NotFound(u64),
    #[error("store is closed")]
    Closed,
    #[error("bad input: {reason}")]
    #[rpc(code = -32602)]
    BadInput { reason: String },
}

#[derive(Debug, thiserror::Error, RpcError)]
#[error("a struct error")]
pub struct Plain;

#[rpc_method(name = "Store.get", groups = [INTERNAL])]
fn get(id: u64) -> Result<String, StoreError> {
    match id {
        0 => Err(StoreError::NotFound(id)),
        1 => Err(StoreError::Closed),
        2 => Err(StoreError::BadInput {
            reason: "two".into(),
        }),
        _ => Ok(id.to_string()),
    }
}

#[rpc_method(name = "Store.plain", groups = [INTERNAL])]
async fn plain() -> Result<(), Plain> {
    Err(Plain)
}

#[rpc_method(name = "Store.touch", groups = [INTERNAL])]
fn touch() {}

#[rpc_method(name = "Store.unit", groups = [INTERNAL])]
fn unit() -> () {}

#[rpc_method(name = "Store.raw", groups = [INTERNAL])]
async fn raw() -> serde_json::Value {
    serde_json::json!({"any": ["thing"]})
}

#[rpc_method(name = "Store.raw_result", groups = [INTERNAL])]
fn raw_result() -> Result<serde_json::Value, RpcError> {
    Ok(serde_json::Value::Null)
}

#[rpc_method(name = "Store.std_result", groups = [INTERNAL])]
fn std_result() -> std::result::Result<Vec<u8>, RpcError> {
    Ok(vec![])
}

/// A crate's own `Result<T>` alias (one generic) works too.
mod aliased {
    use super::{INTERNAL, StoreError};
    use mcp_runtime::prelude::*;

    pub type Result<T> = std::result::Result<T, StoreError>;

    #[rpc_method(name = "Store.aliased", groups = [INTERNAL])]
    pub fn aliased(n: u8) -> Result<u8> {
        if n == 0 {
            Err(StoreError::Closed)
        } else {
            Ok(n)
        }
    }
}

fn main() {
    assert_eq!(aliased::aliased(1).unwrap(), 1);
    assert_eq!(RpcError::from(StoreError::NotFound(1)).code(), -32404);
    assert_eq!(RpcError::from(StoreError::Closed).code(), -32000);
    let e = RpcError::from(StoreError::BadInput { reason: "x".into() });
    assert_eq!(e.code(), -32602);
    assert_eq!(e.message(), "bad input: x");
    assert_eq!(RpcError::from(Plain).code(), -32603);

    let server = Server::builder().build().expect("valid catalog");
    let c = server
        .registry()
        .catalog("internal", 1)
        .expect("internal v1");
    for name in ["Store.touch", "Store.unit", "Store.raw", "Store.raw_result"] {
        let m = c.get(name).expect(name);
        assert!(m.output_schema.is_none(), "{name} has no output schema");
    }
    for name in ["Store.get", "Store.std_result", "Store.aliased"] {
        let m = c.get(name).expect(name);
        assert!(m.output_schema.is_some(), "{name} has an output schema");
    }
}
