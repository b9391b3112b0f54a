//! `bench-profile MODE [ITERATIONS]`: a loop over one in-process path, for profilers.
//!
//! The loop runs in `measured` after one untimed warm-up call (which compiles the tool's
//! validator), so `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured*'`
//! counts the iterations only; allocations in the loop are counted too (printed as
//! `RESULT {"mode":..,"iterations":..,"allocs":..}`). MODE is one of:
//!
//! - `call`: MCP handshake-era tools/call of `add` (bytes in, bytes out)
//! - `modern`: the same in the 2026-07-28 envelope
//! - `read`: MCP resources/read of `bench://items/7` (the `item` template), 2026-07-28
//! - `prompt`: MCP prompts/get of `review` (one argument), 2026-07-28
//! - `jsonrpc`: `add` through `jsonrpc::handle`
//! - `baseline`: serde_json parse + serialize of the same request/response
//! - `list:N:P`: tools/list first page of an N-tool catalog with pages of P tools
//! - `startup`: build a server with 10 000 methods (ITERATIONS times; the servers are dropped
//!   after the loop)

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use benches::*;
use mcp_runtime::Limits;
use mcp_runtime::test_util::handle;

/// The system allocator, counting allocations (`alloc`, `alloc_zeroed` and `realloc` calls).
struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, size) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` `n` times; what profilers count.
#[inline(never)]
fn measured(n: usize, f: &mut dyn FnMut() -> usize) -> usize {
    (0..n).map(|_| f()).sum()
}

fn usage() -> ! {
    eprintln!(
        "usage: bench-profile call|modern|read|prompt|jsonrpc|baseline|list:N:P|startup [ITERATIONS]"
    );
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "call".into());
    let n: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let server = server().expect("the bench server");
    let ep = server.mcp_endpoint("bench", 1).expect("group bench");
    let catalog = server.registry().catalog("bench", 1).expect("group bench");
    let mut f: Box<dyn FnMut() -> usize> = match mode.as_str() {
        "call" => Box::new(|| mcp_in_process(ep, black_box(CALL_BODY.as_bytes())).len()),
        "modern" => Box::new(|| mcp_in_process(ep, black_box(MODERN_CALL_BODY.as_bytes())).len()),
        "read" => Box::new(|| mcp_in_process(ep, black_box(MODERN_READ_BODY.as_bytes())).len()),
        "prompt" => Box::new(|| mcp_in_process(ep, black_box(MODERN_PROMPT_BODY.as_bytes())).len()),
        "jsonrpc" => Box::new(|| {
            run_ready(handle(
                server.core(),
                catalog,
                black_box(JSONRPC_CALL_BODY.as_bytes()),
                &Limits::default(),
                None,
            ))
            .body
            .map_or(0, |b| b.len())
        }),
        "baseline" => {
            Box::new(|| serde_baseline(black_box(CALL_BODY.as_bytes())).map_or(0, |b| b.len()))
        }
        "startup" => {
            let defs = synthetic_defs(10_000);
            // The servers are kept until the end: startup is the build, and dropping a server
            // (at shutdown) would otherwise be counted with it.
            let mut built = Vec::new();
            Box::new(move || {
                let s = synthetic_server(black_box(&defs), None);
                let n = s
                    .registry()
                    .catalog("synthetic", 1)
                    .map_or(0, |c| c.methods().len());
                built.push(s);
                n
            })
        }
        m if m.starts_with("list:") => {
            let mut it = m[5..].split(':').map(|v| v.parse::<usize>().ok());
            let (Some(Some(tools)), Some(Some(page))) = (it.next(), it.next()) else {
                usage()
            };
            let defs = synthetic_defs(tools);
            let s = synthetic_server(&defs, Some(page));
            let ep = s
                .mcp_endpoint("synthetic", 1)
                .expect("group synthetic")
                .clone();
            Box::new(move || mcp_in_process(&ep, black_box(LIST_BODY.as_bytes())).len())
        }
        _ => usage(),
    };
    // Warm-up, outside `measured` (startup is measured from its first build).
    let warm = if mode == "startup" { 0 } else { f() };
    let before = ALLOCS.load(Ordering::Relaxed);
    let t0 = std::time::Instant::now();
    let bytes = measured(n, &mut f);
    let ns = t0.elapsed().as_nanos() as f64 / n.max(1) as f64;
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    eprintln!("{mode}: {n} iterations, {} bytes out", bytes + warm);
    println!(
        "RESULT {{\"mode\":\"{}\",\"iterations\":{n},\"allocs\":{allocs},\"ns_per_iter\":{ns:.1}}}",
        mode.replace(':', "-")
    );
}
