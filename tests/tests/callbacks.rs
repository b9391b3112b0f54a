//! Asynchronous JSON-RPC calls (`params.$rpc.callback`) on the wire: the acknowledgement, then
//! the response POSTed to a webhook this test serves on loopback.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::IntoResponse;
use mcp_runtime::jsonrpc::callback::HttpCallbacks;
use mcp_runtime::{Environment, Server};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use tests::serve_url;

/// What the webhook received: its headers and JSON body.
type Received = (HeaderMap, Value);

/// A webhook on a free loopback port: `OPTIONS` answers 200 with `Allow: POST`; each POST is
/// sent to the returned channel and answered `status`.
async fn webhook(status: u16) -> (String, mpsc::UnboundedReceiver<Received>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let tx = Arc::new(Mutex::new(tx));
    let app = axum::Router::new().fallback(
        move |method: Method, headers: HeaderMap, body: axum::body::Bytes| {
            let tx = tx.clone();
            async move {
                if method == Method::OPTIONS {
                    return (StatusCode::OK, [("allow", "POST, OPTIONS")]).into_response();
                }
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let _ = tx.lock().unwrap().send((headers, body));
                StatusCode::from_u16(status).unwrap().into_response()
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks/rpc", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, rx)
}

/// The example with webhooks allowed to reach loopback.
fn server() -> Server {
    examples::builder()
        .env(Environment::PROD)
        .callbacks(Arc::new(
            HttpCallbacks::new()
                .allow_hosts(["127.0.0.1"])
                .retry_backoff(Duration::from_millis(10)),
        ))
        .build()
        .unwrap()
}

async fn post(url: &str, headers: &[(&str, &str)], body: Value) -> (u16, Value) {
    let mut req = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(url)
        .json(&body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

async fn next(rx: &mut mpsc::UnboundedReceiver<Received>) -> Received {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("the callback in time")
        .expect("the webhook runs")
}

#[tokio::test]
async fn an_asynchronous_call_is_acknowledged_then_posted_to_its_callback() {
    let (hook, mut rx) = webhook(200).await;
    let rpc = format!("{}/rpc/mcp/v1", serve_url(server()).await);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "Catalog.ping",
        "params": {"who": "later", "$rpc": {"callback": hook, "rayId": "ray-1"}}});
    let (status, ack) = post(
        &rpc,
        &[
            ("x-request-id", "req-1"),
            (
                "traceparent",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            ),
        ],
        call,
    )
    .await;
    assert_eq!(
        (status, ack),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 7, "result": {"async": true, "callback": hook}})
        )
    );
    let (headers, body) = next(&mut rx).await;
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": 7, "result": "pong, later"})
    );
    assert_eq!(headers["accept"], "application/json");
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["x-request-id"], "req-1");
    assert_eq!(
        headers["traceparent"],
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    );
    assert!(headers.get("x-correlation-id").is_none());

    // A method error is POSTed as the JSON-RPC error.
    let call = json!({"jsonrpc": "2.0", "id": "e", "method": "Catalog.get",
        "params": {"id": 99, "$rpc": {"callback": hook}}});
    let (status, _) = post(&rpc, &[], call).await;
    assert_eq!(status, 200);
    let (_, body) = next(&mut rx).await;
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": "e", "error": {"code": -32404, "message": "Product 99 not found",
            "data": {"exception": "examples::catalog::CatalogError"}}})
    );
}

#[tokio::test]
async fn a_bad_callback_or_rpc_member_is_refused_before_anything_runs() {
    let rpc = format!("{}/rpc/mcp/v1", serve_url(server()).await);
    // Nothing listens on port 9 of loopback.
    for (rpc_member, message) in [
        (
            json!({"callback": "ftp://hooks.example.com/x"}),
            "Invalid $rpc: `callback` must be an http or https URL",
        ),
        (
            json!({"callback": 12}),
            "Invalid $rpc: `callback` must be a URL string",
        ),
        (
            json!({"timeout": 5}),
            "Invalid $rpc: `timeout` must be an integer of seconds from 10 to 120",
        ),
        (
            json!({"callback": "http://127.0.0.1:9/x"}),
            "Invalid $rpc: `callback` cannot be used: not reachable (error sending request)",
        ),
    ] {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.ping",
            "params": {"$rpc": rpc_member}});
        let (status, body) = post(&rpc, &[], call).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["error"]["code"], -32602, "{body}");
        assert_eq!(body["error"]["message"], message);
    }
    // The default client refuses a private host.
    let public = examples::builder().env(Environment::PROD).build().unwrap();
    let rpc = format!("{}/rpc/mcp/v1", serve_url(public).await);
    let (hook, _rx) = webhook(200).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.ping",
        "params": {"$rpc": {"callback": hook}}});
    let (_, body) = post(&rpc, &[], call).await;
    let host = hook.split('/').nth(2).unwrap().split(':').next().unwrap();
    assert_eq!(
        body["error"]["message"],
        format!("Invalid $rpc: `callback` cannot be used: `{host}` is not a public host name")
    );
    // A server without webhooks says so.
    let plain = Server::builder()
        .state(examples::ProductStore::demo())
        .state(examples::internal::Bad)
        .env(Environment::PROD)
        .build()
        .unwrap();
    let rpc = format!("{}/rpc/mcp/v1", serve_url(plain).await);
    let (_, body) = post(
        &rpc,
        &[],
        json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.ping",
        "params": {"$rpc": {"callback": "https://hooks.example.com/x"}}}),
    )
    .await;
    assert_eq!(
        body["error"]["message"],
        "Invalid $rpc: asynchronous calls (`callback`) are not enabled on this server"
    );
}

#[tokio::test]
async fn a_failing_callback_is_retried_on_5xx_only_and_a_call_past_its_timeout_is_an_error() {
    let rpc = format!("{}/rpc/mcp/v1", serve_url(server()).await);
    let ping = |hook: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.ping",
            "params": {"$rpc": {"callback": hook}}})
    };
    // 503: tried four times (1 + 3 retries), then given up (and logged as -32300).
    let (hook, mut rx) = webhook(503).await;
    post(&rpc, &[], ping(&hook)).await;
    for _ in 0..4 {
        let (_, body) = next(&mut rx).await;
        assert_eq!(body["result"], "pong, x");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(rx.try_recv().is_err(), "no fifth try");
    // 404: the webhook answered; not tried again.
    let (hook, mut rx) = webhook(404).await;
    post(&rpc, &[], ping(&hook)).await;
    next(&mut rx).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(rx.try_recv().is_err(), "no retry after a 4xx");
    // A call longer than `$rpc.timeout` (the least, 10 s) is POSTed as a -32603 error.
    let (hook, mut rx) = webhook(200).await;
    let slow = json!({"jsonrpc": "2.0", "id": 2, "method": "Jobs.run",
        "params": {"steps": 3, "step_ms": 5000, "$rpc": {"callback": hook, "timeout": 10}}});
    let (_, ack) = post(&rpc, &[], slow).await;
    assert_eq!(ack["result"]["async"], true);
    let (_, body) = tokio::time::timeout(Duration::from_secs(15), rx.recv())
        .await
        .expect("the timeout's answer")
        .unwrap();
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32603,
            "message": "Method 'Jobs.run' timed out after 10000 ms",
            "data": {"exception": "Ufo\\RpcError\\RpcInternalException"}}})
    );
}

#[tokio::test]
async fn callbacks_in_flight_to_one_host_are_bounded_from_every_caller() {
    // Two in flight to a host at most; `Jobs.run` keeps its calls running meanwhile.
    let server = examples::builder()
        .env(Environment::PROD)
        .limits({
            let mut limits = mcp_runtime::Limits::default();
            limits.callbacks_per_host = 2;
            limits
        })
        .callbacks(Arc::new(
            HttpCallbacks::new()
                .allow_hosts(["127.0.0.1", "localhost"])
                .retry_backoff(Duration::from_millis(10)),
        ))
        .build()
        .unwrap();
    let rpc = format!("{}/rpc/mcp/v1", serve_url(server).await);
    let (hook, mut rx) = webhook(200).await;
    let slow = |id: u32, hook: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "Jobs.run",
            "params": {"steps": 2, "step_ms": 300, "$rpc": {"callback": hook}}})
    };
    for id in 1..=2 {
        let (_, ack) = post(&rpc, &[], slow(id, &hook)).await;
        assert_eq!(ack["result"]["async"], true, "{ack}");
    }
    let (status, refused) = post(&rpc, &[], slow(3, &hook)).await;
    assert_eq!(
        (status, refused),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602,
                "message": "Invalid $rpc: too many callbacks to 127.0.0.1 in flight; try again later",
                "data": {"exception": "Ufo\\RpcError\\RpcBadParamException"}}})
        )
    );
    // Another host is not held back by this one's.
    let other = hook.replace("127.0.0.1", "localhost");
    let (_, ack) = post(&rpc, &[], slow(4, &other)).await;
    assert_eq!(ack["result"]["async"], true, "{ack}");
    // Once delivered, the places are free again.
    for _ in 0..3 {
        next(&mut rx).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, ack) = post(&rpc, &[], slow(5, &hook)).await;
    assert_eq!(ack["result"]["async"], true, "{ack}");
}

#[tokio::test]
async fn an_asynchronous_call_past_its_rate_limit_is_refused_not_acknowledged() {
    // `Mail.send`: 10 at once per caller; asynchronous calls count as they are accepted.
    let (hook, mut rx) = webhook(200).await;
    let rpc = format!("{}/rpc/mcp/v1", serve_url(server()).await);
    let mail = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "Mail.send", "params": {
            "email": "ann@example.com", "subject": "Hi", "text": "0123456789",
            "$rpc": {"callback": hook}}})
    };
    for id in 1..=10 {
        let (_, ack) = post(&rpc, &[], mail(id)).await;
        assert_eq!(ack["result"]["async"], true, "{ack}");
    }
    let (status, refused) = post(&rpc, &[], mail(11)).await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (429, &json!(-32429)),
        "{refused}"
    );
    // The ten accepted are delivered; nothing for the refused one.
    for _ in 0..10 {
        let (_, body) = next(&mut rx).await;
        assert_eq!(body["result"]["queued"], true, "{body}");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(rx.try_recv().is_err(), "the refused call ran");
}

/// One POST as the webhook received it: headers and raw body.
type Raw = (HeaderMap, axum::body::Bytes);

#[tokio::test]
async fn deliveries_are_signed_and_a_retry_keeps_its_webhook_id() {
    use base64::Engine as _;
    use hmac::Mac as _;
    // The receiver's key, as Standard Webhooks writes it; the server signs with a newer one
    // too (a rotation): either verifies.
    const OLD: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const NEW: &str = "whsec_bmV3LWtleS1mb3ItdGhlLXJvdGF0aW9u";
    let (tx, mut rx) = mpsc::unbounded_channel::<Raw>();
    let tries = Arc::new(Mutex::new(0));
    let app = axum::Router::new().fallback(
        move |method: Method, headers: HeaderMap, body: axum::body::Bytes| {
            let (tx, tries) = (tx.clone(), tries.clone());
            async move {
                if method == Method::OPTIONS {
                    return (StatusCode::OK, [("allow", "POST, OPTIONS")]).into_response();
                }
                let _ = tx.send((headers, body));
                let mut n = tries.lock().unwrap();
                *n += 1;
                // The first try fails: the delivery is tried again.
                if *n == 1 {
                    StatusCode::SERVICE_UNAVAILABLE
                } else {
                    StatusCode::OK
                }
                .into_response()
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hooks/signed", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let server = examples::builder()
        .env(Environment::PROD)
        .callbacks(Arc::new(
            HttpCallbacks::new()
                .signing_secrets([NEW, OLD])
                .unwrap()
                .allow_hosts(["127.0.0.1"])
                .retry_backoff(Duration::from_millis(10)),
        ))
        .build()
        .unwrap();
    let rpc = format!("{}/rpc/mcp/v1", serve_url(server).await);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.ping",
        "params": {"who": "signed", "$rpc": {"callback": hook}}});
    let (status, _) = post(&rpc, &[], call).await;
    assert_eq!(status, 200);
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while seen.len() < 2 {
        match rx.try_recv() {
            Ok(r) => seen.push(r),
            Err(_) => {
                assert!(tokio::time::Instant::now() < deadline, "two tries");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    let key = base64::engine::general_purpose::STANDARD
        .decode(OLD.trim_start_matches("whsec_"))
        .unwrap();
    let ids: Vec<String> = seen
        .iter()
        .map(|(h, body)| {
            let text = |name: &str| h[name].to_str().unwrap().to_owned();
            let (id, ts, signatures) = (
                text("webhook-id"),
                text("webhook-timestamp"),
                text("webhook-signature"),
            );
            let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
            mac.update(format!("{id}.{ts}.").as_bytes());
            mac.update(body);
            let expected = format!(
                "v1,{}",
                base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
            );
            assert!(
                signatures.split(' ').any(|s| s == expected),
                "the old key verifies one of {signatures}"
            );
            assert_eq!(signatures.split(' ').count(), 2, "one signature per key");
            let age = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs()
                .abs_diff(ts.parse::<u64>().unwrap());
            assert!(age < 60, "a timestamp of now: {ts}");
            assert_eq!(
                serde_json::from_slice::<Value>(body).unwrap(),
                json!({"jsonrpc": "2.0", "id": 1, "result": "pong, signed"})
            );
            id
        })
        .collect();
    assert!(ids[0].starts_with("msg_"), "{}", ids[0]);
    assert_eq!(ids[0], ids[1], "a retry is the same delivery");
}
