//! Argument validation and conversion: any arguments object for any tool is answered.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use mcp_runtime::{CallExtras, Face};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Ok(args) = serde_json::from_slice::<serde_json::Value>(rest) else { return };
    let server = common::server();
    let catalog = server.registry().catalog("mcp", 1).expect("catalog");
    let methods = catalog.methods();
    let info = &methods[usize::from(pick) % methods.len()];
    // Slow or stateful tools are left out: the fuzzer must stay fast and repeatable.
    if matches!(info.name(), "Jobs.run" | "Orders.pay") {
        return;
    }
    let call = mcp_runtime::test_util::CallRequest {
        catalog,
        info,
        params: Some(args),
        face: Face::Mcp,
        extras: CallExtras::default(),
    };
    let _ = common::rt().block_on(server.core().call(call));
});
