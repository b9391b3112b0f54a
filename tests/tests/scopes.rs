//! Per-method scopes (`#[rpc_method(scopes = [...])]`, the same on resources and prompts): a
//! caller whose identity lacks them gets HTTP 403 with -32403 on `/rpc`, HTTP 403 with the MCP
//! authorization spec's `insufficient_scope` challenge on MCP (both eras), and MCP lists show
//! each caller only what it may call. Exact answers on the wire, and in process.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_runtime::Identity;
use mcp_runtime::prelude::*;
use mcp_runtime::transport::auth::{AuthDecision, AuthRequest, TokenValidator};
use serde_json::{Value, json};

const ORDERS: ApiGroup = ApiGroup::mcp("orders").protected();

/// Lists orders.
#[rpc_method(name = "Orders.list", groups = [ORDERS])]
fn list() -> Vec<u32> {
    vec![7]
}

/// Refunds an order.
#[rpc_method(name = "Orders.refund", groups = [ORDERS], scopes = ["orders:write"])]
fn refund(id: u32) -> String {
    format!("refunded {id}")
}

/// The ledger.
#[mcp_resource(uri = "orders://ledger", groups = [ORDERS], scopes = ["orders:audit"])]
fn ledger() -> String {
    "ledger".into()
}

/// The public price list.
#[mcp_resource(uri = "orders://prices", groups = [ORDERS])]
fn prices() -> String {
    "prices".into()
}

/// Drafts an apology.
#[mcp_prompt(name = "apology", groups = [ORDERS], scopes = ["orders:write"])]
fn apology(
    /// Whom to apologise to
    to: String,
) -> String {
    format!("Sorry, {to}.")
}

/// How to read the ledger: only for auditors, as the ledger itself.
#[mcp_skill(dir = "skills/audit-guide", groups = [ORDERS], scopes = ["orders:audit"])]
pub struct AuditGuide;

const AUDIT_GUIDE: &str = "skill://audit-guide/SKILL.md";

/// `reader` may read, `writer` may also write, `auditor` has `orders:audit` only.
struct Tokens;

impl TokenValidator for Tokens {
    fn validate<'a>(&'a self, req: AuthRequest<'a>) -> BoxFuture<'a, AuthDecision> {
        let scopes: &[&str] = match req.token {
            "reader" => &["orders:read"],
            "writer" => &["orders:read", "orders:write"],
            "auditor" => &["orders:audit"],
            _ => return Box::pin(std::future::ready(AuthDecision::Invalid)),
        };
        let who = Identity::new(req.token, scopes.iter().copied());
        Box::pin(std::future::ready(AuthDecision::Identified(who)))
    }
}

fn server() -> Server {
    examples::with_states(Server::builder())
        .env(Environment::PROD)
        .token_validator(Arc::new(Tokens))
        .build()
        .expect("valid catalog")
}

/// Status, `WWW-Authenticate` and JSON body of a POST.
async fn post(
    url: &str,
    token: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> (u16, Option<String>, Value) {
    let mut req = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .json(&body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.expect("HTTP request");
    let status = r.status().as_u16();
    let challenge = r
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().expect("ASCII").to_owned());
    let text = r.text().await.expect("a body");
    (
        status,
        challenge,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

const FORBIDDEN_REFUND: &str =
    "Forbidden. Insufficient scope: `Orders.refund` requires orders:write";

fn forbidden(id: Value, message: &str, scopes: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32403, "message": message,
        "data": {"exception": "Ufo\\RpcError\\RpcInvalidTokenException", "extra": {"scopes": scopes}}}})
}

#[tokio::test]
async fn json_rpc_answers_403_to_a_caller_without_the_scope() {
    let base = tests::serve_url(server()).await;
    let url = format!("{base}/rpc/orders/v1");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "Orders.refund", "params": {"id": 7}});
    let (status, _, body) = post(&url, "reader", &[], call.clone()).await;
    assert_eq!(
        (status, body),
        (
            403,
            forbidden(json!(1), FORBIDDEN_REFUND, json!(["orders:write"]))
        )
    );
    let (status, _, body) = post(&url, "writer", &[], call).await;
    assert_eq!(
        (status, body),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": "refunded 7"})
        )
    );
    // In a batch, the refused item is one error among answers.
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "Orders.list"},
        {"jsonrpc": "2.0", "id": 2, "method": "Orders.refund", "params": [7]}
    ]);
    let (status, _, body) = post(&url, "reader", &[], batch).await;
    assert_eq!(
        (status, body),
        (
            200,
            json!([
                {"jsonrpc": "2.0", "id": 1, "result": [7]},
                forbidden(json!(2), FORBIDDEN_REFUND, json!(["orders:write"]))
            ])
        )
    );
}

const MODERN: &str = "2026-07-28";

fn modern(method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

async fn modern_post(
    base: &str,
    token: &str,
    method: &str,
    params: Value,
) -> (u16, Option<String>, Value) {
    let name = params["name"]
        .as_str()
        .or(params["uri"].as_str())
        .unwrap_or("")
        .to_owned();
    let mut headers = vec![
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", MODERN),
        ("mcp-method", method),
    ];
    if !name.is_empty() {
        headers.push(("mcp-name", &name));
    }
    post(
        &format!("{base}/mcp/orders/v1"),
        token,
        &headers,
        modern(method, params),
    )
    .await
}

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    list["result"][key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {list}"))
        .iter()
        .map(|t| t[field].as_str().expect("a string").to_owned())
        .collect()
}

#[tokio::test]
async fn mcp_lists_show_each_caller_what_it_may_call() {
    let base = tests::serve_url(server()).await;
    let seen = |token: &'static str| {
        let base = base.clone();
        async move {
            let tools = modern_post(&base, token, "tools/list", json!({})).await.2;
            let resources = modern_post(&base, token, "resources/list", json!({}))
                .await
                .2;
            let prompts = modern_post(&base, token, "prompts/list", json!({})).await.2;
            let skills = modern_post(&base, token, "skills/list", json!({})).await.2;
            (
                names(&tools, "tools", "name"),
                names(&resources, "resources", "uri"),
                names(&prompts, "prompts", "name"),
                names(&skills, "skills", "uri"),
            )
        }
    };
    let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        seen("reader").await,
        (s(&["Orders.list"]), s(&["orders://prices"]), s(&[]), s(&[]))
    );
    assert_eq!(
        seen("writer").await,
        (
            s(&["Orders.list", "Orders.refund"]),
            s(&["orders://prices"]),
            s(&["apology"]),
            s(&[])
        )
    );
    // A scoped skill is listed, as a skill and as its `SKILL.md` resource, to its scope only.
    assert_eq!(
        seen("auditor").await,
        (
            s(&["Orders.list"]),
            s(&["orders://ledger", "orders://prices", AUDIT_GUIDE]),
            s(&[]),
            s(&[AUDIT_GUIDE])
        )
    );
    // Asked again, the kept view answers the same.
    assert_eq!(seen("reader").await.0, s(&["Orders.list"]));
}

#[tokio::test]
async fn mcp_refuses_with_the_insufficient_scope_challenge_on_both_eras() {
    let base = tests::serve_url(server()).await;
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"orders:write\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp/orders/v1\""
    );
    let (status, header, body) = modern_post(
        &base,
        "reader",
        "tools/call",
        json!({"name": "Orders.refund", "arguments": {"id": 7}}),
    )
    .await;
    assert_eq!(
        (status, header.as_deref(), body),
        (
            403,
            Some(challenge.as_str()),
            forbidden(json!(1), FORBIDDEN_REFUND, json!(["orders:write"]))
        )
    );
    // The handshake era, asking for progress (a stream): still refused before any stream.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "Orders.refund", "arguments": {"id": 7}, "_meta": {"progressToken": "p"}}});
    let (status, header, body) = post(
        &format!("{base}/mcp/orders/v1"),
        "reader",
        &[
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-06-18"),
        ],
        call,
    )
    .await;
    assert_eq!(
        (status, header.as_deref(), body),
        (
            403,
            Some(challenge.as_str()),
            forbidden(json!(2), FORBIDDEN_REFUND, json!(["orders:write"]))
        )
    );
    // A resource and a prompt the same way.
    let (status, header, body) = modern_post(
        &base,
        "reader",
        "resources/read",
        json!({"uri": "orders://ledger"}),
    )
    .await;
    assert_eq!(status, 403);
    assert!(header.is_some_and(|h| h.contains("scope=\"orders:audit\"")));
    assert_eq!(body["error"]["code"], -32403);
    // A skill, by `skills/get` and by reading its files, the same way.
    let audit = "scope=\"orders:audit\"";
    for method in ["skills/get", "resources/read"] {
        let (status, header, body) =
            modern_post(&base, "reader", method, json!({"uri": AUDIT_GUIDE})).await;
        assert_eq!(
            (status, body),
            (
                403,
                forbidden(
                    json!(1),
                    "Forbidden. Insufficient scope: `skill://audit-guide/SKILL.md` requires orders:audit",
                    json!(["orders:audit"])
                )
            ),
            "{method}"
        );
        assert!(header.is_some_and(|h| h.contains(audit)), "{method}");
        let (status, _, body) =
            modern_post(&base, "auditor", method, json!({"uri": AUDIT_GUIDE})).await;
        assert_eq!(status, 200, "{method}: {body}");
    }
    let (status, _, body) = modern_post(
        &base,
        "writer",
        "prompts/get",
        json!({"name": "apology", "arguments": {"to": "Ann"}}),
    )
    .await;
    assert_eq!(
        (
            status,
            body["result"]["messages"][0]["content"]["text"].clone()
        ),
        (200, json!("Sorry, Ann."))
    );
    // Completion knows only the prompts the caller may use.
    let complete = json!({"ref": {"type": "ref/prompt", "name": "apology"},
        "argument": {"name": "to", "value": "A"}});
    let (status, _, body) =
        modern_post(&base, "reader", "completion/complete", complete.clone()).await;
    assert_eq!(
        (status, body["error"].clone()),
        (
            400,
            json!({"code": -32602, "message": "Unknown prompt: apology"})
        )
    );
    let (status, _, body) = modern_post(&base, "writer", "completion/complete", complete).await;
    assert_eq!(
        (status, body["result"]["completion"].clone()),
        (200, json!({"values": []}))
    );
    // With the scope, the call runs.
    let (status, header, body) = modern_post(
        &base,
        "writer",
        "tools/call",
        json!({"name": "Orders.refund", "arguments": {"id": 7}}),
    )
    .await;
    assert_eq!(
        (status, header, body["result"]["structuredContent"].clone()),
        (200, None, json!({"result": "refunded 7"}))
    );
}

#[tokio::test]
async fn in_process_calls_run_as_the_chosen_identity() {
    let server = server();
    let as_reader = server
        .client("orders", 1)
        .identity(Identity::new("r", ["orders:read"]));
    let e = as_reader
        .call("Orders.refund", json!({"id": 7}))
        .await
        .unwrap_err();
    assert_eq!((e.code(), e.message()), (-32403, FORBIDDEN_REFUND));
    let tools: Vec<Value> = as_reader.list("tools/list", "tools").await.unwrap();
    assert_eq!(tools.len(), 1);
    let e = as_reader
        .call_tool("Orders.refund", json!({"id": 7}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), -32403);
    let as_writer = server
        .client("orders", 1)
        .identity(Identity::new("w", ["orders:write"]));
    assert_eq!(
        as_writer
            .call("Orders.refund", json!({"id": 7}))
            .await
            .unwrap(),
        json!("refunded 7")
    );
    // A scoped skill is refused where it is answered, whatever carries the request.
    let e = as_writer.read_resource(AUDIT_GUIDE).await.unwrap_err();
    assert_eq!(e.code(), -32403);
    let e = as_writer
        .request("skills/get", json!({"uri": AUDIT_GUIDE}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), -32403);
    let as_auditor = server
        .client("orders", 1)
        .identity(Identity::new("a", ["orders:audit"]));
    let read = as_auditor.read_resource(AUDIT_GUIDE).await.unwrap();
    assert_eq!(read["contents"][0]["uri"], AUDIT_GUIDE);
    assert_eq!(
        as_auditor
            .list("skills/list", "skills")
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        as_writer
            .list("skills/list", "skills")
            .await
            .unwrap()
            .is_empty()
    );
    // No identity at all: the scoped method is refused, the others run.
    let anonymous = server.client("orders", 1);
    assert_eq!(
        anonymous.call("Orders.list", json!({})).await.unwrap(),
        json!([7])
    );
    assert_eq!(
        anonymous
            .call("Orders.refund", json!({"id": 7}))
            .await
            .unwrap_err()
            .code(),
        -32403
    );
}

#[tokio::test]
async fn a_session_belongs_to_the_identity_that_made_it() {
    let server = examples::with_states(Server::builder())
        .env(Environment::PROD)
        .token_validator(Arc::new(Tokens))
        .mcp_stateful("orders")
        .build()
        .expect("valid catalog");
    let url = format!("{}/mcp/orders/v1", tests::serve_url(server).await);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let r = reqwest::Client::new()
        .post(&url)
        .bearer_auth("reader")
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let on = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
        ("accept", "application/json, text/event-stream"),
    ];
    // Another identity with the id finds no session, and cannot end it.
    let (status, _, body) = post(&url, "writer", &on, ping.clone()).await;
    assert_eq!(status, 404, "{body}");
    let gone = reqwest::Client::new()
        .delete(&url)
        .bearer_auth("writer")
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    // Its maker still has it.
    let (status, _, body) = post(&url, "reader", &on, ping).await;
    assert_eq!((status, &body["result"]), (200, &json!({})), "{body}");
}

/// The names of a discovery document's methods (OpenRPC) or items (Postman).
fn listed(doc: &Value, key: &str) -> Vec<String> {
    doc[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn discovery_documents_show_each_caller_what_it_may_call() {
    let server = server();
    let base = tests::serve_url(server.clone()).await;
    let url = format!("{base}/rpc/orders/v1");
    let get = |token: &'static str, path: String| async move {
        let r = reqwest::Client::new()
            .get(path)
            .bearer_auth(token)
            .send()
            .await
            .expect("GET");
        assert_eq!(r.status(), 200);
        r.json::<Value>().await.expect("JSON")
    };
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "rpc.discover"});
    for (token, methods) in [
        ("reader", vec!["Orders.list"]),
        ("writer", vec!["Orders.list", "Orders.refund"]),
        // Asked again: the kept document of the view, not another caller's.
        ("reader", vec!["Orders.list"]),
    ] {
        assert_eq!(
            listed(&get(token, url.clone()).await, "methods"),
            methods,
            "{token}"
        );
        assert_eq!(
            listed(&get(token, format!("{url}/postman")).await, "item"),
            methods,
            "{token}"
        );
        let (_, _, answer) = post(&url, token, &[], discover.clone()).await;
        assert_eq!(listed(&answer["result"], "methods"), methods, "{token}");
    }
    // In process, as the chosen identity; the operator's copy lists everything.
    let reader = server
        .client("orders", 1)
        .identity(Identity::new("reader", ["orders:read"]));
    let doc = reader
        .call("rpc.discover", json!({}))
        .await
        .expect("the document");
    assert_eq!(listed(&doc, "methods"), ["Orders.list"]);
    let whole: Value =
        serde_json::from_slice(&server.openrpc("orders", 1, None).expect("the group")).unwrap();
    assert_eq!(listed(&whole, "methods"), ["Orders.list", "Orders.refund"]);
}

#[tokio::test]
async fn static_tokens_can_carry_a_subject_and_scopes() {
    use mcp_runtime::transport::auth::ApiToken;
    let server = examples::with_states(Server::builder())
        .env(Environment::PROD)
        .api_token(
            ApiToken::new("ci-secret")
                .subject("ci")
                .scopes(["orders:read", "orders:write"]),
        )
        .api_tokens(["plain-secret"])
        .build()
        .expect("valid catalog");
    let url = format!("{}/rpc/orders/v1", tests::serve_url(server).await);
    let refund = json!({"jsonrpc": "2.0", "id": 1, "method": "Orders.refund", "params": {"id": 7}});
    let (status, _, body) = post(&url, "ci-secret", &[], refund.clone()).await;
    assert_eq!(
        (status, body),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": "refunded 7"})
        )
    );
    // A token without scopes lets its holder in, to what needs none.
    let (status, _, body) = post(&url, "plain-secret", &[], refund).await;
    assert_eq!(
        (status, body),
        (
            403,
            forbidden(json!(1), FORBIDDEN_REFUND, json!(["orders:write"]))
        )
    );
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "Orders.list"});
    let (status, _, _) = post(&url, "plain-secret", &[], list.clone()).await;
    assert_eq!(status, 200);
    let (status, _, _) = post(&url, "nope", &[], list).await;
    assert_eq!(status, 403);
}
