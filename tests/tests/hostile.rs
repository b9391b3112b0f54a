//! Hostile input, limits, isolation and load: every bad request gets a clear error and the
//! server keeps serving.
//!
//! Hostile inputs are one table ([`cases`]) run against every face: `/rpc`, MCP over HTTP on
//! the handshake era and on 2026-07-28, and MCP over stdio where the case applies. Each is
//! answered within a bound, with an answer no larger than a small multiple of its request.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_runtime::core::EventKind;
use mcp_runtime::prelude::{ApiGroup, rpc_method};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use tests::{example_prod, serve};

const SLOW: ApiGroup = ApiGroup::mcp("slow");

/// Blocks its thread for `ms` milliseconds (a sync method that ignores time limits).
#[rpc_method(name = "Slow.block", groups = [SLOW])]
fn block(ms: u64) -> u64 {
    std::thread::sleep(Duration::from_millis(ms));
    ms
}

/// Blocks its thread for `ms` milliseconds, one call per `key` at a time.
#[rpc_method(name = "Slow.locked", groups = [SLOW], lock(param = "key", ttl = "10s"))]
fn locked(key: u64, ms: u64) -> u64 {
    std::thread::sleep(Duration::from_millis(ms));
    key
}

/// A result of `bytes` bytes (at most 64 MiB).
#[rpc_method(name = "Slow.big", groups = [SLOW])]
fn big(bytes: usize) -> String {
    "x".repeat(bytes.min(64 << 20))
}

async fn post(
    addr: &SocketAddr,
    path: &str,
    ct: &str,
    body: impl Into<reqwest::Body>,
) -> (u16, String) {
    let r = reqwest::Client::new()
        .post(format!("http://{addr}{path}"))
        .header("content-type", ct)
        .header("accept", "application/json, text/event-stream")
        .body(body)
        .send()
        .await
        .expect("request");
    (r.status().as_u16(), r.text().await.unwrap_or_default())
}

/// POSTs a body with `Content-Type: application/json`.
async fn post_json(addr: &SocketAddr, path: &str, body: impl Into<reqwest::Body>) -> (u16, String) {
    post(addr, path, "application/json", body).await
}

async fn still_serving(addr: &SocketAddr) {
    let (s, b) = post_json(
        addr,
        "/rpc/mcp/v1",
        r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#,
    )
    .await;
    assert_eq!(
        (s, b.as_str()),
        (200, r#"{"jsonrpc":"2.0","id":1,"result":"pong, x"}"#)
    );
}

fn json(b: &str) -> Value {
    serde_json::from_str(b).unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_stalled_client_is_cut_off_and_others_are_served() {
    let server = example_prod()
        .header_timeout(Duration::from_millis(300))
        .request_timeout(Some(Duration::from_millis(300)))
        .build()
        .unwrap();
    let addr = serve(server).await;
    // Headers never finished: the connection is closed after the header timeout.
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"POST /rpc/mcp/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    still_serving(&addr).await;
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), slow.read_to_end(&mut buf)).await;
    assert!(
        read.is_ok(),
        "the stalled connection must be closed by the server"
    );
    // A body that stops half way: 408 once the request timeout passes, on both faces.
    for path in ["/rpc/mcp/v1", "/mcp/mcp/v1"] {
        let mut half = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
        );
        half.write_all(head.as_bytes()).await.unwrap();
        let mut buf = vec![0u8; 512];
        let n = tokio::time::timeout(Duration::from_secs(5), half.read(&mut buf))
            .await
            .expect("answered")
            .unwrap();
        let answer = String::from_utf8_lossy(&buf[..n]);
        assert!(answer.starts_with("HTTP/1.1 408"), "{path}: {answer}");
        assert!(
            answer.ends_with("\r\n\r\nRequest Timeout"),
            "{path}: {answer}"
        );
    }
    still_serving(&addr).await;
}

#[tokio::test]
async fn a_method_past_its_time_limit_is_dropped_with_a_clear_error() {
    let server = example_prod()
        .call_timeout_for("Jobs.run", Duration::from_millis(150))
        .build()
        .unwrap();
    let addr = serve(server).await;
    let (_, b) = post_json(
        &addr,
        "/rpc/mcp/v1",
        r#"{"jsonrpc":"2.0","method":"Jobs.run","params":{"steps":5,"step_ms":200},"id":1}"#,
    )
    .await;
    assert_eq!(json(&b)["error"]["code"], -32500);
    assert_eq!(
        json(&b)["error"]["message"],
        "Method 'Jobs.run' timed out after 150 ms"
    );
    let (_, b) = post_json(&addr, "/mcp/mcp/v1", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Jobs.run","arguments":{"steps":5,"step_ms":200}}}"#).await;
    assert_eq!(json(&b)["result"]["isError"], true);
    // A timed-out method releases its lock: the guard is dropped with its future.
    let server = example_prod()
        .call_timeout_for("Orders.pay", Duration::from_millis(100))
        .build()
        .unwrap();
    let addr = serve(server).await;
    let (_, b) = post_json(
        &addr,
        "/rpc/mcp/v1",
        r#"{"jsonrpc":"2.0","method":"Orders.pay","params":{"order_id":9,"hold_ms":1000},"id":1}"#,
    )
    .await;
    assert_eq!(
        json(&b)["error"]["message"],
        "Method 'Orders.pay' timed out after 100 ms"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (_, b) = post_json(
        &addr,
        "/rpc/mcp/v1",
        r#"{"jsonrpc":"2.0","method":"Orders.pay","params":{"order_id":9},"id":2}"#,
    )
    .await;
    assert_eq!(json(&b)["result"]["paid"], true);
}

#[tokio::test]
async fn a_sync_method_past_its_time_limit_answers_and_keeps_its_lock_until_it_returns() {
    let server = example_prod()
        .call_timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let addr = serve(server).await;
    // The test runtime has one thread: the server answers only if the method is off it.
    let (_, b) = post_json(
        &addr,
        "/rpc/slow/v1",
        r#"{"jsonrpc":"2.0","method":"Slow.block","params":{"ms":600},"id":1}"#,
    )
    .await;
    assert_eq!(
        json(&b),
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32500,
            "message":"Method 'Slow.block' timed out after 100 ms",
            "data":{"exception":"Ufo\\RpcError\\RpcRuntimeException"}}})
    );
    let (_, b) = post_json(&addr, "/mcp/slow/v1", r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Slow.block","arguments":{"ms":600}}}"#).await;
    assert_eq!(
        json(&b),
        json!({"jsonrpc":"2.0","id":2,"result":{"isError":true,"content":[{"type":"text",
            "text":r#"{"code":-32500,"message":"Method 'Slow.block' timed out after 100 ms","data":{"exception":"Ufo\\RpcError\\RpcRuntimeException"}}"#}]}})
    );
    still_serving(&addr).await;
    // Within the limit, the result.
    let (_, b) = post_json(
        &addr,
        "/rpc/slow/v1",
        r#"{"jsonrpc":"2.0","method":"Slow.block","params":{"ms":1},"id":3}"#,
    )
    .await;
    assert_eq!(b, r#"{"jsonrpc":"2.0","id":3,"result":1}"#);
    // Cut, the method still runs: its lock is refused to the next call until it returns.
    let call = r#"{"jsonrpc":"2.0","method":"Slow.locked","params":{"key":7,"ms":600},"id":4}"#;
    let (_, b) = post_json(&addr, "/rpc/slow/v1", call).await;
    assert_eq!(
        json(&b)["error"]["message"],
        "Method 'Slow.locked' timed out after 100 ms"
    );
    let (_, b) = post_json(&addr, "/rpc/slow/v1", call).await;
    assert_eq!(
        json(&b)["error"],
        json!({"code":-32400,"message":"Method 'Slow.locked' is locked.",
            "data":{"exception":"Ufo\\RpcError\\RpcLogicException"}})
    );
    tokio::time::sleep(Duration::from_millis(900)).await;
    let fast = r#"{"jsonrpc":"2.0","method":"Slow.locked","params":{"key":7,"ms":1},"id":5}"#;
    let (_, b) = post_json(&addr, "/rpc/slow/v1", fast).await;
    assert_eq!(b, r#"{"jsonrpc":"2.0","id":5,"result":7}"#);
}

#[tokio::test]
async fn a_panicking_listener_is_an_internal_error_and_the_server_survives() {
    let server = example_prod()
        .on(EventKind::Request, |ev| {
            if ev.method() == "Catalog.tree" {
                panic!("listener bug");
            }
            Ok(())
        })
        .on(EventKind::PostResponse, |_| panic!("late listener bug"))
        .build()
        .unwrap();
    let addr = serve(server).await;
    let b = catalog_tree_on_rpc(&addr).await;
    assert_eq!(json(&b)["error"]["code"], -32603);
    assert!(
        !b.contains("listener.rs") && !b.contains("backtrace"),
        "no source paths in prod: {b}"
    );
    // The post_response listener panics after every success: the responses are untouched.
    for _ in 0..3 {
        still_serving(&addr).await;
    }
}

/// `Catalog.tree` (id 1) posted to `/rpc`: the body of its 200 answer.
async fn catalog_tree_on_rpc(addr: &SocketAddr) -> String {
    let (s, b) = post_json(
        addr,
        "/rpc/mcp/v1",
        r#"{"jsonrpc":"2.0","method":"Catalog.tree","id":1}"#,
    )
    .await;
    assert_eq!(s, 200, "{b}");
    b
}

/// `Catalog.tree` answers `error` on `/rpc`, and the same error as a tool error over MCP;
/// the server serves on.
async fn catalog_tree_fails_on_both_faces(addr: &SocketAddr, error: Value) {
    let b = catalog_tree_on_rpc(addr).await;
    assert_eq!(json(&b), json!({"jsonrpc": "2.0", "id": 1, "error": error}));
    let (s, b) = post_json(
        addr,
        "/mcp/mcp/v1",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Catalog.tree","arguments":{}}}"#,
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(
        json(&b),
        json!({"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": error.to_string()}], "isError": true}})
    );
    still_serving(addr).await;
}

/// A listener that panics in `handle` itself, before it returns its future.
struct PanicsBeforeItsFuture;

impl mcp_runtime::core::Listener for PanicsBeforeItsFuture {
    fn handle<'a, 'b: 'a>(
        &'a self,
        event: &'a mut mcp_runtime::core::Event<'b>,
    ) -> futures_util::future::BoxFuture<'a, Result<(), mcp_runtime::RpcError>> {
        if event.method() == "Catalog.tree" {
            panic!("listener bug outside its future");
        }
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn a_listener_panicking_before_its_future_is_an_internal_error_on_both_faces() {
    let server = example_prod()
        .listener(EventKind::PreExecute, 0, PanicsBeforeItsFuture)
        .build()
        .unwrap();
    let addr = serve(server).await;
    catalog_tree_fails_on_both_faces(
        &addr,
        json!({"code": -32603,
            "message": "listener `hostile::PanicsBeforeItsFuture` panicked",
            "data": {"exception": "panic"}}),
    )
    .await;
}

/// A listener that says it answers at once, then waits on `Catalog.tree`.
struct WaitsThoughItSaysNot;

impl mcp_runtime::core::Listener for WaitsThoughItSaysNot {
    fn handle<'a, 'b: 'a>(
        &'a self,
        event: &'a mut mcp_runtime::core::Event<'b>,
    ) -> futures_util::future::BoxFuture<'a, Result<(), mcp_runtime::RpcError>> {
        let waits = event.method() == "Catalog.tree";
        Box::pin(async move {
            if waits {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            Ok(())
        })
    }

    fn answers_at_once(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn a_listener_that_says_it_answers_at_once_and_waits_fails_the_call_not_the_server() {
    let server = example_prod()
        .listener(EventKind::Request, 0, WaitsThoughItSaysNot)
        .build()
        .unwrap();
    let addr = serve(server).await;
    let message = "Method 'Catalog.tree' waited on a listener that says it answers at once";
    catalog_tree_fails_on_both_faces(
        &addr,
        json!({"code": -32603, "message": message,
            "data": {"exception": "Ufo\\RpcError\\RpcInternalException"}}),
    )
    .await;
}

#[tokio::test]
async fn two_thousand_requests_with_64_in_flight_all_succeed() {
    let addr = serve(example_prod().build().unwrap()).await;
    let client = reqwest::Client::new();
    let sem = Arc::new(tokio::sync::Semaphore::new(64));
    let mut tasks = Vec::new();
    for i in 0..2000u32 {
        let permit = sem.clone().acquire_owned().await.unwrap();
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let _p = permit;
            let (path, body) = if i % 2 == 0 {
                ("/rpc/mcp/v1", json!({"jsonrpc":"2.0","method":"Catalog.get","params":{"id": 1 + i % 6},"id":i}))
            } else {
                ("/mcp/mcp/v1", json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"Catalog.search","arguments":{"query":"mug"}}}))
            };
            let r = client.post(format!("http://{addr}{path}")).json(&body).send().await.expect("sent");
            assert_eq!(r.status(), 200);
            let v: Value = r.json().await.expect("json");
            assert_eq!(v["id"], i);
            assert!(v.get("error").is_none() && v["result"].get("isError") != Some(&json!(true)), "{v}");
        }));
    }
    for t in tasks {
        t.await.expect("no failed request");
    }
}

#[tokio::test]
async fn graceful_shutdown_finishes_in_flight_calls_and_their_post_response_work() {
    let ran = Arc::new(AtomicUsize::new(0));
    let seen = ran.clone();
    let server = example_prod()
        .on(EventKind::PostResponse, move |ev| {
            if ev.method() == "Orders.pay" {
                seen.fetch_add(1, Ordering::SeqCst);
            }
            Ok(())
        })
        .shutdown_grace(Duration::from_secs(5))
        .build()
        .unwrap();
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        server
            .serve_listener(l, async move {
                let _ = stopped.await;
            })
            .await
    });
    let call = tokio::spawn(async move {
        post_json(&addr, "/rpc/mcp/v1", r#"{"jsonrpc":"2.0","method":"Orders.pay","params":{"order_id":5,"hold_ms":400},"id":1}"#).await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.send(()).unwrap();
    let (status, body) = call.await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(json(&body)["result"], json!({"order_id":5,"paid":true}));
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("shutdown ends")
        .unwrap()
        .unwrap();
    assert_eq!(
        ran.load(Ordering::SeqCst),
        1,
        "post_response ran before shutdown completed"
    );
    // New connections are refused once it stopped.
    assert!(tokio::net::TcpStream::connect(&addr).await.is_err());
}

/// The faces a hostile case runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Face {
    Rpc,
    /// MCP, handshake era (stateless, 2025-03-26 when no header names one).
    Mcp,
    /// MCP 2026-07-28.
    Modern,
    Stdio,
}

const FACES: [Face; 4] = [Face::Rpc, Face::Mcp, Face::Modern, Face::Stdio];

/// What a face answers: the HTTP status (stdio: 200) and the body (stdio: the first line).
#[derive(Debug)]
struct Answer {
    status: u16,
    body: String,
}

impl Answer {
    fn code(&self) -> Value {
        json(&self.body)["error"]["code"].clone()
    }
    fn message(&self) -> String {
        json(&self.body)["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// A case's body on a face (`None`: the case does not apply there).
type BodyOf = Box<dyn Fn(Face) -> Option<Vec<u8>>>;
/// A case's check of an answer (panics when it is wrong).
type Check = Box<dyn Fn(Face, &Answer)>;

/// One hostile input: its body per face, extra headers, and the check of the answer.
struct Case {
    name: &'static str,
    body: BodyOf,
    headers: Vec<(&'static str, String)>,
    check: Check,
}

/// A call of `Catalog.ping` (`tools/call` on MCP) with `members` spliced into the envelope
/// and `args` as its arguments, as `face` expects it.
fn ping(face: Face, members: &str, args: &str, meta: &str) -> Vec<u8> {
    match face {
        Face::Rpc => format!(
            r#"{{"jsonrpc":"2.0","method":"Catalog.ping","params":{args}{members},"id":1}}"#
        ),
        Face::Mcp | Face::Stdio => {
            let meta = match meta.strip_prefix(',') {
                Some(m) => format!(r#","_meta":{{{m}}}"#),
                None => String::new(),
            };
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"Catalog.ping","arguments":{args}{meta}}}{members}}}"#
            )
        }
        Face::Modern => format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"Catalog.ping","arguments":{args},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}{meta}}}}}{members}}}"#
        ),
    }
    .into_bytes()
}

/// An MCP request of `method` with `params` (an object's members, without braces), as `face`
/// expects it; `None` on `/rpc` (resources and prompts are MCP concepts).
fn mcp_request(face: Face, method: &str, params: &str) -> Option<Vec<u8>> {
    let meta = match face {
        Face::Rpc => return None,
        Face::Modern => {
            r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"#
        }
        Face::Mcp | Face::Stdio => "",
    };
    Some(
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{meta}{params}}}}}"#)
            .into_bytes(),
    )
}

/// The routing headers of a modern `method` request naming `name`.
fn routed(method: &'static str, name: &str) -> Vec<(&'static str, String)> {
    vec![("mcp-method", method.into()), ("mcp-name", name.into())]
}

/// A check that the answer is exactly this status and plain-text body.
fn answers(status: u16, body: &'static str) -> Check {
    Box::new(move |_, a| assert_eq!((a.status, a.body.as_str()), (status, body)))
}

/// A plain `Catalog.ping` on the HTTP faces (for the cases about headers).
fn http_ping() -> BodyOf {
    Box::new(|f| (f != Face::Stdio).then(|| ping(f, "", "{}", "")))
}

/// The status of an invalid message on `face`: JSON-RPC answers 200 (the reference), MCP over
/// HTTP 400; stdio has no status (its answers count as 200).
/// The check of a request whose params the strict reader refuses: -32602 naming `text`,
/// answered with the request's id and the face's status for an invalid request.
fn invalid_params_with_id(text: &'static str) -> Check {
    Box::new(move |f, a| {
        assert_eq!(a.code(), -32602, "{}", a.body);
        assert!(a.message().contains(text), "{}", a.body);
        assert_eq!(json(&a.body)["id"], 1);
        assert_eq!(a.status, invalid_status(f));
    })
}

fn invalid_status(face: Face) -> u16 {
    if matches!(face, Face::Rpc | Face::Stdio) {
        200
    } else {
        400
    }
}

fn cases() -> Vec<Case> {
    let unknown: String = (0..200_000).map(|i| format!(",\"k{i}\":0")).collect();
    let deep_args = format!("{{\"who\":{}1{}}}", "[".repeat(5000), "]".repeat(5000));
    let deep_meta = format!(",\"k\":{}1{}", "[".repeat(5000), "]".repeat(5000));
    let unknown_meta: String = (0..200_000).map(|i| format!(",\"k{i}\":{{}}")).collect();
    let big_token = format!(",\"progressToken\":\"{}\"", "t".repeat(1 << 20));
    let many_params: String = (0..5000).map(|i| format!("\"p{i}\":0,")).collect();
    let langs: String = (0..4000).map(|i| format!("x{i};q=0.5,")).collect();
    // Well formed (a first subtag is letters only): a malformed carrier would count as absent.
    let carried: String = (0..4000).map(|i| format!("x-{i};q=0.5,")).collect();
    let long_uri = format!("catalog://nothing/{}", "9".repeat(1 << 20));
    let long_name = "n".repeat(1 << 20);
    let long_skill = format!("skill://catalog/{}/SKILL.md", "s".repeat(1 << 20));
    let many_uris: String = (0..200_000).map(|i| format!("\"x://{i}\",")).collect();
    let many_args: String = (0..200_000).map(|i| format!("\"k{i}\":\"v\",")).collect();
    vec![
        Case {
            name: "a 1 MB resource URI: refused, not echoed",
            body: Box::new(move |f| {
                mcp_request(f, "resources/read", &format!(r#""uri":"{long_uri}""#))
            }),
            headers: routed("resources/read", "catalog://products/1"),
            check: Box::new(|f, a| {
                // 2026-07-28 first finds the Mcp-Name header does not mirror it.
                let code = if f == Face::Modern { -32020 } else { -32602 };
                assert_eq!(a.code(), code, "{}", a.body);
                assert!(a.body.len() < 400, "not echoed: {} bytes", a.body.len());
            }),
        },
        Case {
            name: "skills/get of a 1 MB URI: refused, not echoed",
            body: Box::new(move |f| {
                mcp_request(f, "skills/get", &format!(r#""uri":"{long_skill}""#))
            }),
            headers: vec![("mcp-method", "skills/get".into())],
            check: Box::new(|_, a| {
                assert_eq!(a.code(), -32602, "{}", a.body);
                assert!(a.body.len() < 400, "not echoed: {} bytes", a.body.len());
            }),
        },
        Case {
            name: "a skill file's URI climbing out of the skill: not found",
            body: Box::new(|f| {
                let uri = "skill://catalog/shopping/../../../etc/passwd";
                mcp_request(f, "resources/read", &format!(r#""uri":"{uri}""#))
            }),
            headers: routed(
                "resources/read",
                "skill://catalog/shopping/../../../etc/passwd",
            ),
            check: Box::new(|f, a| {
                let code = if f == Face::Modern { -32602 } else { -32002 };
                assert_eq!(a.code(), code, "{}", a.body);
                assert!(!a.body.contains("root:"), "{}", a.body);
            }),
        },
        Case {
            name: "a 1 MB tool or method name: unknown, echoed cut to 128 characters",
            body: Box::new({
                let long = long_name.clone();
                move |f| {
                    Some(match f {
                        Face::Rpc => {
                            format!(r#"{{"jsonrpc":"2.0","method":"{long}","id":1}}"#).into_bytes()
                        }
                        _ => mcp_request(f, "tools/call", &format!(r#""name":"{long}""#))?,
                    })
                }
            }),
            headers: routed("tools/call", "Catalog.ping"),
            check: Box::new(|f, a| {
                let code = match f {
                    Face::Rpc => -32601,
                    // 2026-07-28 first finds the Mcp-Name header does not mirror it.
                    Face::Modern => -32020,
                    _ => -32602,
                };
                assert_eq!(a.code(), code, "{}", a.body);
                assert!(
                    a.body.len() < 600,
                    "not echoed whole: {} bytes",
                    a.body.len()
                );
                if matches!(f, Face::Mcp | Face::Stdio) {
                    assert_eq!(a.message(), format!("Unknown tool: {}…", "n".repeat(128)));
                }
            }),
        },
        Case {
            name: "a completion of a 1 MB resource template URI: unknown, echoed cut",
            body: Box::new({
                let long = long_name.clone();
                move |f| {
                    mcp_request(
                        f,
                        "completion/complete",
                        &format!(
                            r#""ref":{{"type":"ref/resource","uri":"{long}"}},"argument":{{"name":"id","value":"1"}}"#
                        ),
                    )
                }
            }),
            headers: vec![("mcp-method", "completion/complete".into())],
            check: Box::new(|_, a| {
                assert_eq!(a.code(), -32602, "{}", a.body);
                assert!(
                    a.body.len() < 600,
                    "not echoed whole: {} bytes",
                    a.body.len()
                );
            }),
        },
        Case {
            name: "a listen stream of 20 URIs of 40 KB: refused, not echoed",
            body: Box::new(move |f| {
                let big = format!("\"x://{}\"", "u".repeat(40 * 1024));
                let list = vec![big; 20].join(",");
                let params = format!(r#""notifications":{{"resourceSubscriptions":[{list}]}}"#);
                mcp_request(f, "subscriptions/listen", &params)
            }),
            headers: vec![("mcp-method", "subscriptions/listen".into())],
            check: Box::new(|f, a| {
                let code = if f == Face::Modern { -32602 } else { -32601 };
                assert_eq!(a.code(), code, "{}", a.body);
                if f == Face::Modern {
                    assert_eq!(a.message(), "a subscribed URI is longer than 8192 bytes");
                }
                assert!(a.body.len() < 400, "{} bytes", a.body.len());
            }),
        },
        Case {
            name: "a listen stream watching 200 000 resources: refused at once",
            body: Box::new(move |f| {
                let params = format!(
                    r#""notifications":{{"resourceSubscriptions":[{many_uris}"x://end"]}}"#
                );
                mcp_request(f, "subscriptions/listen", &params)
            }),
            headers: vec![("mcp-method", "subscriptions/listen".into())],
            check: Box::new(|f, a| {
                // Only 2026-07-28 has the method.
                let code = if f == Face::Modern { -32602 } else { -32601 };
                assert_eq!(a.code(), code, "{}", a.body);
                assert!(a.body.len() < 400, "{} bytes", a.body.len());
            }),
        },
        Case {
            name: "a prompt with 200 000 arguments: invalid, the violations capped",
            body: Box::new({
                let many_args = many_args.clone();
                move |f| {
                    let params =
                        format!(r#""name":"recommend","arguments":{{{many_args}"need":"tea"}}"#);
                    mcp_request(f, "prompts/get", &params)
                }
            }),
            headers: routed("prompts/get", "recommend"),
            check: Box::new(|_, a| {
                assert_eq!(a.code(), -32602, "{}", a.body);
                assert!(a.body.len() < 8 * 1024, "{} bytes", a.body.len());
            }),
        },
        Case {
            name: "a completion with 200 000 filled arguments: answered",
            body: Box::new(move |f| {
                let params = format!(
                    r#""ref":{{"type":"ref/prompt","name":"recommend"}},"argument":{{"name":"need","value":"a g"}},"context":{{"arguments":{{{many_args}"count":"1"}}}}"#
                );
                mcp_request(f, "completion/complete", &params)
            }),
            headers: vec![("mcp-method", "completion/complete".into())],
            check: Box::new(|_, a| {
                assert_eq!(a.status, 200, "{}", a.body);
                assert_eq!(
                    json(&a.body)["result"]["completion"]["values"],
                    serde_json::json!(["a gift"])
                );
            }),
        },
        Case {
            name: "200 000 unknown members: skipped, linear, answered",
            body: Box::new(move |f| Some(ping(f, &unknown, "{}", ""))),
            headers: vec![],
            check: Box::new(|_, a| {
                assert_eq!(a.status, 200);
                assert!(a.body.contains("pong, x"), "{}", a.body);
            }),
        },
        Case {
            name: "200 000 nested arrays: parse error",
            body: Box::new(|_| Some("[".repeat(200_000).into_bytes())),
            headers: vec![],
            check: Box::new(|f, a| {
                assert_eq!(a.code(), -32700);
                let status = match f {
                    Face::Rpc => 500,
                    Face::Stdio => 200,
                    _ => 400,
                };
                assert_eq!(a.status, status);
            }),
        },
        Case {
            name: "params nested 5 000 deep: invalid params, with the id",
            body: Box::new(move |f| Some(ping(f, "", &deep_args, ""))),
            headers: vec![],
            check: invalid_params_with_id("nested deeper than 64 levels"),
        },
        Case {
            name: "a repeated key inside params._meta: invalid params, with the id",
            // `_meta` is read apart from the other params on MCP; /rpc has no `_meta`.
            body: Box::new(|f| {
                (f != Face::Rpc).then(|| ping(f, "", r#"{"who":"x"}"#, r#","k":{"a":1},"k":2"#))
            }),
            headers: vec![],
            check: invalid_params_with_id("duplicate key `k`"),
        },
        Case {
            name: "params._meta nested 5 000 deep: invalid params, with the id",
            body: Box::new(move |f| {
                (f != Face::Rpc).then(|| ping(f, "", r#"{"who":"x"}"#, &deep_meta))
            }),
            headers: vec![],
            check: invalid_params_with_id("nested deeper than 64 levels"),
        },
        Case {
            name: "200 000 unknown members in params._meta: skipped, linear, answered",
            body: Box::new(move |f| {
                (f != Face::Rpc).then(|| ping(f, "", r#"{"who":"x"}"#, &unknown_meta))
            }),
            headers: vec![],
            check: Box::new(|_, a| {
                assert_eq!(a.status, 200, "{}", a.body);
                assert!(a.body.contains("pong, x"), "{}", a.body);
            }),
        },
        Case {
            name: "invalid UTF-8: parse error",
            body: Box::new(|f| {
                let mut b = ping(f, "", r#"{"who":"@@"}"#, "");
                let at = b.windows(2).position(|w| w == b"@@").unwrap();
                b[at..at + 2].copy_from_slice(&[0xff, 0xfe]);
                Some(b)
            }),
            headers: vec![],
            check: Box::new(|_, a| assert_eq!(a.code(), -32700)),
        },
        Case {
            name: "invalid UTF-8 in a member that is skipped: parse error",
            body: Box::new(|f| {
                let mut b = ping(f, r#","extra":"@@""#, "{}", "");
                let at = b.windows(2).position(|w| w == b"@@").unwrap();
                b[at..at + 2].copy_from_slice(&[0xc3, 0x28]);
                Some(b)
            }),
            headers: vec![],
            check: Box::new(|_, a| assert_eq!(a.code(), -32700)),
        },
        Case {
            name: "a repeated envelope member: invalid request",
            body: Box::new(|f| {
                let b = String::from_utf8(ping(f, "", "{}", "")).unwrap();
                Some(b.replacen("\"id\":1", "\"id\":1,\"id\":2", 1).into_bytes())
            }),
            headers: vec![],
            check: Box::new(|f, a| {
                assert_eq!(a.code(), -32600);
                assert_eq!(a.message(), "Invalid Request: duplicate member `id`");
                assert_eq!(a.status, invalid_status(f));
            }),
        },
        Case {
            name: "a repeated params key: invalid params, with the id",
            body: Box::new(|f| Some(ping(f, "", r#"{"who":"a","who":"b"}"#, ""))),
            headers: vec![],
            check: invalid_params_with_id("duplicate key `who`"),
        },
        Case {
            name: "a batch of 2 000 items: refused whole, not amplified",
            body: Box::new(|f| {
                let item = match f {
                    Face::Rpc => r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#,
                    _ => r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                };
                Some(format!("[{}]", vec![item; 2000].join(",")).into_bytes())
            }),
            headers: vec![],
            check: Box::new(|f, a| {
                assert_eq!(a.code(), -32600);
                let expected = if f == Face::Stdio {
                    "Batches are not supported on stdio"
                } else {
                    "Invalid Request: batch too large (2000 items, at most 100)"
                };
                assert_eq!(a.message(), expected);
                assert!(a.body.len() < 200, "{}", a.body);
            }),
        },
        Case {
            name: "a 1 MB progress token: invalid params",
            body: Box::new(move |f| (f != Face::Rpc).then(|| ping(f, "", "{}", &big_token))),
            headers: vec![("accept", "application/json, text/event-stream".into())],
            check: Box::new(|_, a| {
                assert_eq!(a.code(), -32602);
                assert!(a.message().contains("progressToken"), "{}", a.body);
                assert!(a.body.len() < 400, "not echoed: {} bytes", a.body.len());
            }),
        },
        Case {
            name: "an object as progress token: invalid params",
            body: Box::new(|f| {
                (f != Face::Rpc).then(|| ping(f, "", "{}", r#","progressToken":{"a":[1,2]}"#))
            }),
            headers: vec![("accept", "application/json, text/event-stream".into())],
            check: Box::new(|_, a| assert_eq!(a.code(), -32602)),
        },
        Case {
            name: "5 000 unknown params: the violations reported are capped",
            body: Box::new(move |f| {
                Some(ping(f, "", &format!("{{{many_params}\"who\":\"x\"}}"), ""))
            }),
            headers: vec![],
            check: Box::new(|_, a| {
                assert_eq!(a.code(), -32602, "{}", a.body);
                assert!(a.body.len() < 8 * 1024, "{} bytes", a.body.len());
            }),
        },
        Case {
            name: "a body over the limit: 413 (stdio: invalid request)",
            body: Box::new(|f| {
                Some(ping(
                    f,
                    "",
                    &format!("{{\"who\":\"{}\"}}", "x".repeat(5 << 20)),
                    "",
                ))
            }),
            headers: vec![],
            check: Box::new(|f, a| {
                if f == Face::Stdio {
                    assert_eq!(a.code(), -32600);
                    assert_eq!(
                        a.message(),
                        "Invalid Request: message larger than 4194304 bytes"
                    );
                } else {
                    assert_eq!(a.status, 413);
                }
            }),
        },
        Case {
            name: "no Content-Type (a cross-site POST without preflight): 415",
            body: http_ping(),
            headers: vec![("content-type", String::new())],
            check: answers(415, "Content-Type must be application/json"),
        },
        Case {
            name: "a foreign Origin: 403",
            body: http_ping(),
            headers: vec![("origin", "http://evil.example".into())],
            check: answers(403, "Invalid Origin header"),
        },
        Case {
            name: "a rebinding Host: 421",
            body: http_ping(),
            headers: vec![("host", "evil.example".into())],
            check: answers(421, "Invalid Host header"),
        },
        Case {
            name: "a Host with a quote (header injection): 421",
            body: http_ping(),
            headers: vec![("host", "localhost\", x=\"y".into())],
            check: Box::new(|_, a| assert_eq!(a.status, 421)),
        },
        Case {
            name: "4 000 Accept-Language ranges (44 KB): answered",
            body: http_ping(),
            headers: vec![("accept-language", langs)],
            check: Box::new(|_, a| {
                assert_eq!(a.status, 200);
                assert!(a.body.contains("pong, x"), "{}", a.body);
            }),
        },
        Case {
            name: "a language carrier of 4 000 ranges (44 KB): answered in the default language, named",
            body: Box::new(move |f| {
                let meta = format!(r#","io.modelcontextprotocol/acceptLanguage":"{carried}""#);
                (f != Face::Rpc).then(|| ping(f, "", "{}", &meta))
            }),
            headers: vec![],
            check: Box::new(|_, a| {
                assert_eq!(a.status, 200);
                assert!(
                    a.body
                        .contains(r#""io.modelcontextprotocol/contentLanguage":"en""#),
                    "{}",
                    a.body
                );
            }),
        },
        Case {
            name: "a language carrier the Accept-Language header contradicts: 400, -32020",
            body: Box::new(|f| {
                let meta = r#","io.modelcontextprotocol/acceptLanguage":"uk""#;
                matches!(f, Face::Mcp | Face::Modern).then(|| ping(f, "", "{}", meta))
            }),
            headers: vec![("accept-language", "en".into())],
            check: Box::new(|_, a| {
                assert_eq!(
                    (a.status, a.code()),
                    (400, serde_json::json!(-32020)),
                    "{}",
                    a.body
                );
            }),
        },
        Case {
            name: "headers over 64 KiB: 431",
            body: http_ping(),
            headers: vec![("x-padding", "p".repeat(80 * 1024))],
            check: Box::new(|_, a| assert_eq!(a.status, 431)),
        },
    ]
}

/// Sends one case's body to an HTTP face.
async fn send_http(addr: &SocketAddr, face: Face, case: &Case, body: Vec<u8>) -> Answer {
    let path = if face == Face::Rpc {
        "/rpc/mcp/v1"
    } else {
        "/mcp/mcp/v1"
    };
    // A server refusing early (headers or body too large) answers and closes while the body
    // is still being written: the client may then fail to write, and never read the answer.
    // Sent again in that case, as a client would.
    let mut attempts = 0;
    let r = loop {
        attempts += 1;
        match request(addr, path, face, case)
            .body(body.clone())
            .send()
            .await
        {
            Ok(r) => break r,
            Err(e) if attempts < 5 && format!("{e:?}").contains("BodyWrite") => continue,
            Err(e) => panic!("answered: {e:?}"),
        }
    };
    Answer {
        status: r.status().as_u16(),
        body: r.text().await.unwrap_or_default(),
    }
}

/// The request of one case to an HTTP face, without its body.
fn request(addr: &SocketAddr, path: &str, face: Face, case: &Case) -> reqwest::RequestBuilder {
    let mut req = reqwest::Client::new()
        .post(format!("http://{addr}{path}"))
        .header("accept", "application/json, text/event-stream");
    let mut content_type = Some("application/json".to_owned());
    for (k, v) in &case.headers {
        if *k == "content-type" {
            content_type = (!v.is_empty()).then(|| v.clone());
        } else if *k == "host" {
            req = req.header(reqwest::header::HOST, v.as_str());
        } else {
            req = req.header(*k, v.as_str());
        }
    }
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    if face == Face::Modern {
        req = req.header("mcp-protocol-version", "2026-07-28");
        // A case about another method names it (and its name) itself.
        if !case.headers.iter().any(|(k, _)| *k == "mcp-method") {
            req = req
                .header("mcp-method", "tools/call")
                .header("mcp-name", "Catalog.ping");
        }
    }
    req
}

/// Runs one line through MCP over stdio; the first line answered.
async fn send_stdio(server: &mcp_runtime::Server, mut body: Vec<u8>) -> Answer {
    let ep = server.mcp_endpoint("mcp", 1).unwrap().clone();
    body.push(b'\n');
    let (write, mut read) = tokio::io::duplex(1 << 16);
    let serving = tokio::spawn(mcp_runtime::test_util::serve_io(
        ep,
        std::io::Cursor::new(body),
        write,
    ));
    let mut out = Vec::new();
    read.read_to_end(&mut out).await.unwrap();
    serving.await.unwrap().unwrap();
    let line = out.split(|b| *b == b'\n').next().unwrap_or_default();
    Answer {
        status: 200,
        body: String::from_utf8_lossy(line).into_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_case_on_every_face() {
    let server = example_prod().build().unwrap();
    let addr = serve(server.clone()).await;
    let bound = Duration::from_secs(30);
    for case in cases() {
        for face in FACES {
            let Some(body) = (case.body)(face) else {
                continue;
            };
            let answer = if face == Face::Stdio {
                tokio::time::timeout(bound, send_stdio(&server, body)).await
            } else {
                tokio::time::timeout(bound, send_http(&addr, face, &case, body)).await
            };
            let answer = answer.unwrap_or_else(|_| panic!("{}: {face:?}: no answer", case.name));
            let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                (case.check)(face, &answer)
            }));
            if checked.is_err() {
                let shown: String = answer.body.chars().take(300).collect();
                panic!(
                    "{} on {face:?}: answered {} {shown}",
                    case.name, answer.status
                );
            }
        }
        still_serving(&addr).await;
    }
}

/// A `Jobs.run` call with a progress token, answered on an SSE stream.
async fn sse_job(client: &reqwest::Client, addr: &SocketAddr) -> reqwest::Response {
    client
        .post(format!("http://{addr}/mcp/mcp/v1"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Jobs.run","arguments":{"steps":50,"step_ms":100},"_meta":{"progressToken":"p"}}}"#)
        .send()
        .await
        .expect("answered")
}

#[tokio::test]
async fn detached_calls_are_bounded_and_a_gone_client_cancels_its_call() {
    let mut limits = mcp_runtime::Limits::default();
    limits.detached_calls = 1;
    let addr = serve(example_prod().limits(limits).build().unwrap()).await;
    let client = reqwest::Client::new();
    let first = sse_job(&client, &addr).await;
    assert_eq!(first.status(), 200);
    let second = sse_job(&client, &addr).await;
    assert_eq!(second.status(), 503);
    assert_eq!(
        json(&second.text().await.unwrap())["error"]["message"],
        "Server busy: too many calls in progress, try again later"
    );
    // The client goes: its call is cancelled and its place freed (not after 5 s of work).
    drop(first);
    let mut freed = false;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let again = sse_job(&reqwest::Client::new(), &addr).await;
        if again.status() == 200 {
            freed = true;
            break;
        }
    }
    assert!(freed, "the gone client's call still holds its place");
    still_serving(&addr).await;
}

#[tokio::test]
async fn a_call_on_an_sse_stream_is_cut_at_the_sse_limit() {
    let mut limits = mcp_runtime::Limits::default();
    limits.sse_timeout = Duration::from_millis(300);
    let addr = serve(example_prod().limits(limits).build().unwrap()).await;
    // 50 steps of 100 ms: far past the limit.
    let r = sse_job(&reqwest::Client::new(), &addr).await;
    assert_eq!(r.status(), 200);
    let body = tokio::time::timeout(Duration::from_secs(10), r.text())
        .await
        .expect("the stream ends at the limit")
        .unwrap();
    let last = body
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or_default();
    assert_eq!(
        json(last),
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,
            "message":"The call ran past the SSE limit of 300 ms"}})
    );
    // The place it held is free again.
    assert_eq!(sse_job(&reqwest::Client::new(), &addr).await.status(), 200);
}

#[tokio::test]
async fn allowed_origins_get_cors_and_a_preflight() {
    let addr = serve(example_prod().build().unwrap()).await;
    let client = reqwest::Client::new();
    for path in ["/rpc/mcp/v1", "/mcp/mcp/v1"] {
        let r = client
            .request(reqwest::Method::OPTIONS, format!("http://{addr}{path}"))
            .header("origin", "http://localhost:3000")
            .header("access-control-request-method", "POST")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 204, "{path}");
        let h = r.headers();
        assert_eq!(h["access-control-allow-origin"], "http://localhost:3000");
        assert!(
            h["access-control-allow-headers"]
                .to_str()
                .unwrap()
                .contains("Mcp-Session-Id")
        );
        let r = client
            .request(reqwest::Method::OPTIONS, format!("http://{addr}{path}"))
            .header("origin", "http://evil.example")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{path}");
    }
    let r = client
        .post(format!("http://{addr}/rpc/mcp/v1"))
        .header("origin", "http://localhost:3000")
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "http://localhost:3000"
    );
}

#[tokio::test]
async fn stdio_serves_a_protected_group_only_when_allowed() {
    let server = example_prod().build().unwrap();
    let e = server.serve_stdio("admin", 1).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
    assert_eq!(
        e.to_string(),
        "MCP group `admin` is protected and stdio has no token: allow it with ServerBuilder::stdio_serves_protected(true) (the CLI: --allow-protected)"
    );
}

#[tokio::test]
async fn the_violations_bound_of_the_limits_holds_on_both_faces() {
    let mut limits = mcp_runtime::Limits::default();
    limits.violations = 2;
    let addr = serve(example_prod().limits(limits).build().unwrap()).await;
    let args = r#"{"who":"x","a":1,"b":2,"c":3,"d":4}"#;
    let (_, b) = post_json(
        &addr,
        "/rpc/mcp/v1",
        format!(r#"{{"jsonrpc":"2.0","method":"Catalog.ping","params":{args},"id":1}}"#),
    )
    .await;
    let data = json(&b)["error"]["data"].clone();
    assert_eq!(data.as_object().map(|d| d.len()), Some(3), "{b}");
    assert_eq!(data["..."], json!(["... and 2 more"]), "{b}");
    let (_, b) = post_json(
        &addr,
        "/mcp/mcp/v1",
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"Catalog.ping","arguments":{args}}}}}"#),
    )
    .await;
    let errors = json(&b)["error"]["data"]["validation_errors"].clone();
    assert_eq!(errors.as_array().map(Vec::len), Some(3), "{b}");
    assert_eq!(errors[2]["message"], "... and 2 more", "{b}");
}

#[tokio::test]
async fn a_client_that_stops_reading_is_cut_off_after_the_write_timeout() {
    let mut limits = mcp_runtime::Limits::default();
    limits.write_timeout = Some(Duration::from_millis(300));
    let addr = serve(example_prod().limits(limits).build().unwrap()).await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    // 16 MiB: more than the loopback socket buffers of both sides can hold.
    let body = r#"{"jsonrpc":"2.0","method":"Slow.big","params":{"bytes":16777216},"id":1}"#;
    let request = format!(
        "POST /rpc/slow/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    // Once the answer starts (however long the result took to build), the client stops
    // reading: the server's writes block, then time out.
    let mut buf = vec![0u8; 1 << 16];
    let mut got = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut buf))
        .await
        .expect("the answer starts")
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the server closed the connection");
    assert!(got < 16 << 20, "the answer was cut short: {got} bytes");
    still_serving(&addr).await;
}
