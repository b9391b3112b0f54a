//! The MCP message router, both eras: any message the edge's reader takes gives a JSON-RPC
//! response.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use mcp_runtime::CallExtras;
use mcp_runtime::test_util::Era;
use mcp_runtime::test_util::Message;

fuzz_target!(|data: &[u8]| {
    let ep = common::server().mcp_endpoint("mcp", 1).expect("endpoint");
    for era in ["2025-03-26", "2025-11-25", "2026-07-28"].map(|v| Era::of(v).expect("a revision")) {
        let Ok(msg) = Message::read(data) else { return };
        if era.is_modern() && ep.check_modern_meta(&msg).is_err() {
            continue;
        }
        let answer = common::rt().block_on(ep.handle(msg, era, CallExtras::default()));
        let v: serde_json::Value =
            serde_json::from_slice(&answer.body.into_vec()).expect("answers are JSON");
        assert_eq!(v["jsonrpc"], "2.0");
        assert!(v.get("result").is_some() != v.get("error").is_some());
    }
});
