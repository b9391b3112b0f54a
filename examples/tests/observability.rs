//! What an operator of the example sees, against real receivers: the spans it exports over
//! OTLP/HTTP (decoded here with the OpenTelemetry protobuf types) for an MCP call carrying its
//! trace context in `_meta`, an HTTP batch, a `/rpc` call whose webhook continues its trace,
//! and a task taken over by another instance; its JSON log lines joined to those traces; its
//! `/metrics` scraped by Debian's Prometheus and queried with PromQL after a known load; and
//! the number of series staying fixed whatever method names clients send.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message as _;
use serde_json::{Value, json};

mod common;

use common::{Redis, Spawned};

/// An exported span, as the receiver decoded it.
#[derive(Debug, Clone)]
struct Span {
    name: String,
    /// 1 internal, 2 server, 3 client.
    kind: i32,
    trace: String,
    id: String,
    parent: String,
    /// 2 when it failed.
    status: i32,
    attrs: BTreeMap<String, String>,
}

const INTERNAL: i32 = 1;
const SERVER: i32 = 2;
const CLIENT: i32 = 3;
const PRODUCER: i32 = 4;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn text(v: Option<Any>) -> String {
    match v {
        Some(Any::StringValue(s)) => s,
        Some(Any::IntValue(i)) => i.to_string(),
        Some(Any::BoolValue(b)) => b.to_string(),
        Some(Any::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

/// A metric's name with one data point's attributes, as the receiver saw it.
type Point = (String, BTreeMap<String, String>);

/// An OTLP/HTTP receiver on a free loopback port: every span posted to `/v1/traces`, and the
/// names of the metrics posted to `/v1/metrics` with their data points' attributes.
struct Receiver {
    endpoint: String,
    spans: Arc<Mutex<Vec<Span>>>,
    metrics: Arc<Mutex<Vec<Point>>>,
}

async fn receiver() -> Receiver {
    let spans = Arc::new(Mutex::new(Vec::new()));
    let kept = spans.clone();
    let metrics = Arc::new(Mutex::new(Vec::new()));
    let kept_metrics = metrics.clone();
    let app = axum::Router::new()
        .route(
            "/v1/traces",
            axum::routing::post(move |body: axum::body::Bytes| {
                let kept = kept.clone();
                async move {
                    let Ok(req) = ExportTraceServiceRequest::decode(body) else {
                        return axum::http::StatusCode::BAD_REQUEST;
                    };
                    let mut kept = kept.lock().unwrap();
                    for s in req
                        .resource_spans
                        .into_iter()
                        .flat_map(|r| r.scope_spans)
                        .flat_map(|s| s.spans)
                    {
                        kept.push(Span {
                            name: s.name,
                            kind: s.kind,
                            trace: hex(&s.trace_id),
                            id: hex(&s.span_id),
                            parent: hex(&s.parent_span_id),
                            status: s.status.map_or(0, |st| st.code),
                            attrs: s
                                .attributes
                                .into_iter()
                                .map(|kv| (kv.key, text(kv.value.and_then(|v| v.value))))
                                .collect(),
                        });
                    }
                    axum::http::StatusCode::OK
                }
            }),
        )
        .route(
            "/v1/metrics",
            axum::routing::post(move |body: axum::body::Bytes| {
                let kept = kept_metrics.clone();
                async move {
                    use opentelemetry_proto::tonic::metrics::v1::metric::Data;
                    let Ok(req) = ExportMetricsServiceRequest::decode(body) else {
                        return axum::http::StatusCode::BAD_REQUEST;
                    };
                    let mut kept = kept.lock().unwrap();
                    for m in req
                        .resource_metrics
                        .into_iter()
                        .flat_map(|r| r.scope_metrics)
                        .flat_map(|s| s.metrics)
                    {
                        let points: Vec<Vec<opentelemetry_proto::tonic::common::v1::KeyValue>> =
                            match m.data {
                                Some(Data::Histogram(h)) => {
                                    h.data_points.into_iter().map(|p| p.attributes).collect()
                                }
                                Some(Data::Sum(s)) => {
                                    s.data_points.into_iter().map(|p| p.attributes).collect()
                                }
                                _ => Vec::new(),
                            };
                        for attrs in points {
                            let attrs = attrs
                                .into_iter()
                                .map(|kv| (kv.key, text(kv.value.and_then(|v| v.value))))
                                .collect();
                            kept.push((m.name.clone(), attrs));
                        }
                    }
                    axum::http::StatusCode::OK
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Receiver {
        endpoint,
        spans,
        metrics,
    }
}

impl Receiver {
    /// The environment that makes the example export here (spans batched every 50 ms).
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("OTEL_EXPORTER_OTLP_ENDPOINT", self.endpoint.clone()),
            ("OTEL_BSP_SCHEDULE_DELAY", "50".into()),
            ("OTEL_METRIC_EXPORT_INTERVAL", "600000".into()),
        ]
    }

    /// The spans of trace `trace`, once `n` of them have arrived (at most 20 s).
    async fn trace(&self, trace: &str, n: usize) -> Vec<Span> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let got: Vec<Span> = self
                .spans
                .lock()
                .unwrap()
                .iter()
                .filter(|s| s.trace == trace)
                .cloned()
                .collect();
            if got.len() >= n {
                return got;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} of {n} spans of trace {trace}: {got:#?}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn one<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let found: Vec<&Span> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one span {name}: {spans:#?}");
    found[0]
}

fn attrs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The `rpc.call` span's attributes other than its per-call id and duration.
fn call_attrs(s: &Span) -> BTreeMap<String, String> {
    let mut a = s.attrs.clone();
    let id = a.remove("rpc.request_id").unwrap_or_default();
    assert!(id.starts_with("rpc-"), "{s:#?}");
    let us = a.remove("duration_us").unwrap_or_default();
    assert!(us.parse::<u64>().is_ok(), "{s:#?}");
    a
}

fn start(env: &[(&'static str, String)], more: &[(&str, &str)]) -> Spawned {
    let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend_from_slice(more);
    Spawned::catalog(&all)
}

/// A 2026-07-28 `tools/call` with `_meta.traceparent`, from a client that declares sampling
/// and the tasks extension.
async fn traced_tool_call(
    base: &str,
    group: &str,
    id: u64,
    traceparent: &str,
    name: &str,
    args: Value,
) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
    "name": name, "arguments": args,
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {
            "sampling": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        "traceparent": traceparent,
    }}});
    reqwest::Client::new()
        .post(format!("{base}/mcp/{group}/v1"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .json(&body)
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json")
}

#[tokio::test]
async fn spans_follow_the_conventions_and_continue_the_callers_trace() {
    let otlp = receiver().await;
    // The webhook: the trace headers of every POST it receives.
    let (tx, mut hooks) = tokio::sync::mpsc::unbounded_channel::<(Option<String>, Value)>();
    let hook_app = axum::Router::new().fallback(
        move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let tx = tx.clone();
            async move {
                let parent = headers
                    .get("traceparent")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                // The delivery (not the probe that checks the URL first).
                if let Ok(v) = serde_json::from_slice::<Value>(&body)
                    && v.get("jsonrpc").is_some()
                {
                    let _ = tx.send((parent, v));
                }
                axum::http::StatusCode::OK
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hooks", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, hook_app).await });
    let p = start(
        &otlp.env(),
        &[
            ("APP_ENV", "prod"),
            ("CATALOG_WEBHOOK_ALLOW_HOSTS", "127.0.0.1"),
            ("LOG_FORMAT", "json"),
            ("RUST_LOG", "info,mcp_runtime=debug"),
        ],
    );
    let base = format!("http://{}", p.addr);
    let c = reqwest::Client::new();

    // An MCP call whose trace context is in `_meta` (stdio has nothing else).
    let t1 = "0af7651916cd43dd8448eb211c80319c";
    let got = traced_tool_call(
        &base,
        "mcp",
        7,
        &format!("00-{t1}-b7ad6b7169203331-01"),
        "Catalog.ping",
        json!({}),
    )
    .await;
    assert_eq!(got["result"]["isError"], false, "{got}");
    let spans = otlp.trace(t1, 2).await;
    let request = one(&spans, "tools/call Catalog.ping");
    assert_eq!(
        (request.kind, request.parent.as_str(), request.status),
        (SERVER, "b7ad6b7169203331", 0)
    );
    assert_eq!(
        request.attrs,
        attrs(&[
            ("mcp.method.name", "tools/call"),
            ("mcp.protocol.version", "2026-07-28"),
            ("jsonrpc.request.id", "7"),
            ("gen_ai.tool.name", "Catalog.ping"),
            ("gen_ai.operation.name", "execute_tool"),
            ("network.transport", "tcp"),
        ])
    );
    let call = one(&spans, "Catalog.ping");
    assert_eq!((call.kind, &call.parent), (INTERNAL, &request.id));
    assert_eq!(
        call_attrs(call),
        attrs(&[
            ("rpc.system", "jsonrpc"),
            ("rpc.jsonrpc.version", "2.0"),
            ("rpc.method", "Catalog.ping"),
            ("rpc.group", "mcp"),
            ("rpc.api_version", "1"),
            ("rpc.face", "Mcp"),
            ("outcome", "ok"),
        ])
    );
    assert_eq!(spans.len(), 2, "{spans:#?}");

    // A change announced by a call is a span of its trace.
    let t4 = "2af7651916cd43dd8448eb211c80319e";
    let got = traced_tool_call(
        &base,
        "conformance",
        9,
        &format!("00-{t4}-d7ad6b7169203333-01"),
        "test_trigger_resource_update",
        json!({}),
    )
    .await;
    assert_eq!(got["result"]["isError"], false, "{got}");
    let spans = otlp.trace(t4, 3).await;
    let call = one(&spans, "test_trigger_resource_update");
    let notice = one(&spans, "notifications/resources/updated");
    assert_eq!((notice.kind, &notice.parent), (PRODUCER, &call.id));
    assert_eq!(
        notice.attrs,
        attrs(&[
            ("mcp.method.name", "notifications/resources/updated"),
            ("mcp.resource.uri", "test://watched-resource"),
        ])
    );

    // A question to the client carries the asking call's trace context in its `_meta`.
    let t0 = "1af7651916cd43dd8448eb211c80319d";
    let asked = traced_tool_call(
        &base,
        "mcp",
        8,
        &format!("00-{t0}-c7ad6b7169203332-01"),
        "Catalog.pitch",
        json!({"id": 1}),
    )
    .await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let spans = otlp.trace(t0, 2).await;
    let pitch = one(&spans, "Catalog.pitch");
    assert_eq!(
        asked["result"]["inputRequests"]["sample-1"]["params"]["_meta"],
        json!({"traceparent": format!("00-{t0}-{}-01", pitch.id)}),
        "{asked}"
    );

    // A batch over HTTP, its trace context in the headers: one span for the batch, a child
    // per item (one failing).
    let t2 = "4bf92f3577b34da6a3ce929d0e0e4736";
    let batch = c
        .post(format!("{base}/rpc/mcp/v1"))
        .header("traceparent", format!("00-{t2}-00f067aa0ba902b7-01"))
        .json(&json!([
            {"jsonrpc": "2.0", "id": 1, "method": "Catalog.ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "Catalog.get", "params": {"id": 99}}
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(batch.status(), 200);
    let spans = otlp.trace(t2, 3).await;
    let root = one(&spans, "jsonrpc batch");
    assert_eq!(
        (root.kind, root.parent.as_str()),
        (SERVER, "00f067aa0ba902b7")
    );
    assert_eq!(
        root.attrs,
        attrs(&[("rpc.system", "jsonrpc"), ("jsonrpc.batch.size", "2")])
    );
    let ping = one(&spans, "Catalog.ping");
    let get = one(&spans, "Catalog.get");
    assert_eq!((&ping.parent, &get.parent), (&root.id, &root.id));
    assert_eq!(
        (ping.kind, ping.status, get.kind, get.status),
        (SERVER, 0, SERVER, 2)
    );
    assert_eq!(call_attrs(get)["rpc.jsonrpc.error_code"], "-32404");
    assert_eq!(call_attrs(get)["outcome"], "error");
    assert_eq!(spans.len(), 3, "{spans:#?}");

    // An asynchronous `/rpc` call: run later, its answer POSTed to a webhook that continues
    // the same trace.
    let t3 = "5b8efff798038103d269b633813fc60c";
    let ack: Value = c
        .post(format!("{base}/rpc/mcp/v1"))
        .header("traceparent", format!("00-{t3}-eee19b7ec3c1b174-01"))
        .json(&json!({"jsonrpc": "2.0", "id": 3, "method": "Jobs.run",
            "params": {"steps": 1, "step_ms": 1, "$rpc": {"callback": hook}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ack["result"]["async"], true, "{ack}");
    let (parent, delivered) = tokio::time::timeout(Duration::from_secs(20), hooks.recv())
        .await
        .expect("delivered in time")
        .expect("the webhook runs");
    assert_eq!(delivered["result"], json!({"steps": 1}), "{delivered}");
    let spans = otlp.trace(t3, 2).await;
    let run = one(&spans, "Jobs.run");
    let post = one(&spans, "POST");
    assert_eq!(
        (run.kind, run.parent.as_str()),
        (SERVER, "eee19b7ec3c1b174")
    );
    assert_eq!(
        (post.kind, post.parent.as_str()),
        (CLIENT, "eee19b7ec3c1b174")
    );
    assert_eq!(
        post.attrs,
        attrs(&[
            ("http.request.method", "POST"),
            ("server.address", "127.0.0.1"),
            ("rpc.method", "Jobs.run"),
            ("http.response.status_code", "200"),
        ])
    );
    // The receiver's parent is the delivery's span, in the caller's trace.
    assert_eq!(parent, Some(format!("00-{t3}-{}-01", post.id)));

    // The log lines of the failed batch item carry its trace and span ids.
    let log = p.log();
    let failed: Vec<Value> = log
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["message"] == "call failed" && l["method"] == "Catalog.get")
        .collect();
    assert_eq!(failed.len(), 1, "{log:#?}");
    assert_eq!(failed[0]["trace_id"], t2, "{}", failed[0]);
    assert_eq!(failed[0]["span_id"], get.id.as_str(), "{}", failed[0]);
    assert_eq!(failed[0]["level"], "DEBUG");
    assert_eq!(failed[0]["spans"], json!(["jsonrpc.batch", "rpc.call"]));
}

#[tokio::test]
async fn over_stdio_the_trace_comes_in_meta_and_the_session_is_timed() {
    use std::io::{BufRead as _, Write as _};
    let otlp = receiver().await;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_catalog"))
        .args(["--stdio", "--group", "mcp"])
        .env_remove("REDIS_URL")
        .env_remove("APP_ENV")
        .envs(otlp.env())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("catalog --stdio");
    let t = "6e0c63257de34c926f9efcd03927272e";
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "Catalog.ping", "arguments": {},
            "_meta": {"traceparent": format!("00-{t}-a1b2c3d4e5f60718-01")}}}),
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut answers = 0;
    let mut line = String::new();
    while answers < 2 && out.read_line(&mut line).unwrap() > 0 {
        if line.contains("\"id\":") {
            answers += 1;
        }
        line.clear();
    }
    // Stdin closes: the connection, its session, and the process end (exporting what is left).
    drop(stdin);
    let exited = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap();
    assert!(exited.unwrap().success());
    let spans = otlp.trace(t, 2).await;
    let request = one(&spans, "tools/call Catalog.ping");
    assert_eq!(
        (request.kind, request.parent.as_str()),
        (SERVER, "a1b2c3d4e5f60718")
    );
    assert_eq!(request.attrs["network.transport"], "pipe");
    assert_eq!(request.attrs["mcp.protocol.version"], "2025-11-25");
    let metrics = otlp.metrics.lock().unwrap().clone();
    let sessions: Vec<_> = metrics
        .iter()
        .filter(|(name, _)| name == "mcp.server.session.duration")
        .collect();
    assert_eq!(
        sessions.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>(),
        vec![attrs(&[
            ("mcp.protocol.version", "2025-11-25"),
            ("network.transport", "pipe")
        ])],
        "{metrics:#?}"
    );
    assert!(
        metrics
            .iter()
            .any(|(name, a)| name == "mcp.server.operation.duration"
                && a.get("gen_ai.tool.name").map(String::as_str) == Some("Catalog.ping")),
        "{metrics:#?}"
    );
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_task_taken_over_by_another_instance_continues_its_trace() {
    let otlp = receiver().await;
    let redis = Redis::start();
    let url = redis.url();
    let more = [("REDIS_URL", url.as_str()), ("APP_ENV", "prod")];
    let mut a = start(&otlp.env(), &more);
    let b = start(&otlp.env(), &more);
    let t = "a3ce929d0e0e47364bf92f3577b34da6";
    // Four seconds of work, accepted by A, which is killed while it runs it.
    let created = traced_tool_call(
        &format!("http://{}", a.addr),
        "mcp",
        1,
        &format!("00-{t}-53995c3f42cd8ad8-01"),
        "Jobs.run",
        json!({"steps": 40, "step_ms": 100}),
    )
    .await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    tokio::time::sleep(Duration::from_millis(500)).await;
    a.kill();
    let done =
        common::task_status(&format!("http://{}", b.addr), "mcp", &task, "completed", 60).await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"result": {"steps": 40, "attempt": 2}})
    );
    // B's run is in the trace of the call that started it, a child of the caller's span (A's
    // run died with A: its spans never ended).
    let spans = otlp.trace(t, 2).await;
    let run = one(&spans, "tools/call Jobs.run");
    assert_eq!(
        (run.kind, run.parent.as_str(), run.status),
        (SERVER, "53995c3f42cd8ad8", 0)
    );
    assert_eq!(run.attrs["gen_ai.tool.name"], "Jobs.run");
    let call = one(&spans, "Jobs.run");
    assert_eq!((call.kind, &call.parent), (INTERNAL, &run.id));
}

/// The example's `/metrics` text.
async fn metrics_text(c: &reqwest::Client, base: &str) -> String {
    c.get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The example's series (its `/metrics` lines that are not comments).
async fn series(c: &reqwest::Client, base: &str) -> Vec<String> {
    metrics_text(c, base)
        .await
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.rsplit_once(' ').map(|(s, _)| s.to_owned()))
        .collect()
}

#[tokio::test]
async fn no_client_can_grow_the_number_of_series() {
    let p = Spawned::catalog(&[("APP_ENV", "prod")]);
    let base = format!("http://{}", p.addr);
    let c = reqwest::Client::new();
    let send = |i: usize| {
        let c = c.clone();
        let base = base.clone();
        async move {
            // An unknown MCP method, an unknown tool, an unknown `/rpc` method.
            let body = match i % 3 {
                0 => json!({"jsonrpc": "2.0", "id": i, "method": format!("x/{i}"), "params": {
                    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                        "io.modelcontextprotocol/clientCapabilities": {}}}}),
                1 => json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                    "name": format!("t{i}"), "arguments": {},
                    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                        "io.modelcontextprotocol/clientCapabilities": {}}}}),
                _ => json!({"jsonrpc": "2.0", "id": i, "method": format!("M.{i}")}),
            };
            let method = body["method"].as_str().unwrap_or_default().to_owned();
            let mut req = if i % 3 == 2 {
                c.post(format!("{base}/rpc/mcp/v1"))
            } else {
                let r = c
                    .post(format!("{base}/mcp/mcp/v1"))
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", method);
                match body["params"]["name"].as_str() {
                    Some(n) => r.header("mcp-name", n),
                    None => r,
                }
            };
            req = req.json(&body);
            req.send().await.unwrap().status()
        }
    };
    use futures_util::StreamExt as _;
    // Each kind once, so that every series it makes exists.
    for i in 0..3 {
        send(i).await;
    }
    let before = series(&c, &base).await;
    let statuses: Vec<_> = futures_util::stream::iter(3..10_003)
        .map(send)
        .buffer_unordered(32)
        .collect()
        .await;
    assert_eq!(statuses.len(), 10_000);
    let after = series(&c, &base).await;
    assert_eq!(before.len(), after.len(), "{after:#?}");
    assert!(
        after
            .iter()
            .any(|s| s.contains(r#"mcp_method_name="other""#)),
        "{after:#?}"
    );
    assert!(
        after
            .iter()
            .all(|s| !s.contains("x/") && !s.contains("M.1")),
        "{after:#?}"
    );
}

/// One 2025-11-25 HTTP session counted in `mcp.server.session.duration`, having lasted at least
/// its 300 ms.
async fn assert_one_session_timed(c: &reqwest::Client, base: &str) {
    let count = format!("mcp_server_session_duration_seconds_count{SESSION_LABELS}");
    assert_eq!(sample(c, base, &count).await.as_deref(), Some("1"));
    let sum = format!("mcp_server_session_duration_seconds_sum{SESSION_LABELS}");
    let seconds: f64 = sample(c, base, &sum).await.unwrap().parse().unwrap();
    assert!((0.3..60.0).contains(&seconds), "{seconds}");
}

/// The labels of a 2025-11-25 HTTP session's duration.
const SESSION_LABELS: &str =
    r#"{mcp_protocol_version="2025-11-25",network_transport="tcp",otel_scope_name="mcp-runtime"}"#;

/// The value of the `/metrics` line whose series is `name`, if it is there.
async fn sample(c: &reqwest::Client, base: &str, name: &str) -> Option<String> {
    metrics_text(c, base)
        .await
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ').map(str::to_owned))
}

#[tokio::test]
async fn an_http_session_ended_by_delete_is_counted_and_timed() {
    let p = Spawned::catalog(&[("APP_ENV", "prod"), ("CATALOG_STATEFUL", "mcp")]);
    let base = format!("http://{}", p.addr);
    let c = reqwest::Client::new();
    let url = format!("{base}/mcp/mcp/v1");
    let sid = common::mcp_session(&c, &url).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let r = c
        .delete(&url)
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_one_session_timed(&c, &base).await;
    for event in ["opened", "closed"] {
        let name = format!(
            r#"mcp_runtime_sessions_total{{event="{event}",otel_scope_name="mcp-runtime"}}"#
        );
        assert_eq!(
            sample(&c, &base, &name).await.as_deref(),
            Some("1"),
            "{event}"
        );
    }
}

#[tokio::test]
async fn an_http_session_that_expires_is_counted_and_timed_too() {
    let base = stateful_with_short_sessions(None).await;
    let c = reqwest::Client::new();
    let url = format!("{base}/mcp/mcp/v1");
    common::mcp_session(&c, &url).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The next session's making finds the first one expired.
    common::mcp_session(&c, &url).await;
    assert_one_session_timed(&c, &base).await;
    let closed = r#"mcp_runtime_sessions_total{event="closed",otel_scope_name="mcp-runtime"}"#;
    assert_eq!(sample(&c, &base, closed).await.as_deref(), Some("1"));
}

/// The same with sessions in Redis: the session's revision and opening are kept beside it,
/// and the instance that finds it expired (here by its own sweep, no other session being made)
/// counts and times it, once.
#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_session_kept_in_redis_that_expires_is_counted_and_timed_once() {
    let redis = common::Redis::start();
    let base = stateful_with_short_sessions(Some(&redis.url())).await;
    let c = reqwest::Client::new();
    let url = format!("{base}/mcp/mcp/v1");
    common::mcp_session(&c, &url).await;
    let count = format!("mcp_server_session_duration_seconds_count{SESSION_LABELS}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while sample(&c, &base, &count).await.as_deref() != Some("1") {
        assert!(tokio::time::Instant::now() < deadline, "never counted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_one_session_timed(&c, &base).await;
    // The sweeps that follow do not count it again (it left the index when it was counted).
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(sample(&c, &base, &count).await.as_deref(), Some("1"));
    let closed = r#"mcp_runtime_sessions_total{event="closed",otel_scope_name="mcp-runtime"}"#;
    assert_eq!(sample(&c, &base, closed).await.as_deref(), Some("1"));
}

/// The example in production, its `mcp` group stateful with sessions idle for 300 ms at
/// most (kept in the Redis at `redis`, if given), serving on a loopback port: its base URL.
async fn stateful_with_short_sessions(redis: Option<&str>) -> String {
    let mut limits = mcp_runtime::Limits::default();
    limits.session_idle = Duration::from_millis(300);
    let mut b = examples::builder()
        .env(mcp_runtime::Environment::PROD)
        .mcp_stateful("mcp")
        .limits(limits);
    if let Some(url) = redis {
        b = b.redis(url);
    }
    let server = b.build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        server
            .serve_listener(listener, std::future::pending())
            .await
    });
    base
}

/// A free loopback port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Debian's Prometheus, scraping `target` every second; stopped on drop.
struct Prometheus {
    child: std::process::Child,
    api: String,
    _dir: TempDir,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    fn start(target: &str) -> Self {
        let bin = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .expect("prometheus (Debian's `prometheus`; scripts/test.sh installs it)");
        let dir = std::env::temp_dir().join(format!(
            "mcp-prometheus-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: catalog\n    metrics_path: /metrics\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = std::process::Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start prometheus");
        Prometheus {
            child,
            api: format!("http://127.0.0.1:{port}/api/v1/query"),
            _dir: TempDir(dir),
        }
    }

    /// The value of a PromQL query with one result (`None` while it has none).
    async fn value(&self, c: &reqwest::Client, query: &str) -> Option<String> {
        let r: Value = c
            .get(&self.api)
            .query(&[("query", query)])
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        let result = r["data"]["result"].as_array()?;
        if result.len() != 1 {
            return None;
        }
        result[0]["value"][1].as_str().map(str::to_owned)
    }
}

#[tokio::test]
#[ignore = "needs prometheus; scripts/test.sh provides the peers and runs ignored tests"]
async fn prometheus_scrapes_the_example_and_answers_promql() {
    let p = Spawned::catalog(&[("APP_ENV", "prod")]);
    let prom = Prometheus::start(&p.addr);
    let base = format!("http://{}", p.addr);
    let c = reqwest::Client::new();
    let rpc = |method: &str, params: Value| {
        let c = c.clone();
        let url = format!("{base}/rpc/mcp/v1");
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        async move {
            c.post(url)
                .json(&body)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    // The known load: three calls, one error, a cache miss then a hit, and eleven mails from
    // one caller whose burst is ten (the eleventh refused).
    for _ in 0..3 {
        assert_eq!(rpc("Catalog.ping", json!({})).await["result"], "pong, x");
    }
    assert_eq!(
        rpc("Catalog.get", json!({"id": 99})).await["error"]["code"],
        -32404
    );
    let first = rpc("Stats.hits", json!({"key": "a"})).await;
    assert_eq!(rpc("Stats.hits", json!({"key": "a"})).await, first);
    let mut refused = 0;
    for _ in 0..11 {
        let r = rpc(
            "Mail.send",
            json!({"email": "a@example.com", "subject": "Hi", "text": "0123456789"}),
        )
        .await;
        if r["error"]["code"] == -32429 {
            refused += 1;
        }
    }
    assert_eq!(refused, 1);
    let expected = [
        (
            r#"sum(rpc_server_call_duration_seconds_count{job="catalog",rpc_method="Catalog.ping"})"#,
            "3",
        ),
        (
            r#"sum(mcp_runtime_errors_total{job="catalog",error_type="-32404"})"#,
            "1",
        ),
        (
            r#"sum(mcp_runtime_cache_lookups_total{job="catalog",result="hit"})"#,
            "1",
        ),
        (
            r#"sum(mcp_runtime_cache_lookups_total{job="catalog",result="miss"})"#,
            "1",
        ),
        (
            r#"sum(mcp_runtime_rate_limit_refusals_total{job="catalog",face="jsonrpc"})"#,
            "1",
        ),
        (
            r#"sum(rpc_server_call_duration_seconds_count{job="catalog",rpc_method="Mail.send",error_type="-32429"})"#,
            "1",
        ),
        (
            r#"sum(rpc_server_call_duration_seconds_count{job="catalog",rpc_method="Mail.send",error_type=""})"#,
            "10",
        ),
        // The usual question: the error ratio of a method.
        (
            r#"sum(rpc_server_call_duration_seconds_count{job="catalog",rpc_method="Catalog.get",error_type!=""}) / sum(rpc_server_call_duration_seconds_count{job="catalog",rpc_method="Catalog.get"})"#,
            "1",
        ),
    ];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    for (query, want) in expected {
        loop {
            let got = prom.value(&c, query).await;
            if got.as_deref() == Some(want) {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{query}: {got:?}, expected {want}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    dashboard_queries_answer(&prom, &c, &base).await;
}

/// The Grafana dashboard of `docs/grafana/mcp-runtime.json`, against the Prometheus that
/// scraped the example after the known load (and one MCP call): every panel's query is
/// PromQL Prometheus accepts, names only metrics of the guide's table, and answers with data
/// when the metrics it names were exported (those the load recorded).
async fn dashboard_queries_answer(prom: &Prometheus, c: &reqwest::Client, base: &str) {
    let ping = json!({"name": "Catalog.ping", "arguments": {}});
    let pong = common::modern(base, "mcp", 1, "tools/call", ping).await;
    assert_eq!(pong["result"]["structuredContent"]["result"], "pong, x");
    let documented = documented_metrics();
    let dashboard: Value =
        serde_json::from_str(include_str!("../../docs/grafana/mcp-runtime.json")).unwrap();
    let exported = |metrics: &str, name: &str| {
        metrics.lines().any(|l| {
            !l.starts_with('#') && l.starts_with(name) && l[name.len()..].starts_with(['{', ' '])
        })
    };
    let panels = dashboard["panels"].as_array().expect("panels");
    assert!(panels.len() >= 15, "{} panels", panels.len());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let mut with_data = 0;
    for panel in panels {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("expr");
            let names = metric_names(expr);
            assert!(!names.is_empty(), "{expr}");
            for n in &names {
                assert!(
                    documented.iter().any(|d| {
                        n == d
                            || ["_bucket", "_count", "_sum"]
                                .iter()
                                .any(|s| *n == format!("{d}{s}"))
                    }),
                    "{n} (in {:?}) is not a metric of docs/guide/observability.md",
                    panel["title"]
                );
            }
            let query = expr
                .replace("$__rate_interval", "1m")
                .replace("\"$job\"", "\"catalog\"");
            loop {
                let r: Value = c
                    .get(&prom.api)
                    .query(&[("query", query.as_str())])
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                assert_eq!(r["status"], "success", "{query}: {r}");
                let metrics = metrics_text(c, base).await;
                let all_exported = names.iter().all(|n| exported(&metrics, n));
                let answered = r["data"]["result"]
                    .as_array()
                    .is_some_and(|a| !a.is_empty());
                if answered || !all_exported {
                    with_data += usize::from(answered);
                    break;
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{query}: no data, though its metrics are exported"
                );
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    }
    // What the load recorded: requests, errors, latency, calls, the cache and the refusals.
    assert!(with_data >= 10, "{with_data} queries answered with data");
}

/// The metric names a PromQL expression reads (`mcp_…`, `rpc_…`).
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts = (expr[i..].starts_with("mcp_") || expr[i..].starts_with("rpc_"))
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if starts {
            let end = expr[i..]
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .map_or(expr.len(), |e| i + e);
            // A name is followed by its selector; a label (`mcp_method_name=`) is not.
            if expr[end..].starts_with('{') {
                names.push(expr[i..end].to_owned());
            }
            i = end;
        } else {
            i += 1;
        }
    }
    names
}

/// The metrics of the guide's table in Prometheus's names (dots to underscores, `_seconds` for
/// durations, `_total` for counters; a histogram's series add `_bucket`, `_count`, `_sum`).
fn documented_metrics() -> Vec<String> {
    let guide = include_str!("../../docs/guide/observability.md");
    let table = &guide[guide.find("## Metrics").expect("the metrics section")..];
    table
        .lines()
        .skip_while(|l| !l.starts_with("| `"))
        .take_while(|l| l.starts_with("| `"))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let name = cells[1].split('`').nth(1).expect("a metric name");
            let mut prom = name.replace('.', "_");
            if cells[1].contains("(s)") {
                prom.push_str("_seconds");
            }
            if cells[2] == "counter" {
                prom.push_str("_total");
            }
            prom
        })
        .collect()
}
