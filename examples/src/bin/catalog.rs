//! The example service, on the standard command line of `mcp_runtime::cli`:
//!
//! - `catalog [--listen ADDR]` (or `catalog serve`): HTTP on ADDR (default 127.0.0.1:8080):
//!   JSON-RPC at `/rpc/{group}/v{N}`, MCP at `/mcp/{group}/v{N}`.
//! - `catalog --stdio --group G --version N` (or `catalog stdio`): MCP over stdin/stdout.
//! - `catalog tools|resources|resource-templates|prompts|openrpc --group G --version N
//!   [--lang L]`: print a list as MCP serves it, or the OpenRPC document; `catalog check`:
//!   report problems. `catalog --help` lists everything.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    // Logs go to stderr: on stdio, stdout carries only MCP messages (and only the JSON in
    // `tools` and `openrpc`).
    mcp_runtime::log::init();
    mcp_runtime::cli::run_async(examples::builder()).await
}
