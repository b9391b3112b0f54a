//! The MCP message router, both eras: any JSON message gives a JSON-RPC response.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use mcp_runtime::CallExtras;
use mcp_runtime::mcp::Era;
use mcp_runtime::mcp::handler::{Incoming, parse_message};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let ep = common::server().mcp_endpoint("mcp", 1).expect("endpoint");
    let Ok(Incoming::Request(msg)) = parse_message(value) else { return };
    for era in [Era::Handshake("2025-03-26"), Era::Handshake("2025-11-25"), Era::Modern] {
        if era.is_modern() && ep.check_modern_meta(&msg).is_err() {
            continue;
        }
        let answer = common::rt().block_on(ep.handle(&msg, era, CallExtras::default()));
        let v: serde_json::Value = serde_json::from_slice(&answer.body).expect("answers are JSON");
        assert_eq!(v["jsonrpc"], "2.0");
        assert!(v.get("result").is_some() != v.get("error").is_some());
    }
});
