//! The example service, on the standard command line of `mcp_runtime::cli`:
//!
//! - `catalog [--listen ADDR]` (or `catalog serve`): HTTP on ADDR (default 127.0.0.1:8080):
//!   JSON-RPC at `/rpc/{group}/v{N}`, MCP at `/mcp/{group}/v{N}`.
//! - `catalog --stdio --group G --version N` (or `catalog stdio`): MCP over stdin/stdout.
//! - `catalog tools|resources|resource-templates|prompts|openrpc --group G --version N
//!   [--lang L]`: print a list as MCP serves it, or the OpenRPC document; `catalog check`:
//!   report problems. `catalog --help` lists everything.
//! - Beside the endpoints: `/metrics` (Prometheus), `/healthz`, `/readyz`.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    // Spans and metrics go over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or a signal's own
    // variable) is set; the metrics are kept for `/metrics` either way.
    let otel = mcp_runtime::otel::Otel::builder()
        .service_name("catalog")
        .prometheus()
        .build();
    let otel = match otel {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: OpenTelemetry: {e}");
            return ExitCode::from(2);
        }
    };
    // Logs go to stderr: on stdio, stdout carries only MCP messages (and only the JSON in
    // `tools` and `openrpc`). `LOG_FORMAT=json`: JSON lines with the trace and span ids.
    mcp_runtime::log::Logging::from_env().otel(&otel).init();
    let code = mcp_runtime::cli::run_async(examples::builder().otel(&otel)).await;
    otel.shutdown();
    code
}
