//! Hostile input, limits, isolation and load: every bad request gets a clear error and the
//! server keeps serving, on `/rpc` and `/mcp`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_runtime::core::EventKind;
use mcp_runtime::prelude::{ApiGroup, rpc_method};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod support;
use support::{example_prod, serve};

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
async fn deep_nesting_is_a_parse_error_on_both_faces() {
    let addr = serve(example_prod().build().unwrap()).await;
    let deep = "[".repeat(200_000);
    let (s, b) = post_json(&addr, "/rpc/mcp/v1", deep.clone()).await;
    assert_eq!(s, 500);
    assert_eq!(json(&b)["error"]["code"], -32700);
    // Deep params inside a well-formed envelope: refused when the params are decoded.
    let nested_params = format!(
        r#"{{"jsonrpc":"2.0","method":"Catalog.ping","params":{}1{},"id":1}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let (s, b) = post_json(&addr, "/rpc/mcp/v1", nested_params).await;
    assert_eq!((s, json(&b)["error"]["code"].clone()), (200, json!(-32602)));
    assert_eq!(
        json(&b)["error"]["message"],
        "Invalid params: recursion limit exceeded"
    );
    let (s, b) = post_json(&addr, "/mcp/mcp/v1", deep).await;
    assert_eq!(
        (s, b.as_str()),
        (
            400,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
        )
    );
    still_serving(&addr).await;
}

#[tokio::test]
async fn invalid_utf8_is_a_parse_error() {
    let addr = serve(example_prod().build().unwrap()).await;
    let body: Vec<u8> = b"{\"jsonrpc\":\"2.0\",\"method\":\"Catalog.ping\",\"params\":{\"who\":\"\xff\xfe\"},\"id\":1}".to_vec();
    let (s, b) = post_json(&addr, "/rpc/mcp/v1", body.clone()).await;
    assert_eq!((s, json(&b)["error"]["code"].clone()), (500, json!(-32700)));
    let (s, b) = post_json(&addr, "/mcp/mcp/v1", body).await;
    assert_eq!((s, json(&b)["error"]["code"].clone()), (400, json!(-32700)));
    still_serving(&addr).await;
}

#[tokio::test]
async fn wrong_content_type_and_oversized_bodies() {
    let addr = serve(example_prod().body_limit(64 * 1024).build().unwrap()).await;
    for path in ["/rpc/mcp/v1", "/mcp/mcp/v1"] {
        let (s, _) = post(
            &addr,
            path,
            "text/plain",
            r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#,
        )
        .await;
        assert_eq!(s, 415, "{path}");
        let big = format!(
            r#"{{"jsonrpc":"2.0","method":"Catalog.ping","params":{{"who":"{}"}},"id":1}}"#,
            "x".repeat(100 * 1024)
        );
        let (s, _) = post_json(&addr, path, big).await;
        assert_eq!(s, 413, "{path}");
    }
    still_serving(&addr).await;
}

#[tokio::test]
async fn duplicate_keys_and_huge_keys_are_invalid_params() {
    let addr = serve(example_prod().build().unwrap()).await;
    let (_, b) = post_json(
        &addr,
        "/rpc/mcp/v1",
        r#"{"jsonrpc":"2.0","method":"Catalog.get","params":{"id":1,"id":2},"id":7}"#,
    )
    .await;
    assert_eq!(
        json(&b),
        json!({"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: duplicate key `id`",
            "data":{"exception":"Ufo\\RpcError\\RpcBadParamException"}}})
    );
    let (s, b) = post_json(&addr, "/mcp/mcp/v1", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":1,"id":2}}}"#).await;
    assert_eq!(s, 400);
    assert_eq!(json(&b)["error"]["code"], -32602);
    let key = "k".repeat(100_000);
    let body =
        format!(r#"{{"jsonrpc":"2.0","method":"Catalog.ping","params":{{"{key}":1}},"id":1}}"#);
    let (_, b) = post_json(&addr, "/rpc/mcp/v1", body).await;
    assert_eq!(json(&b)["error"]["code"], -32602);
    still_serving(&addr).await;
}

#[tokio::test]
async fn huge_batches_are_refused_whole() {
    let addr = serve(example_prod().max_batch(100).build().unwrap()).await;
    let items: Vec<Value> = (0..101)
        .map(|i| json!({"jsonrpc":"2.0","method":"Catalog.ping","id":i}))
        .collect();
    let (_, b) = post_json(&addr, "/rpc/mcp/v1", serde_json::to_string(&items).unwrap()).await;
    assert_eq!(json(&b)["error"]["code"], -32600);
    assert_eq!(
        json(&b)["error"]["message"],
        "Invalid Request: batch too large (101 items, at most 100)"
    );
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
        .method_timeout_for("Jobs.run", Duration::from_millis(150))
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
        .method_timeout_for("Orders.pay", Duration::from_millis(100))
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
        .method_timeout(Duration::from_millis(100))
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
    let b = catalog_tree_on_rpc(&addr).await;
    assert_eq!(
        json(&b),
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,
            "message":"listener `hostile::PanicsBeforeItsFuture` panicked",
            "data":{"exception":"panic"}}})
    );
    let (s, b) = post_json(&addr, "/mcp/mcp/v1", r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Catalog.tree","arguments":{}}}"#,
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(
        json(&b),
        json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":
            "{\"code\":-32603,\"message\":\"listener `hostile::PanicsBeforeItsFuture` panicked\",\"data\":{\"exception\":\"panic\"}}"}],
            "isError":true}})
    );
    still_serving(&addr).await;
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
