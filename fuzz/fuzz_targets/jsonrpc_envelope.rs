//! The JSON-RPC envelope parser and dispatcher: any bytes give a well-formed reply or none.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use mcp_runtime::Limits;
use mcp_runtime::test_util::handle;

fuzz_target!(|data: &[u8]| {
    let server = common::server();
    let catalog = server.registry().catalog("mcp", 1).expect("catalog");
    let reply = common::rt().block_on(handle(server.core(), catalog, data, &Limits::default(), None));
    if let Some(body) = reply.body {
        let v: serde_json::Value = serde_json::from_slice(&body).expect("replies are JSON");
        assert!(v.is_object() || v.is_array());
    } else {
        assert_eq!(reply.status, 204);
    }
});
