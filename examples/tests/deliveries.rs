//! Webhook deliveries kept in Redis (issue 39): tried with backoff until delivered, by another
//! instance when the first one stops, signed with one `webhook-id` throughout; one past its
//! horizon waits in the dead letters until `catalog tasks retry` takes it back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

mod common;

use common::{Redis, Spawned};

/// A secret the example signs with (`CATALOG_WEBHOOK_SECRETS`), and the receiver's key.
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// One POST the receiver got: its headers of interest, its body, and what it answered.
#[derive(Debug, Clone)]
struct Try {
    id: String,
    timestamp: String,
    signature: String,
    body: axum::body::Bytes,
    answered: u16,
}

/// A webhook receiver on a free port that answers 503 to deliveries until `up` is set.
struct Receiver {
    url: String,
    up: Arc<AtomicBool>,
    tries: Arc<Mutex<Vec<Try>>>,
}

async fn receiver() -> Receiver {
    let up = Arc::new(AtomicBool::new(false));
    let tries = Arc::new(Mutex::new(Vec::new()));
    let (is_up, seen) = (up.clone(), tries.clone());
    let app = axum::Router::new().fallback(
        move |method: axum::http::Method,
              headers: axum::http::HeaderMap,
              body: axum::body::Bytes| {
            let (is_up, seen) = (is_up.clone(), seen.clone());
            async move {
                use axum::response::IntoResponse as _;
                if method == axum::http::Method::OPTIONS {
                    return (axum::http::StatusCode::OK, [("allow", "POST, OPTIONS")])
                        .into_response();
                }
                let text = |name: &str| {
                    headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned()
                };
                let answered = if is_up.load(Ordering::SeqCst) {
                    200
                } else {
                    503
                };
                seen.lock().unwrap().push(Try {
                    id: text("webhook-id"),
                    timestamp: text("webhook-timestamp"),
                    signature: text("webhook-signature"),
                    body,
                    answered,
                });
                axum::http::StatusCode::from_u16(answered)
                    .unwrap()
                    .into_response()
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks/jobs", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Receiver { url, up, tries }
}

impl Receiver {
    /// The tries of deliveries so far (the callback check's probes left out).
    fn deliveries(&self) -> Vec<Try> {
        self.tries
            .lock()
            .unwrap()
            .iter()
            .filter(|t| !t.id.is_empty())
            .cloned()
            .collect()
    }

    /// Waits until a try was answered 200 (at most `secs` seconds): every try until then.
    async fn delivered(&self, secs: u64) -> Vec<Try> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let tries = self.deliveries();
            if tries.iter().any(|t| t.answered == 200) {
                return tries;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "not delivered: {tries:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Whether `t` is signed with [`SECRET`] as Standard Webhooks says.
fn verifies(t: &Try) -> bool {
    use base64::Engine as _;
    use hmac::Mac as _;
    let key = base64::engine::general_purpose::STANDARD
        .decode(SECRET.trim_start_matches("whsec_"))
        .unwrap();
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.", t.id, t.timestamp).as_bytes());
    mac.update(&t.body);
    let expected = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    );
    t.signature.split(' ').any(|s| s == expected)
}

async fn rpc(p: &Spawned, body: Value) -> Value {
    reqwest::Client::new()
        .post(format!("http://{}/rpc/mcp/v1", p.addr))
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `catalog tasks ...` against the same Redis, configured as the instances are.
fn tasks_cli(redis: &str, args: &[&str]) -> (bool, String) {
    common::tasks_cli(
        redis,
        args,
        &[
            ("CATALOG_WEBHOOK_ALLOW_HOSTS", "127.0.0.1"),
            ("CATALOG_WEBHOOK_SECRETS", SECRET),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_delivery_outlives_a_receiver_down_for_ten_seconds_and_the_instance_that_made_it() {
    let hook = receiver().await;
    let redis = Redis::start();
    let url = redis.url();
    let env = [
        ("REDIS_URL", url.as_str()),
        ("APP_ENV", "prod"),
        ("CATALOG_WEBHOOK_ALLOW_HOSTS", "127.0.0.1"),
        ("CATALOG_WEBHOOK_SECRETS", SECRET),
    ];
    let (mut a, _b) = (Spawned::catalog(&env), Spawned::catalog(&env));
    let ack = rpc(
        &a,
        json!({"jsonrpc": "2.0", "id": 1, "method": "Jobs.run",
            "params": {"steps": 2, "step_ms": 10, "$rpc": {"callback": hook.url}}}),
    )
    .await;
    assert_eq!(ack["result"]["async"], true, "{ack}");
    // The first try is refused (503); then the instance that made it stops.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while hook.deliveries().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "a first try");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.kill();
    let down_at = tokio::time::Instant::now();
    tokio::time::sleep(Duration::from_secs(10)).await;
    hook.up.store(true, Ordering::SeqCst);
    // The other instance tries it again, with backoff, until the receiver is up.
    let tries = hook.delivered(60).await;
    let last = tries.last().unwrap();
    assert_eq!(last.answered, 200);
    assert_eq!(
        serde_json::from_slice::<Value>(&last.body).unwrap(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"steps": 2}}),
        "the call ran once: its answer was kept, not run again"
    );
    assert!(tries.len() >= 3, "tried again while down: {tries:?}");
    assert!(
        tries
            .iter()
            .all(|t| t.id == tries[0].id && t.id.starts_with("msg_")),
        "one webhook-id on every try: {tries:?}"
    );
    assert!(tries.iter().all(verifies), "every try signed: {tries:?}");
    // With backoff: not one try a second for the ten seconds.
    let during: Vec<_> = tries.iter().filter(|t| t.answered == 503).collect();
    assert!(
        during.len() <= 6,
        "{} tries in {:?}",
        during.len(),
        down_at.elapsed()
    );
    // Delivered once: nothing more comes.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(hook.deliveries().len(), tries.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_delivery_past_its_horizon_waits_in_the_dead_letters_until_retried() {
    let hook = receiver().await;
    let redis = Redis::start();
    let url = redis.url();
    let p = Spawned::catalog(&[
        ("REDIS_URL", url.as_str()),
        ("APP_ENV", "prod"),
        ("CATALOG_WEBHOOK_ALLOW_HOSTS", "127.0.0.1"),
        ("CATALOG_WEBHOOK_SECRETS", SECRET),
        ("CATALOG_WEBHOOK_HORIZON_MS", "2500"),
    ]);
    let ack = rpc(
        &p,
        json!({"jsonrpc": "2.0", "id": "dead-1", "method": "Catalog.ping",
            "params": {"who": "later", "$rpc": {"callback": hook.url}}}),
    )
    .await;
    assert_eq!(ack["result"]["async"], true, "{ack}");
    // Tried within its horizon, then given up.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let dead = loop {
        let (ok, out) = tasks_cli(&url, &["dead-letter"]);
        assert!(ok, "{out}");
        if let Some(line) = out.lines().next() {
            break serde_json::from_str::<Value>(line).unwrap();
        }
        assert!(tokio::time::Instant::now() < deadline, "never given up");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let tried = hook.deliveries();
    assert!(tried.len() >= 2, "{tried:?}");
    assert!(tried.iter().all(|t| t.answered == 503));
    assert_eq!(
        dead,
        json!({"id": tried[0].id, "url": hook.url, "method": "Catalog.ping",
            "tries": tried.len(), "reason": "answered HTTP 503"})
    );
    // Nothing more is tried while it is dead.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(hook.deliveries().len(), tried.len());
    // The receiver is back; an operator retries it: delivered, with its id.
    hook.up.store(true, Ordering::SeqCst);
    let id = dead["id"].as_str().unwrap();
    let (ok, out) = tasks_cli(&url, &["retry", id]);
    assert!(ok, "{out}");
    let tries = hook.delivered(20).await;
    let last = tries.last().unwrap();
    assert_eq!(last.id, id);
    assert!(verifies(last));
    assert_eq!(
        serde_json::from_slice::<Value>(&last.body).unwrap()["id"],
        "dead-1"
    );
    let (ok, out) = tasks_cli(&url, &["dead-letter"]);
    assert!(ok && out.is_empty(), "{out}");
    // An unknown id is an error that says so.
    let (ok, _) = tasks_cli(&url, &["retry", "msg_nope"]);
    assert!(!ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_callers_waiting_deliveries_are_its_share_and_the_others_keep_theirs() {
    let hook = receiver().await;
    let redis = Redis::start();
    let mut limits = mcp_runtime::Limits::default();
    limits.callbacks_pending_per_caller = 2;
    // No second try while the test runs.
    limits.callback_first_retry = Duration::from_secs(600);
    let server = examples::builder()
        .env(mcp_runtime::Environment::PROD)
        .limits(limits)
        .callbacks(Arc::new(
            mcp_runtime::jsonrpc::callback::HttpCallbacks::new()
                .allow_hosts(["127.0.0.1"])
                .signing_secrets([SECRET])
                .unwrap(),
        ))
        .redis(&redis.url())
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/rpc/mcp/v1", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        server
            .serve_listener(listener, async {
                let _ = stopped.await;
            })
            .await
    });
    let call = |from: &'static str, id: u32| {
        let (url, hook) = (url.clone(), hook.url.clone());
        async move {
            common::client_from(from)
                .post(url)
                .json(
                    &json!({"jsonrpc": "2.0", "id": id, "method": "Catalog.ping",
                    "params": {"who": from, "$rpc": {"callback": hook}}}),
                )
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    // One caller's two deliveries fail their first try and wait.
    for id in [1, 2] {
        let ack = call("127.0.0.2", id).await;
        assert_eq!(ack["result"]["async"], true, "{ack}");
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while hook.deliveries().len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "two first tries");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Its third is refused; another caller is served.
    assert_eq!(
        call("127.0.0.2", 3).await,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602,
            "message": "Invalid $rpc: too many of this caller's callbacks wait to be delivered; try again later",
            "data": {"exception": "Ufo\\RpcError\\RpcBadParamException"}}})
    );
    let other = call("127.0.0.3", 4).await;
    assert_eq!(other["result"]["async"], true, "{other}");
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}
