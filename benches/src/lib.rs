//! What the benchmark servers and the criterion benches share: the `add` tool, the `item`
//! resource template and the `review` prompt, the request bodies, the serde_json baseline, synthetic catalogs built at run time and a few helpers.
//!
//! `scripts/bench.sh` runs everything and writes `docs/benchmarks.md`.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use mcp_runtime::prelude::*;
use mcp_runtime::record::{Handler, MethodDef, ParamDef, ParamKind, Params, SourceLocation};
use mcp_runtime::test_util::{AnswerBody, Message};
use mcp_runtime::test_util::{Era, McpEndpoint};
use mcp_runtime::{BuildError, CallExtras, Output, ToolAnnotations};
use schemars::{Schema, SchemaGenerator};
use serde_json::{Value, json};

/// The MCP group of the benchmark server: `/mcp/bench/v1` (and `/rpc/bench/v1`).
pub const BENCH: ApiGroup = ApiGroup::mcp("bench");

/// The group of the synthetic catalogs (`/mcp/synthetic/v1`).
pub const SYNTHETIC: ApiGroup = ApiGroup::mcp("synthetic");

/// Adds two integers.
#[rpc_method(name = "add", groups = [BENCH])]
pub fn add(
    /// The first addend
    a: i64,
    /// The second addend
    b: i64,
) -> i64 {
    a + b
}

/// An item of the `bench://items/{id}` resource template.
#[derive(serde::Serialize)]
pub struct Item {
    /// The item's id
    pub id: u64,
    /// Its name
    pub name: &'static str,
}

/// An item, as JSON.
#[mcp_resource(
    uri_template = "bench://items/{id}",
    mime_type = "application/json",
    groups = [BENCH]
)]
pub fn item(
    /// The item's id
    id: u64,
) -> Item {
    Item { id, name: "widget" }
}

/// Asks for a short review of a topic.
#[mcp_prompt(name = "review", groups = [BENCH])]
pub fn review(
    /// What to review
    topic: String,
) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!(
        "Write a short review of {topic}."
    ))]
}

/// The group of the feature-cost servers (`bench-features`): `/mcp/feat/v1`.
pub const FEAT: ApiGroup = ApiGroup::mcp("feat");

/// The same `sum`, in a protected group (`/mcp/secure/v1`): the auth check's cost.
pub const SECURE: ApiGroup = ApiGroup::mcp("secure").protected();

/// Adds two integers: the feature-cost baseline (`add` in its own group).
#[rpc_method(name = "sum", groups = [FEAT, SECURE])]
pub fn sum(
    /// The first addend
    a: i64,
    /// The second addend
    b: i64,
) -> i64 {
    a + b
}

/// `sum`, its results shown in an MCP App (`ui://feat/card`): what a linked tool's call costs.
#[rpc_method(name = "sum_app", groups = [FEAT])]
#[mcp_tool(app = "ui://feat/card")]
pub fn sum_app(
    /// The first addend
    a: i64,
    /// The second addend
    b: i64,
) -> i64 {
    a + b
}

/// The page of the MCP App `sum_app` is linked to: about 3 KB of HTML, as an app's page is.
#[mcp_resource(uri = "ui://feat/card", app(connect_domains = ["https://api.example.com"], prefers_border = true), groups = [FEAT])]
pub fn card() -> &'static str {
    APP_PAGE
}

/// About 3 KB of HTML: the size of the example's product card.
pub const APP_PAGE: &str = concat!(
    "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sum</title>",
    "<style>body{font-family:system-ui,sans-serif;margin:0}main{padding:16px 20px}</style>",
    "</head><body><main><h1 id=\"sum\">…</h1></main><script>",
    "/* The view side of MCP Apps: ui/initialize, then the tool's result. A page of about the",
    " size of a real one, for what reading it costs. */",
    "const pending = new Map(); let next = 1;",
    "const send = (m) => window.parent.postMessage(m, \"*\");",
    "const request = (method, params) => { const id = next++; send({jsonrpc: \"2.0\", id, method, params});",
    " return new Promise((resolve, reject) => pending.set(id, {resolve, reject})); };",
    "window.addEventListener(\"message\", (e) => { const m = e.data; if (!m || m.jsonrpc !== \"2.0\") return;",
    " if (m.method === undefined) { const w = pending.get(m.id); if (w) { pending.delete(m.id);",
    " m.error ? w.reject(m.error) : w.resolve(m.result); } }",
    " else if (m.method === \"ui/notifications/tool-result\") {",
    " document.getElementById(\"sum\").textContent = String(m.params.structuredContent.result); } });",
    "request(\"ui/initialize\", {appInfo: {name: \"sum\", version: \"1.0.0\"}, appCapabilities: {},",
    " protocolVersion: \"2026-01-26\"}).then(() => send({jsonrpc: \"2.0\",",
    " method: \"ui/notifications/initialized\", params: {}}));",
    "</script></body></html>"
);

/// `sum`, its results cached for a minute (a hit after the first call).
#[rpc_method(name = "sum_cached", groups = [FEAT], cache(ttl = "60s"))]
pub fn sum_cached(
    /// The first addend
    a: i64,
    /// The second addend
    b: i64,
) -> i64 {
    a + b
}

/// `sum` under a lock on `a` (taken and released by every call).
#[rpc_method(name = "sum_locked", groups = [FEAT], lock(param = "a", ttl = "10s"))]
pub fn sum_locked(
    /// The first addend
    a: i64,
    /// The second addend
    b: i64,
) -> i64 {
    a + b
}

/// `sum` under a rate limit no load reaches (every call is decided, none refused): the
/// limiter's cost, per caller (the bench client's address).
#[rpc_method(
    name = "sum_limited",
    groups = [FEAT],
    rate_limit(limit = "4000000000/s", burst = 4000000000)
)]
pub fn sum_limited(
    /// The first addend
    a: i64,
    /// The second addend
    b: i64,
) -> i64 {
    a + b
}

/// `sum` that reports progress once (an SSE answer when the client sent a progress token).
#[rpc_method(name = "sum_progress", groups = [FEAT])]
pub fn sum_progress(
    ctx: &RequestContext,
    /// The first addend
    a: i64,
    /// The second addend
    b: i64,
) -> i64 {
    ctx.report_progress(1.0, Some(1.0), None);
    a + b
}

/// A record of 20 fields, each with a constraint the schema checks.
#[derive(Debug, serde::Serialize, serde::Deserialize, JsonSchema)]
#[allow(missing_docs)]
pub struct Dto20 {
    #[schemars(length(min = 1, max = 64))]
    pub f01: String,
    #[schemars(range(min = 0, max = 1000))]
    pub f02: i64,
    pub f03: bool,
    #[schemars(length(min = 1, max = 64))]
    pub f04: String,
    #[schemars(range(min = 0, max = 1000))]
    pub f05: i64,
    pub f06: f64,
    #[schemars(length(min = 1, max = 64))]
    pub f07: String,
    #[schemars(range(min = 0, max = 1000))]
    pub f08: i64,
    pub f09: bool,
    #[schemars(length(min = 1, max = 64))]
    pub f10: String,
    #[schemars(range(min = 0, max = 1000))]
    pub f11: i64,
    pub f12: f64,
    #[schemars(length(min = 1, max = 64))]
    pub f13: String,
    #[schemars(range(min = 0, max = 1000))]
    pub f14: i64,
    pub f15: bool,
    #[schemars(length(min = 1, max = 64))]
    pub f16: String,
    #[schemars(range(min = 0, max = 1000))]
    pub f17: i64,
    pub f18: f64,
    #[schemars(length(min = 1, max = 64))]
    pub f19: String,
    pub f20: Vec<u32>,
}

/// Takes a 20-field record (validated against its schema) and returns the sum of its integers.
#[rpc_method(name = "dto20", groups = [FEAT])]
pub fn dto20(
    /// The record
    record: Dto20,
) -> i64 {
    record.f02 + record.f05 + record.f08 + record.f11 + record.f14 + record.f17
}

/// One row of `big`'s result.
#[derive(serde::Serialize, JsonSchema)]
pub struct Row {
    /// The row number
    pub n: u32,
    /// Its name
    pub name: &'static str,
    /// Its tags
    pub tags: [&'static str; 2],
}

/// The names of `big`'s rows, made once: the `result10k` feature measures what the framework
/// does with a 10 KB result, not a hundred `format!`s in the method (about 60 k instructions).
static ROW_NAMES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    (0..100)
        .map(|n| format!("row number {n:03} of the large result"))
        .collect()
});

/// About 10 KB of structured result: 100 rows.
#[rpc_method(name = "big", groups = [FEAT])]
pub fn big() -> Vec<Row> {
    ROW_NAMES
        .iter()
        .zip(0..)
        .map(|(name, n)| Row {
            n,
            name,
            tags: ["benchmark", "structured"],
        })
        .collect()
}

/// A handshake-era `tools/call` of `add` (2 + 3).
pub const CALL_BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#;

/// The same call in the 2026-07-28 envelope (`params._meta`); sent with `MCP-Protocol-Version`,
/// `Mcp-Method` and `Mcp-Name` headers.
pub const MODERN_CALL_BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}"#;

/// A 2026-07-28 `resources/read` of the `bench://items/{id}` template (id 7); sent with
/// `Mcp-Name: bench://items/7`.
pub const MODERN_READ_BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"bench://items/7","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}"#;

/// A 2026-07-28 `tools/call` of `name` (`sum` or `sum_app`, 2 + 3), for the `feat` group.
pub fn modern_sum_body(name: &str) -> String {
    MODERN_CALL_BODY.replacen("\"add\"", &format!("\"{name}\""), 1)
}

/// A 2026-07-28 `resources/read` of the MCP App `ui://feat/card`.
pub const MODERN_APP_READ_BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"ui://feat/card","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}"#;

/// A 2026-07-28 `prompts/get` of `review` (one string argument); sent with `Mcp-Name: review`.
pub const MODERN_PROMPT_BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"review","arguments":{"topic":"benchmarks"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}"#;

/// The same call as a plain JSON-RPC request to `/rpc/bench/v1`.
pub const JSONRPC_CALL_BODY: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"add","params":{"a":2,"b":3}}"#;

/// A handshake-era `tools/list` (first page).
pub const LIST_BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;

/// What every successful `add` answer contains.
pub const EXPECTED: &str = r#""structuredContent":{"result":5}"#;

/// What every successful `resources/read` of item 7 contains (the item, as JSON text).
pub const EXPECTED_READ: &str = r#"{\"id\":7,\"name\":\"widget\"}"#;

/// What every successful `prompts/get` of `review` contains.
pub const EXPECTED_PROMPT: &str = r#""text":"Write a short review of benchmarks.""#;

/// The benchmark server: group `bench` with `add`, `item` and `review`, nothing else.
pub fn server() -> Result<Server, BuildError> {
    Server::builder()
        .name("bench-mcp-runtime")
        .version(env!("CARGO_PKG_VERSION"))
        .build()
}

/// `--listen ADDR` from the command line (default `127.0.0.1:0`); only loopback addresses.
pub fn listen_addr() -> SocketAddr {
    let mut addr = SocketAddr::from(([127, 0, 0, 1], 0));
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (
            a.as_str(),
            args.next().and_then(|v| v.parse::<SocketAddr>().ok()),
        ) {
            ("--listen", Some(v)) if v.ip().is_loopback() => addr = v,
            _ => {
                eprintln!(
                    "usage: {} [--listen 127.0.0.1:PORT]",
                    env!("CARGO_PKG_NAME")
                );
                std::process::exit(2);
            }
        }
    }
    addr
}

/// What a ceiling writes for a request body: the answer's JSON, or `None` for a 400.
pub type Answerer = fn(&[u8]) -> Option<Vec<u8>>;

/// A bare ceiling on `--listen`: `/mcp` answers a `tools/call` with `mcp`, `/rpc` a JSON-RPC
/// call with `rpc`, nothing else around them.
pub async fn serve_ceiling(mcp: Answerer, rpc: Answerer) -> std::io::Result<()> {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    fn reply(out: Option<Vec<u8>>) -> axum::response::Response {
        match out {
            Some(out) => ([(header::CONTENT_TYPE, "application/json")], out).into_response(),
            None => StatusCode::BAD_REQUEST.into_response(),
        }
    }
    let router = axum::Router::new()
        .route(
            "/mcp",
            axum::routing::post(move |body: axum::body::Bytes| async move { reply(mcp(&body)) }),
        )
        .route(
            "/rpc",
            axum::routing::post(move |body: axum::body::Bytes| async move { reply(rpc(&body)) }),
        );
    serve_router(listen_addr(), router).await
}

/// Binds `addr` and serves `router` with TCP_NODELAY on every connection until Ctrl-C/SIGTERM.
pub async fn serve_router(addr: SocketAddr, router: axum::Router) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on {}", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(mcp_runtime::shutdown_signal())
        .await
}

/// The ceiling: parse the body with serde_json, add, and write the same result shape.
///
/// `None` when the body is not a `tools/call` of `add` with integer arguments.
pub fn serde_baseline(body: &[u8]) -> Option<Vec<u8>> {
    let req: Value = serde_json::from_slice(body).ok()?;
    if req.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    let params = req.get("params")?;
    if params.get("name")?.as_str()? != "add" {
        return None;
    }
    let sum = add_of(params.get("arguments")?)?;
    // The 2026-07-28 envelope gets that era's result shape (`resultType`, the `_meta` stamp),
    // so the ceiling does the same work as the servers measured against it.
    let modern = params
        .get("_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str)
        == Some("2026-07-28");
    let resp = if modern {
        json!({
            "jsonrpc": "2.0",
            "id": req.get("id"),
            "result": {
                "resultType": "complete",
                "content": [{"type": "text", "text": sum.to_string()}],
                "structuredContent": {"result": sum},
                "isError": false,
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "bench-axum", "version": "0.1.0"}},
            }
        })
    } else {
        json!({
            "jsonrpc": "2.0",
            "id": req.get("id"),
            "result": {
                "content": [{"type": "text", "text": sum.to_string()}],
                "structuredContent": {"result": sum},
                "isError": false,
            }
        })
    };
    serde_json::to_vec(&resp).ok()
}

/// The JSON-RPC ceiling: parse a plain JSON-RPC `add` request with serde_json and write
/// `{"jsonrpc":"2.0","id":..,"result":a+b}`.
///
/// `None` when the body is not a call of `add` with integer `a` and `b`.
pub fn serde_jsonrpc_baseline(body: &[u8]) -> Option<Vec<u8>> {
    let req: Value = serde_json::from_slice(body).ok()?;
    if req.get("method")?.as_str()? != "add" {
        return None;
    }
    let sum = add_of(req.get("params")?)?;
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": req.get("id"), "result": sum})).ok()
}

/// `a + b` of the baselines' arguments, `None` unless both are integers and the sum fits.
fn add_of(args: &Value) -> Option<i64> {
    args.get("a")?
        .as_i64()?
        .checked_add(args.get("b")?.as_i64()?)
}

/// Polls a future that must finish without waiting (every handler here is synchronous).
pub fn run_ready<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("the future was not ready"),
    }
}

/// Request bytes to response bytes through an MCP endpoint, as Streamable HTTP does it
/// (parse, message checks, era, `McpEndpoint::handle`), minus HTTP: the body's parts as the
/// transport hands them to hyper (a tools/list page is the written opening plus the shared
/// precomputed page).
pub fn mcp_in_process(ep: &McpEndpoint, body: &[u8]) -> AnswerBody {
    // The edge's reader: the envelope straight from the bytes, duplicate keys refused.
    let Ok(msg) = Message::read(body) else {
        panic!("not a request");
    };
    let era = if msg.meta_version().is_some() {
        if let Err(a) = ep.check_modern_meta(&msg) {
            return a.body;
        }
        Era::latest_stateless()
    } else {
        Era::latest_handshake()
    };
    run_ready(ep.handle(msg, era, CallExtras::default())).body
}

fn i64_schema(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<i64>()
}

fn i64_output(g: &mut SchemaGenerator) -> Option<Schema> {
    Some(g.subschema_for::<i64>())
}

fn synthetic_add(_ctx: RequestContext, p: Params) -> Result<Output, RpcError> {
    let arg = |k: &str| p.get(k).and_then(Value::as_i64).unwrap_or(0);
    Output::json(&(arg("a") + arg("b")))
}

const SYNTHETIC_PARAMS: &[ParamDef] = &[
    ParamDef {
        name: "a",
        description: "The first addend",
        kind: ParamKind::Required,
        schema: i64_schema,
        constraints: "",
    },
    ParamDef {
        name: "b",
        description: "The second addend",
        kind: ParamKind::Required,
        schema: i64_schema,
        constraints: "",
    },
];

/// `n` method records built at run time (`tool_00000` …), each like `add`, leaked once.
pub fn synthetic_defs(n: usize) -> Vec<&'static MethodDef> {
    (0..n)
        .map(|i| {
            let name: &'static str = Box::leak(format!("tool_{i:05}").into_boxed_str());
            let docs: &'static str = Box::leak(
                format!("Adds two integers (variant {i}).\n\nReturns a + b.").into_boxed_str(),
            );
            let def: &'static MethodDef = Box::leak(Box::new(MethodDef {
                name,
                groups: &[SYNTHETIC],
                since: 1,
                removed_in: None,
                docs,
                params: SYNTHETIC_PARAMS,
                annotations: ToolAnnotations::NONE,
                output_schema: i64_output,
                handler: Handler::Sync(synthetic_add),
                cache: None,
                lock: None,
                rate_limit: None,
                task: mcp_runtime::record::TaskSupport::Forbidden,
                retry: true,
                transform: None,
                location: SourceLocation {
                    file: file!(),
                    line: line!(),
                    rust_path: name,
                },
                states: &[],
                scopes: &[],
                app: None,
            }));
            def
        })
        .collect()
}

/// A server with only the given records (`without_registered_methods`), tools/list pages of
/// `page_size` (the default is 50).
pub fn synthetic_server(defs: &[&'static MethodDef], page_size: Option<usize>) -> Server {
    let mut b = Server::builder().without_registered_methods();
    if let Some(p) = page_size {
        b = b.mcp_page_size(p);
    }
    defs.iter()
        .fold(b, |b, d| b.method(d))
        .build()
        .expect("a valid synthetic catalog")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paths_agree() {
        let server = server().unwrap();
        let ep = server.mcp_endpoint("bench", 1).unwrap();
        for (body, expected) in [
            (CALL_BODY, EXPECTED),
            (MODERN_CALL_BODY, EXPECTED),
            (MODERN_READ_BODY, EXPECTED_READ),
            (MODERN_PROMPT_BODY, EXPECTED_PROMPT),
        ] {
            let out = String::from_utf8(mcp_in_process(ep, body.as_bytes()).into_vec()).unwrap();
            assert!(out.contains(expected), "{out}");
        }
        let rpc = serde_jsonrpc_baseline(JSONRPC_CALL_BODY.as_bytes()).unwrap();
        assert_eq!(rpc, br#"{"jsonrpc":"2.0","id":1,"result":5}"#);
        let base = String::from_utf8(serde_baseline(CALL_BODY.as_bytes()).unwrap()).unwrap();
        assert_eq!(
            base,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"5"}],"structuredContent":{"result":5},"isError":false}}"#
        );
        let defs = synthetic_defs(120);
        let s = synthetic_server(&defs, None);
        let ep = s.mcp_endpoint("synthetic", 1).unwrap();
        let out = String::from_utf8(mcp_in_process(ep, LIST_BODY.as_bytes()).into_vec()).unwrap();
        assert!(
            out.contains("tool_00049") && !out.contains("tool_00050"),
            "{out}"
        );
        let call = CALL_BODY.replace("\"add\"", "\"tool_00119\"");
        let out = String::from_utf8(mcp_in_process(ep, call.as_bytes()).into_vec()).unwrap();
        assert!(out.contains(EXPECTED), "{out}");
    }
}
