//! Rate limits declared on a group and on a method: a group's default reaches every method
//! without one of its own, `per = "method"` is one allowance for all callers, callers known by
//! their identity are counted apart, and each refusal says when to come back. In process and
//! on the wire; the example's own limit (`Mail.send`) is tested in `examples/tests`.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_runtime::prelude::*;
use mcp_runtime::transport::auth::{AuthDecision, AuthRequest, TokenValidator};
use mcp_runtime::{Identity, RateLimit};
use serde_json::{Value, json};

/// Two calls an hour per caller, unless a method says otherwise.
const METERED: ApiGroup = ApiGroup::mcp("metered")
    .protected()
    .rate_limit(RateLimit::new(2, Duration::from_secs(3600)));

/// Reads the meter.
#[rpc_method(name = "Meter.read", groups = [METERED])]
fn read() -> u32 {
    7
}

/// Resets the meter: once an hour, whoever asks.
#[rpc_method(name = "Meter.reset", groups = [METERED], rate_limit(limit = "1/h", per = "method"))]
fn reset() -> bool {
    true
}

/// Every token is valid; its text is the subject.
struct Anyone;

impl TokenValidator for Anyone {
    fn validate<'a>(&'a self, req: AuthRequest<'a>) -> BoxFuture<'a, AuthDecision> {
        let who = Identity::new(req.token, Vec::<String>::new());
        Box::pin(std::future::ready(AuthDecision::Identified(who)))
    }
}

fn server() -> Server {
    examples::with_states(Server::builder())
        .env(Environment::PROD)
        .token_validator(Arc::new(Anyone))
        .build()
        .expect("valid catalog")
}

/// The refusal's code and `retryAfterMs`.
fn refused(e: &RpcError) -> (i32, u64) {
    (
        e.code(),
        e.retry_after().map_or(0, |d| d.as_millis() as u64),
    )
}

#[tokio::test]
async fn the_group_default_counts_each_identity_apart_and_per_method_counts_everyone() {
    let server = server();
    let ann = server
        .client("metered", 1)
        .identity(Identity::new("ann", Vec::<String>::new()));
    let bob = server
        .client("metered", 1)
        .identity(Identity::new("bob", Vec::<String>::new()));
    for _ in 0..2 {
        assert_eq!(ann.call("Meter.read", json!({})).await.ok(), Some(json!(7)));
    }
    let e = ann.call("Meter.read", json!({})).await.unwrap_err();
    let (code, ms) = refused(&e);
    // The next call is due half an hour later (3 600 s / 2), to the second.
    assert_eq!((code, ms.div_ceil(1000)), (-32429, 1800));
    assert_eq!(
        e.message(),
        format!("Too many requests: `Meter.read` is rate limited; retry in {ms} ms")
    );
    // The MCP face counts the same calls: Ann is refused there too, as a protocol error.
    let e = ann.call_tool("Meter.read", json!({})).await.unwrap_err();
    assert_eq!(e.code(), -32429);
    // Bob has his own two.
    assert_eq!(
        bob.call_tool("Meter.read", json!({}))
            .await
            .map(|r| r["structuredContent"].clone())
            .ok(),
        Some(json!({"result": 7}))
    );
    assert_eq!(bob.call("Meter.read", json!({})).await.ok(), Some(json!(7)));

    // `per = "method"`: Ann's reset uses the hour's only one, for Bob too.
    assert_eq!(
        ann.call("Meter.reset", json!({})).await.ok(),
        Some(json!(true))
    );
    let e = bob.call("Meter.reset", json!({})).await.unwrap_err();
    assert_eq!(e.code(), -32429);
}

#[tokio::test]
async fn on_the_wire_each_token_is_a_caller_and_the_refusal_is_429() {
    let base = tests::serve_url(server()).await;
    let url = format!("{base}/rpc/metered/v1");
    let post = |token: &'static str, body: Value| {
        let url = url.clone();
        async move {
            let r = reqwest::Client::new()
                .post(&url)
                .bearer_auth(token)
                .json(&body)
                .send()
                .await
                .expect("HTTP request");
            let status = r.status().as_u16();
            let retry = r
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().expect("ASCII").to_owned());
            (status, retry, r.json::<Value>().await.expect("JSON"))
        }
    };
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "Meter.read"});
    for _ in 0..2 {
        assert_eq!(post("ann", call.clone()).await.0, 200);
    }
    let (status, retry, mut body) = post("ann", call.clone()).await;
    let ms = body["error"]["data"]["retryAfterMs"]
        .as_u64()
        .expect("retryAfterMs");
    assert!((1_799_000..=1_800_000).contains(&ms), "{ms}");
    body["error"]["data"]["retryAfterMs"] = json!(0);
    body["error"]["message"] = json!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .replace(&ms.to_string(), "MS")
    );
    assert_eq!(
        (status, retry.as_deref(), body),
        (
            429,
            Some("1800"),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32429,
                "message": "Too many requests: `Meter.read` is rate limited; retry in MS ms",
                "data": {"exception": "Ufo\\RpcError\\RpcTooManyRequestsException", "retryAfterMs": 0}}})
        )
    );
    // The same address with another token is another caller.
    assert_eq!(post("bob", call).await.0, 200);
    // The group default is in every method's OpenRPC entry; the method's own wins.
    let doc: Value = reqwest::Client::new()
        .get(&url)
        .bearer_auth("ann")
        .send()
        .await
        .expect("GET")
        .json()
        .await
        .expect("JSON");
    let limit = |name: &str| {
        doc["methods"]
            .as_array()
            .and_then(|ms| ms.iter().find(|m| m["name"] == name))
            .map(|m| m["x-rate-limit"].clone())
    };
    assert_eq!(
        (limit("Meter.read"), limit("Meter.reset")),
        (
            Some(json!({"limit": 2, "periodMs": 3_600_000, "burst": 2, "per": "caller"})),
            Some(json!({"limit": 1, "periodMs": 3_600_000, "burst": 1, "per": "method"}))
        )
    );
}
