//! `bench-profile MODE [ITERATIONS]`: a loop over one in-process path, for profilers
//! (`valgrind --tool=callgrind`, `perf record`). MODE is one of:
//!
//! - `call`: MCP handshake-era tools/call of `add` (bytes in, bytes out)
//! - `modern`: the same in the 2026-07-28 envelope
//! - `jsonrpc`: `add` through `jsonrpc::envelope::handle`
//! - `list`: tools/list first page of a 10 000-tool catalog
//! - `baseline`: serde_json parse + serialize of the same request/response
//! - `startup`: build a server with 10 000 methods (ITERATIONS times)

use std::hint::black_box;

use benches::*;
use mcp_runtime::jsonrpc::envelope::{Limits, handle};

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "call".into());
    let n: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let server = server().expect("the bench server");
    let ep = server.mcp_endpoint("bench", 1).expect("group bench");
    let mut bytes = 0usize;
    match mode.as_str() {
        "call" | "modern" => {
            let body = if mode == "call" {
                CALL_BODY
            } else {
                MODERN_CALL_BODY
            };
            for _ in 0..n {
                bytes += mcp_in_process(ep, black_box(body.as_bytes())).len();
            }
        }
        "jsonrpc" => {
            let catalog = server.registry().catalog("bench", 1).expect("group bench");
            for _ in 0..n {
                let r = run_ready(handle(
                    server.core(),
                    catalog,
                    black_box(JSONRPC_CALL_BODY.as_bytes()),
                    Limits::default(),
                    None,
                ));
                bytes += r.body.map_or(0, |b| b.len());
            }
        }
        "list" => {
            let defs = synthetic_defs(10_000);
            let s = synthetic_server(&defs, None);
            let ep = s.mcp_endpoint("synthetic", 1).expect("group synthetic");
            for _ in 0..n {
                bytes += mcp_in_process(ep, black_box(LIST_BODY.as_bytes())).len();
            }
        }
        "baseline" => {
            for _ in 0..n {
                bytes += serde_baseline(black_box(CALL_BODY.as_bytes())).map_or(0, |b| b.len());
            }
        }
        "startup" => {
            let defs = synthetic_defs(10_000);
            for _ in 0..n {
                bytes += synthetic_server(&defs, None)
                    .registry()
                    .catalog("synthetic", 1)
                    .map_or(0, |c| c.methods().len());
            }
        }
        _ => {
            eprintln!("usage: bench-profile call|modern|jsonrpc|list|baseline|startup [N]");
            std::process::exit(2);
        }
    }
    println!("{mode}: {n} iterations, {bytes} bytes out");
}
