//! Protected groups: tokens on JSON-RPC (401/403 with the reference's codes) and MCP (an OAuth
//! 2.1 resource server: `WWW-Authenticate` with resource metadata, 403 on insufficient scope).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_runtime::transport::auth::{AuthDecision, AuthRequest, TokenValidator};
use serde_json::{Value, json};

use tests::{example_prod, serve_url};

async fn send(req: reqwest::RequestBuilder) -> (u16, Option<String>, Value) {
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let challenge = r
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = r.text().await.unwrap();
    (
        status,
        challenge,
        serde_json::from_str(&body).unwrap_or(Value::Null),
    )
}

/// [`guarded`], with a request timeout of `ms` milliseconds.
async fn guarded_within(validator: impl TokenValidator, ms: u64) -> String {
    serve_url(
        example_prod()
            .token_validator(Arc::new(validator))
            .request_timeout(Some(std::time::Duration::from_millis(ms)))
            .build()
            .unwrap(),
    )
    .await
}

/// The example, in production, with `validator` checking tokens, served on a loopback port.
async fn guarded(validator: impl TokenValidator) -> String {
    serve_url(
        example_prod()
            .token_validator(Arc::new(validator))
            .build()
            .unwrap(),
    )
    .await
}

fn rpc(base: &str, token: Option<(&str, &str)>) -> reqwest::RequestBuilder {
    let mut r = reqwest::Client::new()
        .post(format!("{base}/rpc/admin/v1"))
        .json(&json!({"jsonrpc":"2.0","method":"Admin.reindex","id":1}));
    if let Some((h, v)) = token {
        r = r.header(h, v);
    }
    r
}

fn mcp(base: &str, token: Option<&str>) -> reqwest::RequestBuilder {
    let mut r = reqwest::Client::new()
        .post(format!("{base}/mcp/admin/v1"))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Admin.reindex"}}));
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    r
}

#[tokio::test]
async fn json_rpc_missing_wrong_and_right_tokens() {
    let base = serve_url(
        example_prod()
            .api_tokens(["s3cret", "other"])
            .build()
            .unwrap(),
    )
    .await;
    assert_eq!(
        send(rpc(&base, None)).await,
        (
            401,
            None,
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32401,"message":"Unauthorized. Token not found",
            "data":{"exception":"Ufo\\RpcError\\RpcTokenNotSentException"}}})
        )
    );
    assert_eq!(
        send(rpc(&base, Some(("authorization", "Bearer nope")))).await,
        (
            403,
            None,
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32403,"message":"Forbidden. Invalid token",
            "data":{"exception":"Ufo\\RpcError\\RpcInvalidTokenException"}}})
        )
    );
    assert_eq!(
        send(rpc(&base, Some(("authorization", "Bearer other"))))
            .await
            .2,
        json!({"jsonrpc":"2.0","id":1,"result":{"products":6}})
    );
    // Other groups need nothing.
    let open = reqwest::Client::new()
        .post(format!("{base}/rpc/mcp/v1"))
        .json(&json!({"jsonrpc":"2.0","method":"Catalog.ping","id":1}));
    assert_eq!(send(open).await.0, 200);
}

#[tokio::test]
async fn the_openrpc_document_of_a_protected_group_needs_the_token_too() {
    let base = serve_url(example_prod().api_tokens(["s3cret"]).build().unwrap()).await;
    let get = |t: Option<&str>| {
        let r = reqwest::Client::new().get(format!("{base}/rpc/admin/v1"));
        match t {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    };
    assert_eq!(send(get(None)).await.0, 401);
    assert_eq!(send(get(Some("bad"))).await.0, 403);
    let (s, _, doc) = send(get(Some("s3cret"))).await;
    // `Admin.audit` needs a scope the static token does not grant: only `Admin.reindex` shows.
    assert_eq!(
        (
            s,
            doc["methods"][0]["name"].clone(),
            doc["methods"][1].clone()
        ),
        (200, json!("Admin.reindex"), Value::Null)
    );
}

#[tokio::test]
async fn a_custom_token_header() {
    let base = serve_url(
        example_prod()
            .api_tokens(["s3cret"])
            .token_header("Ufo-RPC-Token")
            .build()
            .unwrap(),
    )
    .await;
    assert_eq!(
        send(rpc(&base, Some(("authorization", "Bearer s3cret"))))
            .await
            .0,
        401
    );
    assert_eq!(
        send(rpc(&base, Some(("Ufo-RPC-Token", "s3cret")))).await.0,
        200
    );
    assert_eq!(send(rpc(&base, Some(("Ufo-RPC-Token", "x")))).await.0, 403);
}

#[tokio::test]
async fn no_tokens_configured_refuses_everyone() {
    let base = serve_url(
        example_prod()
            .api_tokens(Vec::<String>::new())
            .build()
            .unwrap(),
    )
    .await;
    assert_eq!(
        send(rpc(&base, Some(("authorization", "Bearer anything"))))
            .await
            .0,
        403
    );
    assert_eq!(send(mcp(&base, Some("anything"))).await.0, 401);
}

#[tokio::test]
async fn mcp_is_an_oauth_resource_server() {
    let base = serve_url(
        example_prod()
            .api_tokens(["s3cret"])
            .authorization_servers(["https://auth.example.com"], &["admin"])
            .build()
            .unwrap(),
    )
    .await;
    let host = base.trim_start_matches("http://");
    let metadata = format!("http://{host}/.well-known/oauth-protected-resource/mcp/admin/v1");
    let (s, challenge, body) = send(mcp(&base, None)).await;
    assert_eq!(s, 401);
    assert_eq!(
        challenge.as_deref(),
        Some(format!("Bearer resource_metadata=\"{metadata}\"").as_str())
    );
    assert_eq!(body["error"]["code"], -32401);
    let (s, challenge, _) = send(mcp(&base, Some("wrong"))).await;
    assert_eq!(s, 401);
    assert_eq!(
        challenge,
        Some(format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{metadata}\""
        ))
    );
    let (s, _, body) = send(mcp(&base, Some("s3cret"))).await;
    assert_eq!(
        (s, body["result"]["structuredContent"].clone()),
        (200, json!({"result":{"products":6}}))
    );
    let meta: Value = reqwest::get(&metadata).await.unwrap().json().await.unwrap();
    assert_eq!(
        meta,
        json!({"resource": format!("http://{host}/mcp/admin/v1"), "authorization_servers": ["https://auth.example.com"],
            "bearer_methods_supported": ["header"], "scopes_supported": ["admin"]})
    );
    let root: Value = reqwest::get(format!("{base}/.well-known/oauth-protected-resource"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(root, meta);
}

/// A validator standing in for JWT checks: `admin-*` tokens pass, `user-*` lack the scope.
struct Scoped;

impl TokenValidator for Scoped {
    fn validate<'a>(&'a self, req: AuthRequest<'a>) -> BoxFuture<'a, AuthDecision> {
        let d = if req.token.starts_with("admin-") && req.group == "admin" {
            AuthDecision::Allow
        } else if req.token.starts_with("user-") {
            AuthDecision::InsufficientScope(vec!["admin".into()])
        } else {
            AuthDecision::Invalid
        };
        Box::pin(std::future::ready(d))
    }
}

#[tokio::test]
async fn a_pluggable_validator_and_insufficient_scope() {
    let base = guarded(Scoped).await;
    assert_eq!(send(mcp(&base, Some("admin-1"))).await.0, 200);
    let (s, challenge, body) = send(mcp(&base, Some("user-1"))).await;
    assert_eq!(s, 403);
    let challenge = challenge.unwrap_or_default();
    assert!(
        challenge.starts_with(
            "Bearer error=\"insufficient_scope\", scope=\"admin\", resource_metadata="
        ),
        "{challenge}"
    );
    assert_eq!(body["error"]["code"], -32403);
    assert_eq!(
        send(rpc(&base, Some(("authorization", "Bearer user-1"))))
            .await
            .0,
        403
    );
}

/// A validator that never answers (a token-introspection endpoint that hangs).
struct Stalled;

impl TokenValidator for Stalled {
    fn validate<'a>(&'a self, _: AuthRequest<'a>) -> BoxFuture<'a, AuthDecision> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn a_stalled_validator_is_cut_by_the_request_timeout() {
    let base = guarded_within(Stalled, 200).await;
    let r = mcp(&base, Some("admin-1")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 408);
    assert_eq!(r.text().await.unwrap(), "Request Timeout");
    let r = rpc(&base, Some(("authorization", "Bearer admin-1")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 408);
}

/// `sub-<name>` tokens are `<name>`, with the `admin` scope; anything else is refused.
fn named(token: &str) -> AuthDecision {
    match token.strip_prefix("sub-") {
        Some(name) => AuthDecision::Identified(mcp_runtime::Identity::new(name, ["admin"])),
        None => AuthDecision::Invalid,
    }
}

/// A validator that says who calls ([`named`]), through its future.
struct Identifying;

impl TokenValidator for Identifying {
    fn validate<'a>(&'a self, req: AuthRequest<'a>) -> BoxFuture<'a, AuthDecision> {
        Box::pin(std::future::ready(named(req.token)))
    }
}

/// `sub-ann` on JSON-RPC and `sub-bob` on MCP: each method sees who calls.
async fn assert_methods_see_who_calls(base: &str) {
    let (status, _, body) = send(rpc(base, Some(("authorization", "Bearer sub-ann")))).await;
    assert_eq!(
        (status, body),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"products": 6, "by": "ann"}})
        )
    );
    let (status, _, body) = send(mcp(base, Some("sub-bob"))).await;
    assert_eq!(
        (status, body["result"]["structuredContent"].clone()),
        (200, json!({"result": {"products": 6, "by": "bob"}}))
    );
}

#[tokio::test]
async fn methods_see_who_calls_on_both_faces() {
    assert_methods_see_who_calls(&guarded(Identifying).await).await;
}

/// A validator that decides without I/O ([`named`]): its future never resolves, so a server that awaited
/// it instead of asking `validate_now` would time out.
struct AtOnce;

impl TokenValidator for AtOnce {
    fn validate<'a>(&'a self, _: AuthRequest<'a>) -> BoxFuture<'a, AuthDecision> {
        Box::pin(std::future::pending())
    }

    fn validate_now(&self, req: AuthRequest<'_>) -> Option<AuthDecision> {
        Some(named(req.token))
    }
}

#[tokio::test]
async fn a_validator_that_decides_at_once_is_not_awaited() {
    let base = guarded_within(AtOnce, 500).await;
    assert_methods_see_who_calls(&base).await;
    let (status, challenge, _) = send(mcp(&base, Some("nobody"))).await;
    assert_eq!(status, 401);
    assert!(
        challenge
            .unwrap_or_default()
            .starts_with("Bearer error=\"invalid_token\", resource_metadata=\"http://"),
    );
    // The OpenRPC document of the protected group is behind the same check.
    let doc = reqwest::Client::new()
        .get(format!("{base}/rpc/admin/v1"))
        .bearer_auth("sub-ann")
        .send()
        .await
        .unwrap();
    assert_eq!(doc.status().as_u16(), 200);
}

/// A protected group with a task tool.
const JOBS: mcp_runtime::ApiGroup = mcp_runtime::ApiGroup::mcp("jobs").protected();

/// Waits a while.
#[mcp_runtime::rpc_method(name = "Jobs.wait", groups = [JOBS])]
#[mcp_runtime::mcp_tool(task = "optional")]
async fn wait() -> String {
    tokio::time::sleep(std::time::Duration::from_secs(30)).await;
    "done".into()
}

/// A 2026-07-28 request with the tasks extension, as `token`.
async fn jobs(base: &str, token: &str, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}}
    });
    let name = params["name"]
        .as_str()
        .or_else(|| params["taskId"].as_str())
        .unwrap_or_default()
        .to_owned();
    reqwest::Client::new()
        .post(format!("{base}/mcp/jobs/v1"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_task_belongs_to_whoever_started_it() {
    let base = guarded(Identifying).await;
    let created = jobs(&base, "sub-ann", "tools/call", json!({"name": "Jobs.wait"})).await;
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mine = jobs(&base, "sub-ann", "tasks/get", json!({"taskId": task})).await;
    assert_eq!(mine["result"]["status"], "working");
    // Another caller cannot see it, nor cancel it: to them it does not exist.
    for method in ["tasks/get", "tasks/cancel"] {
        let theirs = jobs(&base, "sub-bob", method, json!({"taskId": task})).await;
        assert_eq!(theirs["error"]["code"], -32602, "{method}: {theirs}");
        assert_eq!(theirs["error"]["message"], "Unknown taskId");
    }
    let ack = jobs(&base, "sub-ann", "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(ack["result"]["resultType"], "complete");
}

// ---------------------------------------------------------------------------------------------
// JWT bearer tokens against a JWKS this test serves
// ---------------------------------------------------------------------------------------------

/// A P-256 key made for this test (never used elsewhere), and its public half as a JWK.
const EC_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg5mb6yr7+ldX3lkZr
yPE3IyM1Nj48/YyG/9fesI2F82+hRANCAATAmdad4QZExAhox0wmZROKqBjNd4ar
ooW2H3TuIXUx1psTN1qWmXZ+dbgLWotmK17rADrjTYqlou82J6AKZsLz
-----END PRIVATE KEY-----
";
const EC_X: &str = "wJnWneEGRMQIaMdMJmUTiqgYzXeGq6KFth907iF1MdY";
const EC_Y: &str = "mxM3WpaZdn51uAtai2YrXusAOuNNiqWi7zYnoApmwvM";

/// Serves `{"keys": [the test key as kid "k1"]}` and counts the fetches.
async fn jwks() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let fetched = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = fetched.clone();
    let app = axum::Router::new().route(
        "/jwks.json",
        axum::routing::get(move || {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async {
                axum::Json(
                    json!({"keys": [{"kty": "EC", "crv": "P-256", "x": EC_X, "y": EC_Y,
                    "kid": "k1", "alg": "ES256", "use": "sig"}]}),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, fetched)
}

const ISSUER: &str = "https://auth.example.com";
const AUDIENCE: &str = "https://api.example.com/mcp/admin/v1";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token signed with the test key; `claims` override the valid defaults.
fn jwt(kid: &str, claims: Value) -> String {
    let mut c = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "ann", "scope": "admin read",
        "exp": now() + 300, "iat": now()});
    for (k, v) in claims.as_object().unwrap() {
        c[k] = v.clone();
    }
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some(kid.into());
    let key = jsonwebtoken::EncodingKey::from_ec_pem(EC_KEY.as_bytes()).unwrap();
    jsonwebtoken::encode(&header, &c, &key).unwrap()
}

#[tokio::test]
async fn jwt_tokens_are_checked_against_the_issuers_keys() {
    let (jwks_url, fetched) = jwks().await;
    let validator = mcp_runtime::transport::jwt::JwtValidator::new(ISSUER, AUDIENCE)
        .jwks_url(jwks_url)
        .require_scopes(["admin"]);
    let base = guarded(validator).await;
    let bearer = |t: &str| format!("Bearer {t}");
    let ok = jwt("k1", json!({}));
    let (status, _, body) = send(rpc(&base, Some(("authorization", &bearer(&ok))))).await;
    assert_eq!(
        (status, body),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"products": 6, "by": "ann"}})
        )
    );
    let (status, _, body) = send(mcp(&base, Some(&ok))).await;
    assert_eq!(
        (
            status,
            body["result"]["structuredContent"]["result"]["by"].clone()
        ),
        (200, json!("ann"))
    );
    // Refused: another audience or issuer, expired, not yet valid, no subject, an unknown key.
    for bad in [
        jwt("k1", json!({"aud": "https://other.example.com"})),
        jwt("k1", json!({"iss": "https://evil.example.com"})),
        jwt("k1", json!({"exp": now() - 600})),
        jwt("k1", json!({"nbf": now() + 600})),
        jwt("k1", json!({"sub": null})),
        jwt("k2", json!({})),
        format!("{ok}x"),
        "not.a.jwt".to_owned(),
    ] {
        let (status, _, body) = send(rpc(&base, Some(("authorization", &bearer(&bad))))).await;
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (403, json!(-32403)),
            "{bad}"
        );
    }
    // A valid token without the required scope.
    let (status, challenge, _) = send(mcp(&base, Some(&jwt("k1", json!({"scope": "read"}))))).await;
    assert_eq!(status, 403);
    assert!(
        challenge
            .unwrap_or_default()
            .starts_with("Bearer error=\"insufficient_scope\", scope=\"admin\"")
    );
    // Fetched once: the unknown `kid` could not refresh within 30 s of it.
    assert_eq!(fetched.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unknown_jwt_key_refreshes_the_keys() {
    let (jwks_url, fetched) = jwks().await;
    let validator = mcp_runtime::transport::jwt::JwtValidator::new(ISSUER, AUDIENCE)
        .jwks_url(jwks_url)
        .refresh_interval(std::time::Duration::ZERO);
    let base = guarded(validator).await;
    let bearer = format!("Bearer {}", jwt("k2", json!({})));
    assert_eq!(
        send(rpc(&base, Some(("authorization", &bearer)))).await.0,
        403
    );
    let bearer = format!("Bearer {}", jwt("k1", json!({})));
    assert_eq!(
        send(rpc(&base, Some(("authorization", &bearer)))).await.0,
        200
    );
    // The unknown `k2` fetched the keys, and `k1` was then known.
    assert_eq!(fetched.load(std::sync::atomic::Ordering::SeqCst), 1);
    let bearer = format!("Bearer {}", jwt("k3", json!({})));
    assert_eq!(
        send(rpc(&base, Some(("authorization", &bearer)))).await.0,
        403
    );
    assert_eq!(fetched.load(std::sync::atomic::Ordering::SeqCst), 2);
}

static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many times it ran (cached for a minute).
#[mcp_runtime::rpc_method(name = "Jobs.runs", groups = [JOBS], cache(ttl = "60s"))]
fn runs() -> u64 {
    RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1
}

#[tokio::test]
async fn cached_results_are_kept_per_caller() {
    let base = guarded(Identifying).await;
    let call = |token: &'static str| {
        let base = base.clone();
        async move {
            let r = reqwest::Client::new()
                .post(format!("{base}/rpc/jobs/v1"))
                .bearer_auth(token)
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "Jobs.runs"}))
                .send()
                .await
                .unwrap();
            r.json::<Value>().await.unwrap()["result"].clone()
        }
    };
    let first = call("sub-ann").await;
    assert_eq!(call("sub-ann").await, first, "ann's entry");
    let bob = call("sub-bob").await;
    assert_ne!(bob, first, "bob never gets ann's entry");
    assert_eq!(call("sub-bob").await, bob);
}

#[tokio::test]
async fn a_listen_stream_hears_only_of_its_callers_tasks() {
    let base = guarded(Identifying).await;
    let created = jobs(&base, "sub-ann", "tools/call", json!({"name": "Jobs.wait"})).await;
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    // Bob names Ann's task on his listen stream: he is acknowledged, but hears nothing of it.
    let listen = |token: &'static str, id: i64| {
        let mut params = json!({"notifications": {"taskIds": [task]}});
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}}
        });
        reqwest::Client::new()
            .post(format!("{base}/mcp/jobs/v1"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "subscriptions/listen")
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params}))
            .send()
    };
    let mut bob = listen("sub-bob", 7).await.unwrap();
    let mut ann = listen("sub-ann", 8).await.unwrap();
    assert_eq!(
        read(&mut ann, 1).await[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(
        read(&mut bob, 1).await[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    let ack = jobs(&base, "sub-ann", "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(ack["result"]["resultType"], "complete");
    let heard = read(&mut ann, 1).await;
    assert_eq!(heard[0]["method"], "notifications/tasks");
    assert_eq!(heard[0]["params"]["taskId"], task);
    assert_eq!(
        read(&mut bob, 1).await,
        Vec::<Value>::new(),
        "Bob hears nothing"
    );
}

fn sse_frames(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// Reads SSE frames until `want` arrived or 1.5 s passed.
async fn read(resp: &mut reqwest::Response, want: usize) -> Vec<Value> {
    let mut buf = String::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(1500);
    while sse_frames(&buf).len() < want {
        match tokio::time::timeout_at(deadline, resp.chunk()).await {
            Ok(Ok(Some(c))) => buf.push_str(&String::from_utf8_lossy(&c)),
            _ => break,
        }
    }
    sse_frames(&buf)
}

/// The example's `Admin.audit` requires `catalog:audit`: a JWT whose `scope` claim grants it
/// sees and calls it; another valid JWT neither sees it in `tools/list` nor calls it.
#[tokio::test]
async fn the_examples_audit_tool_needs_the_audit_scope() {
    let (jwks_url, _) = jwks().await;
    let validator =
        mcp_runtime::transport::jwt::JwtValidator::new(ISSUER, AUDIENCE).jwks_url(jwks_url);
    let base = guarded(validator).await;
    let post = |token: String, method: &'static str, params: Value| {
        reqwest::Client::new()
            .post(format!("{base}/mcp/admin/v1"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
    };
    let tools = |token: String| async move {
        let (_, _, body) = send(post(token, "tools/list", json!({}))).await;
        body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let auditor = jwt("k1", json!({"scope": "catalog:audit"}));
    let other = jwt("k1", json!({"scope": "read"}));
    assert_eq!(
        tools(auditor.clone()).await,
        ["Admin.audit", "Admin.reindex"]
    );
    assert_eq!(tools(other.clone()).await, ["Admin.reindex"]);
    let audit = json!({"name": "Admin.audit"});
    let (status, _, body) = send(post(auditor, "tools/call", audit.clone())).await;
    assert_eq!(
        (status, body["result"]["structuredContent"].clone()),
        (
            200,
            json!({"result": {"products": 6, "scopes": ["catalog:audit"]}})
        )
    );
    let (status, challenge, body) = send(post(other, "tools/call", audit)).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (403, json!(-32403))
    );
    assert!(
        challenge
            .unwrap_or_default()
            .starts_with("Bearer error=\"insufficient_scope\", scope=\"catalog:audit\"")
    );
}

/// Listeners see who calls: the identity is on every event's context, on both faces.
#[tokio::test]
async fn listeners_see_the_callers_identity() {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let base = serve_url(
        example_prod()
            .token_validator(Arc::new(Identifying))
            .on(mcp_runtime::core::EventKind::Response, |ev| {
                if let Some(who) = ev.context().identity() {
                    SEEN.lock()
                        .unwrap()
                        .push(format!("{}:{}", ev.method(), who.subject));
                }
                Ok(())
            })
            .build()
            .unwrap(),
    )
    .await;
    assert_eq!(
        send(rpc(&base, Some(("authorization", "Bearer sub-ann"))))
            .await
            .0,
        200
    );
    assert_eq!(send(mcp(&base, Some("sub-bob"))).await.0, 200);
    assert_eq!(
        *SEEN.lock().unwrap(),
        ["Admin.reindex:ann", "Admin.reindex:bob"]
    );
}
