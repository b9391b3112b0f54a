//! The JSON-RPC core on the wire: the example server runs in-process on a free port and every
//! rule is checked over real HTTP with the exact response.
//!
//! Exact means: the whole body, either as raw text or parsed and compared with `json!` (key order
//! has no meaning in JSON, so parsed comparisons ignore it). Never "contains".
//!
//! Servers that answer errors are built with an explicit [`Environment`], so the `data` of an
//! error does not depend on the `APP_ENV` of whoever runs the tests.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_runtime::prelude::*;
use mcp_runtime::{Environment, ServerBuilder};
use serde::Serialize;
use serde_json::{Value, json};

use tests::serve;

// ---------------------------------------------------------------------------------------------
// A probe group that exists only in this test binary: it makes notifications observable (a
// counter) and has an `Option` and a defaulted parameter to echo back.
// ---------------------------------------------------------------------------------------------

const PROBE: ApiGroup = ApiGroup::rpc("probe");

/// How many times `Probe.hit` ran on one server.
#[derive(Debug, Default)]
struct Hits {
    n: AtomicUsize,
}

/// Counts one call.
#[rpc_method(name = "Probe.hit", groups = [PROBE])]
fn probe_hit(hits: State<Hits>) -> usize {
    hits.n.fetch_add(1, Ordering::SeqCst) + 1
}

/// How many calls `Probe.hit` got.
#[rpc_method(name = "Probe.count", groups = [PROBE])]
fn probe_count(hits: State<Hits>) -> usize {
    hits.n.load(Ordering::SeqCst)
}

/// What `Probe.echo` received.
#[derive(Debug, Serialize, JsonSchema)]
struct Echo {
    name: Option<String>,
    limit: u32,
}

/// Echoes an optional and a defaulted parameter.
#[rpc_method(name = "Probe.echo", groups = [PROBE])]
fn probe_echo(
    /// Optional: `null` when left out
    name: Option<String>,
    /// Defaults to 10
    #[param(default = 10)]
    limit: u32,
) -> Echo {
    Echo { name, limit }
}

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

const MCP: &str = "/rpc/mcp/v1";
const INTERNAL: &str = "/rpc/internal/v1";
const PROBE_PATH: &str = "/rpc/probe/v1";

/// The example server's builder (what `examples::server()` builds) in `env`, plus the probe
/// counter.
fn catalog(env: Environment) -> ServerBuilder {
    examples::builder().env(env).state(Hits::default())
}

/// A server like `examples::server()`, in production.
fn prod() -> Server {
    catalog(Environment::PROD).build().expect("valid catalog")
}

/// A running server and an HTTP client for it.
struct Peer {
    addr: SocketAddr,
    http: reqwest::Client,
}

/// The answer to one request.
#[derive(Debug)]
struct Reply {
    status: u16,
    content_type: Option<String>,
    body: String,
}

impl Reply {
    /// The body, parsed.
    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", self.body))
    }
}

/// Serves `server` on a free port of this test's runtime.
async fn start(server: Server) -> Peer {
    let addr = serve(server).await;
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("HTTP client");
    Peer { addr, http }
}

impl Peer {
    async fn send(&self, req: reqwest::RequestBuilder) -> Reply {
        let res = req.send().await.expect("HTTP request");
        let status = res.status().as_u16();
        let content_type = res
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .map(|v| v.to_str().expect("ASCII content type").to_owned());
        let body = res.text().await.expect("body");
        Reply {
            status,
            content_type,
            body,
        }
    }

    /// POSTs a raw body with `Content-Type: application/json`.
    async fn post(&self, path: &str, body: impl Into<String>) -> Reply {
        self.post_as(path, Some("application/json"), body).await
    }

    /// POSTs a raw body with this `Content-Type` (or none).
    async fn post_as(
        &self,
        path: &str,
        content_type: Option<&str>,
        body: impl Into<String>,
    ) -> Reply {
        let mut req = self
            .http
            .post(format!("http://{}{path}", self.addr))
            .body(body.into());
        if let Some(ct) = content_type {
            req = req.header(reqwest::header::CONTENT_TYPE, ct);
        }
        self.send(req).await
    }

    async fn get(&self, path: &str) -> Reply {
        self.send(self.http.get(format!("http://{}{path}", self.addr)))
            .await
    }

    /// How many times `Probe.hit` ran.
    async fn hits(&self) -> Value {
        let r = self
            .post(
                PROBE_PATH,
                r#"{"jsonrpc":"2.0","method":"Probe.count","id":0}"#,
            )
            .await;
        assert_eq!(r.status, 200, "{r:?}");
        r.json()["result"].clone()
    }
}

/// Asserts a 200 JSON answer whose body is exactly `expected` (raw text).
#[track_caller]
fn assert_raw(r: &Reply, expected: &str) {
    assert_eq!(
        (r.status, r.content_type.as_deref(), r.body.as_str()),
        (200, Some("application/json"), expected)
    );
}

/// Asserts a JSON answer with `status` whose body is exactly `expected` (parsed).
#[track_caller]
fn assert_json(r: &Reply, status: u16, expected: Value) {
    assert_eq!(
        (r.status, r.content_type.as_deref()),
        (status, Some("application/json")),
        "{r:?}"
    );
    assert_eq!(r.json(), expected, "raw body: {}", r.body);
}

/// Asserts an answer with no body.
#[track_caller]
fn assert_no_content(r: &Reply) {
    assert_eq!((r.status, r.body.as_str()), (204, ""), "{r:?}");
}

/// The error object `{"jsonrpc":"2.0","id":id,"error":{...}}` with production `data`.
fn error(id: Value, code: i32, message: &str, exception: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"error":{
        "code":code,"message":message,"data":{"exception":exception}}})
}

fn invalid_request(id: Value, message: &str) -> Value {
    error(id, -32600, message, "Ufo\\RpcError\\RpcBadRequestException")
}

fn parse_error() -> Value {
    error(
        Value::Null,
        -32700,
        "Invalid json data",
        "Ufo\\RpcError\\RpcJsonParseException",
    )
}

fn violations(method: &str, id: Value, data: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,
        "message":format!("Invalid Data for call method: {method}"),"data":data}})
}

fn not_found(id: Value, method: &str, group: &str) -> Value {
    error(
        id,
        -32601,
        &format!("Method \"{method}\" for version \"v1\" is not found in group \"{group}\""),
        "Ufo\\RpcError\\RpcMethodNotFoundExceptionRpc",
    )
}

const PONG: &str = r#"{"jsonrpc":"2.0","id":1,"result":"pong, x"}"#;

// ---------------------------------------------------------------------------------------------
// Success, ids and params
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn success_answers_exactly_jsonrpc_id_result() {
    let p = start(examples::builder().state(Hits::default()).build().unwrap()).await;
    let r = p
        .post(MCP, r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#)
        .await;
    assert_raw(&r, PONG);
}

#[tokio::test]
async fn string_and_numeric_ids_are_echoed_verbatim() {
    let p = start(prod()).await;
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":"req-7"}"#,
        )
        .await;
    assert_raw(&r, r#"{"jsonrpc":"2.0","id":"req-7","result":"pong, x"}"#);
    let r = p
        .post(MCP, r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":-42}"#)
        .await;
    assert_raw(&r, r#"{"jsonrpc":"2.0","id":-42,"result":"pong, x"}"#);
}

#[tokio::test]
async fn null_id_is_a_request_and_is_answered() {
    let p = start(prod()).await;
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":null}"#,
        )
        .await;
    assert_raw(&r, r#"{"jsonrpc":"2.0","id":null,"result":"pong, x"}"#);
}

#[tokio::test]
async fn named_params_are_matched_by_name() {
    let p = start(prod()).await;
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.ping","params":{"who":"bob"},"id":1}"#,
        )
        .await;
    assert_raw(&r, r#"{"jsonrpc":"2.0","id":1,"result":"pong, bob"}"#);
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.search","params":{"limit":2,"query":"mug"},"id":2}"#,
        )
        .await;
    assert_json(
        &r,
        200,
        json!({"jsonrpc":"2.0","id":2,"result":[{"id":5,"name":"Mug rack"},{"id":1,"name":"Red mug"}]}),
    );
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.get","params":{"id":3},"id":3}"#,
        )
        .await;
    assert_raw(
        &r,
        r#"{"jsonrpc":"2.0","id":3,"result":{"id":3,"name":"Teapot"}}"#,
    );
}

#[tokio::test]
async fn positional_params_map_to_names_in_declaration_order() {
    let p = start(prod()).await;
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.search","params":["mug", 2],"id":1}"#,
        )
        .await;
    assert_json(
        &r,
        200,
        json!({"jsonrpc":"2.0","id":1,"result":[{"id":5,"name":"Mug rack"},{"id":1,"name":"Red mug"}]}),
    );
    // Fewer positions than parameters: the rest take their defaults.
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.search","params":["mug"],"id":2}"#,
        )
        .await;
    assert_json(
        &r,
        200,
        json!({"jsonrpc":"2.0","id":2,"result":[
            {"id":5,"name":"Mug rack"},{"id":1,"name":"Red mug"},{"id":2,"name":"Blue mug"}]}),
    );
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.ping","params":["ann"],"id":3}"#,
        )
        .await;
    assert_raw(&r, r#"{"jsonrpc":"2.0","id":3,"result":"pong, ann"}"#);
}

#[tokio::test]
async fn absent_empty_object_and_empty_array_params_all_mean_none() {
    let p = start(prod()).await;
    for body in [
        r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#,
        r#"{"jsonrpc":"2.0","method":"Catalog.ping","params":{},"id":1}"#,
        r#"{"jsonrpc":"2.0","method":"Catalog.ping","params":[],"id":1}"#,
    ] {
        let r = p.post(MCP, body).await;
        assert_raw(&r, PONG);
    }
}

#[tokio::test]
async fn defaults_fill_left_out_params() {
    let p = start(prod()).await;
    // `limit` defaults to 10, more than the 6 products: every match comes back.
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.search","params":{"query":""},"id":1}"#,
        )
        .await;
    assert_json(
        &r,
        200,
        json!({"jsonrpc":"2.0","id":1,"result":[
            {"id":1,"name":"Red mug"},{"id":2,"name":"Blue mug"},{"id":3,"name":"Teapot"},
            {"id":4,"name":"Espresso cup"},{"id":5,"name":"Mug rack"},{"id":6,"name":"Tea towel"}]}),
    );
    // The default value itself, echoed.
    let r = p
        .post(
            PROBE_PATH,
            r#"{"jsonrpc":"2.0","method":"Probe.echo","params":{"name":"a"},"id":2}"#,
        )
        .await;
    assert_raw(
        &r,
        r#"{"jsonrpc":"2.0","id":2,"result":{"name":"a","limit":10}}"#,
    );
}

#[tokio::test]
async fn option_params_are_null_when_left_out_or_null() {
    let p = start(prod()).await;
    for params in [r#"{}"#, r#"{"name":null}"#, r#"[]"#, r#"[null]"#] {
        let r = p
            .post(
                PROBE_PATH,
                format!(r#"{{"jsonrpc":"2.0","method":"Probe.echo","params":{params},"id":1}}"#),
            )
            .await;
        assert_raw(
            &r,
            r#"{"jsonrpc":"2.0","id":1,"result":{"name":null,"limit":10}}"#,
        );
    }
    let r = p
        .post(
            PROBE_PATH,
            r#"{"jsonrpc":"2.0","method":"Probe.echo","params":["zed", 3],"id":1}"#,
        )
        .await;
    assert_raw(
        &r,
        r#"{"jsonrpc":"2.0","id":1,"result":{"name":"zed","limit":3}}"#,
    );
}

#[tokio::test]
async fn application_error_keeps_its_code_and_names_the_rust_type() {
    let p = start(prod()).await;
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.get","params":{"id":99},"id":1}"#,
        )
        .await;
    assert_raw(
        &r,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32404,"message":"Product 99 not found","data":{"exception":"examples::catalog::CatalogError"}}}"#,
    );
}

#[tokio::test]
async fn recursive_dto_result() {
    let p = start(prod()).await;
    let r = p
        .post(MCP, r#"{"jsonrpc":"2.0","method":"Catalog.tree","id":1}"#)
        .await;
    assert_json(
        &r,
        200,
        json!({"jsonrpc":"2.0","id":1,"result":{"name":"All","children":[
            {"name":"Kitchen","children":[
                {"name":"Mugs","children":[]},
                {"name":"Teapots","children":[]}]},
            {"name":"Textiles","children":[]}]}}),
    );
}

// ---------------------------------------------------------------------------------------------
// Batches and notifications
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn batch_answers_in_request_order_one_per_non_notification() {
    let p = start(prod()).await;
    let r = p
        .post(
            MCP,
            r#"[
                {"jsonrpc":"2.0","method":"Catalog.ping","params":{"who":"c"},"id":"c"},
                {"jsonrpc":"2.0","method":"Catalog.ping"},
                {"jsonrpc":"2.0","method":"Catalog.get","params":[2],"id":1},
                {"jsonrpc":"2.0","method":"Nope.nothing","id":"a"},
                {"jsonrpc":"2.0","method":"Catalog.get","params":{"id":99},"id":0}
            ]"#,
        )
        .await;
    assert_json(
        &r,
        200,
        json!([
            {"jsonrpc":"2.0","id":"c","result":"pong, c"},
            {"jsonrpc":"2.0","id":1,"result":{"id":2,"name":"Blue mug"}},
            not_found(json!("a"), "Nope.nothing", "mcp"),
            error(json!(0), -32404, "Product 99 not found", "examples::catalog::CatalogError"),
        ]),
    );
}

#[tokio::test]
async fn batch_invalid_items_get_invalid_request_with_null_id() {
    let p = start(prod()).await;
    let r = p
        .post(
            MCP,
            r#"[1, "x", {"jsonrpc":"2.0","method":"Catalog.ping","id":7}, {}]"#,
        )
        .await;
    let not_an_object = "Invalid Request: expected a JSON-RPC request object";
    assert_json(
        &r,
        200,
        json!([
            invalid_request(Value::Null, not_an_object),
            invalid_request(Value::Null, not_an_object),
            {"jsonrpc":"2.0","id":7,"result":"pong, x"},
            invalid_request(Value::Null, "Invalid Request: `method` must be a non-empty string"),
        ]),
    );
}

#[tokio::test]
async fn batch_notifications_are_executed_and_get_no_entry() {
    let p = start(prod()).await;
    let r = p
        .post(
            PROBE_PATH,
            r#"[
                {"jsonrpc":"2.0","method":"Probe.hit"},
                {"jsonrpc":"2.0","method":"Probe.echo","id":1},
                {"jsonrpc":"2.0","method":"Probe.hit","params":{}}
            ]"#,
        )
        .await;
    assert_raw(
        &r,
        r#"[{"jsonrpc":"2.0","id":1,"result":{"name":null,"limit":10}}]"#,
    );
    assert_eq!(p.hits().await, json!(2));
}

#[tokio::test]
async fn all_notification_batch_is_204_with_empty_body() {
    let p = start(prod()).await;
    let r = p
        .post(
            PROBE_PATH,
            r#"[{"jsonrpc":"2.0","method":"Probe.hit"},{"jsonrpc":"2.0","method":"Probe.hit"},
                {"jsonrpc":"2.0","method":"Nope.nothing"}]"#,
        )
        .await;
    assert_no_content(&r);
    assert_eq!(p.hits().await, json!(2));
}

#[tokio::test]
async fn single_notification_is_204_with_empty_body_and_runs() {
    let p = start(prod()).await;
    let r = p
        .post(PROBE_PATH, r#"{"jsonrpc":"2.0","method":"Probe.hit"}"#)
        .await;
    assert_no_content(&r);
    assert_eq!(p.hits().await, json!(1));
    // Failing notifications are not answered either.
    for body in [
        r#"{"jsonrpc":"2.0","method":"Nope.nothing"}"#,
        r#"{"jsonrpc":"2.0","method":"Probe.echo","params":{"limit":"x"}}"#,
    ] {
        assert_no_content(&p.post(PROBE_PATH, body).await);
    }
}

#[tokio::test]
async fn empty_batch_is_one_invalid_request_object_not_an_array() {
    let p = start(prod()).await;
    let r = p.post(MCP, "[]").await;
    assert_raw(
        &r,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: empty batch","data":{"exception":"Ufo\\RpcError\\RpcBadRequestException"}}}"#,
    );
    let r = p.post(MCP, "  [ ]  ").await;
    assert_json(
        &r,
        200,
        invalid_request(Value::Null, "Invalid Request: empty batch"),
    );
}

#[tokio::test]
async fn parse_error_is_http_500_with_null_id() {
    let p = start(prod()).await;
    for body in [
        r#"{"jsonrpc":"#,
        "",
        "   ",
        r#"[{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#,
        r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1} trailing"#,
    ] {
        let r = p.post(MCP, body).await;
        assert_eq!(
            (r.status, r.content_type.as_deref(), r.body.as_str()),
            (
                500,
                Some("application/json"),
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Invalid json data","data":{"exception":"Ufo\\RpcError\\RpcJsonParseException"}}}"#
            ),
            "body {body:?}"
        );
        assert_eq!(r.json(), parse_error());
    }
}

// ---------------------------------------------------------------------------------------------
// Envelope rules
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn jsonrpc_other_than_2_0_is_invalid_request() {
    let p = start(prod()).await;
    for version in [r#""3.0""#, r#""1.0""#, r#""2""#, "2.0", "null"] {
        let r = p
            .post(
                MCP,
                format!(r#"{{"jsonrpc":{version},"method":"Catalog.ping","id":1}}"#),
            )
            .await;
        assert_json(
            &r,
            200,
            invalid_request(json!(1), "Invalid Request: `jsonrpc` must be \"2.0\""),
        );
    }
}

#[tokio::test]
async fn jsonrpc_2_0_written_with_an_escape_is_accepted() {
    let p = start(prod()).await;
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2\u002e0","method":"Catalog.ping","id":1}"#,
        )
        .await;
    assert_raw(&r, PONG);
}

#[tokio::test]
async fn missing_jsonrpc_is_accepted() {
    let p = start(prod()).await;
    let r = p.post(MCP, r#"{"method":"Catalog.ping","id":1}"#).await;
    assert_raw(&r, PONG);
}

#[tokio::test]
async fn method_missing_blank_or_not_a_string_is_invalid_request() {
    let p = start(prod()).await;
    for method in [
        None,
        Some(r#""""#),
        Some(r#""   ""#),
        Some("5"),
        Some("null"),
        Some(r#"["Catalog.ping"]"#),
    ] {
        let body = match method {
            None => r#"{"jsonrpc":"2.0","id":1}"#.to_owned(),
            Some(m) => format!(r#"{{"jsonrpc":"2.0","method":{m},"id":1}}"#),
        };
        let r = p.post(MCP, body).await;
        assert_json(
            &r,
            200,
            invalid_request(
                json!(1),
                "Invalid Request: `method` must be a non-empty string",
            ),
        );
    }
}

#[tokio::test]
async fn id_that_is_not_a_string_or_number_is_invalid_request_with_null_id() {
    let p = start(prod()).await;
    for id in [r#"{"a":1}"#, "[1]", "true"] {
        let r = p
            .post(
                MCP,
                format!(r#"{{"jsonrpc":"2.0","method":"Catalog.ping","id":{id}}}"#),
            )
            .await;
        assert_json(
            &r,
            200,
            invalid_request(
                Value::Null,
                "Invalid Request: `id` must be a string or a number",
            ),
        );
    }
}

#[tokio::test]
async fn params_that_are_not_structured_are_invalid_request() {
    let p = start(prod()).await;
    for params in [r#""who""#, "5", "true"] {
        let r = p
            .post(
                MCP,
                format!(r#"{{"jsonrpc":"2.0","method":"Catalog.ping","params":{params},"id":1}}"#),
            )
            .await;
        assert_json(
            &r,
            200,
            invalid_request(
                json!(1),
                "Invalid Request: `params` must be an object or an array",
            ),
        );
    }
}

#[tokio::test]
async fn body_that_is_json_but_not_an_object_is_invalid_request() {
    let p = start(prod()).await;
    for body in [r#""hello""#, "5", "null"] {
        let r = p.post(MCP, body).await;
        assert_json(
            &r,
            200,
            invalid_request(
                Value::Null,
                "Invalid Request: expected a JSON-RPC request object",
            ),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn unknown_method_is_method_not_found() {
    let p = start(prod()).await;
    let r = p
        .post(MCP, r#"{"jsonrpc":"2.0","method":"Catalog.nope","id":1}"#)
        .await;
    assert_raw(
        &r,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method \"Catalog.nope\" for version \"v1\" is not found in group \"mcp\"","data":{"exception":"Ufo\\RpcError\\RpcMethodNotFoundExceptionRpc"}}}"#,
    );
}

#[tokio::test]
async fn method_of_another_group_is_not_found_on_this_endpoint() {
    let p = start(prod()).await;
    let r = p
        .post(
            INTERNAL,
            r#"{"jsonrpc":"2.0","method":"Catalog.tree","id":1}"#,
        )
        .await;
    assert_json(&r, 200, not_found(json!(1), "Catalog.tree", "internal"));
    // ...while a method of both groups is served on both.
    for path in [MCP, INTERNAL] {
        let r = p
            .post(
                path,
                r#"{"jsonrpc":"2.0","method":"Catalog.get","params":{"id":1},"id":1}"#,
            )
            .await;
        assert_raw(
            &r,
            r#"{"jsonrpc":"2.0","id":1,"result":{"id":1,"name":"Red mug"}}"#,
        );
    }
}

#[tokio::test]
async fn unknown_group_or_version_path_is_404() {
    let p = start(prod()).await;
    for path in [
        "/rpc/nope/v1",
        "/rpc/mcp/v2",
        "/rpc/mcp/v0",
        "/rpc/mcp",
        "/rpc",
        "/rpc/mcp/1",
    ] {
        let r = p
            .post(path, r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#)
            .await;
        assert_eq!(r.status, 404, "POST {path}: {r:?}");
        let r = p.get(path).await;
        assert_eq!(r.status, 404, "GET {path}: {r:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Parameter errors
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn param_errors_are_one_invalid_params_keyed_by_parameter() {
    let p = start(prod()).await;
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.search","params":{"limit":"ten","colour":"red"},"id":1}"#,
        )
        .await;
    assert_json(
        &r,
        200,
        violations(
            "Catalog.search",
            json!(1),
            json!({
                "query":["Required parameter \"query\" not passed"],
                "limit":["Parameter \"limit\" must be of type integer, string given"],
                "colour":["Unknown parameter \"colour\""],
            }),
        ),
    );
    // Positional params go through the same checks, by name.
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.search","params":[5],"id":2}"#,
        )
        .await;
    assert_json(
        &r,
        200,
        violations(
            "Catalog.search",
            json!(2),
            json!({"query":["Parameter \"query\" must be of type string, integer given"]}),
        ),
    );
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.search","params":[],"id":3}"#,
        )
        .await;
    assert_json(
        &r,
        200,
        violations(
            "Catalog.search",
            json!(3),
            json!({"query":["Required parameter \"query\" not passed"]}),
        ),
    );
}

/// However many parameters are wrong, the error names 20 and counts the rest exactly.
#[tokio::test]
async fn param_errors_are_capped_at_twenty_and_the_rest_counted() {
    let p = start(prod()).await;
    let mut params = serde_json::Map::new();
    params.insert("query".into(), json!("mug"));
    for i in 0..1000 {
        params.insert(format!("x{i:04}"), json!(i));
    }
    let body = json!({"jsonrpc":"2.0","method":"Catalog.search","params":params,"id":1});
    let r = p.post(MCP, &body.to_string()).await;
    let mut data = serde_json::Map::new();
    for i in 0..20 {
        data.insert(
            format!("x{i:04}"),
            json!([format!("Unknown parameter \"x{i:04}\"")]),
        );
    }
    data.insert("...".into(), json!(["... and 980 more"]));
    assert_json(
        &r,
        200,
        violations("Catalog.search", json!(1), Value::Object(data)),
    );
    assert!(r.body.len() < 2048, "{} bytes", r.body.len());
}

#[tokio::test]
async fn too_many_positional_params_is_invalid_params() {
    let p = start(prod()).await;
    let r = p
        .post(
            MCP,
            r#"{"jsonrpc":"2.0","method":"Catalog.search","params":["mug", 2, true],"id":1}"#,
        )
        .await;
    assert_raw(
        &r,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Passed (3) parameters and expected (2)","data":{"exception":"Ufo\\RpcError\\RpcBadParamException"}}}"#,
    );
}

#[tokio::test]
async fn out_of_range_numbers_for_a_u32_are_invalid_params() {
    let p = start(prod()).await;
    let call = |limit: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"Catalog.search","params":{{"query":"mug","limit":{limit}}},"id":1}}"#
        )
    };
    let r = p.post(MCP, call("-1")).await;
    assert_json(
        &r,
        200,
        violations(
            "Catalog.search",
            json!(1),
            json!({"limit":["This value should be greater than or equal to 0."]}),
        ),
    );
    let r = p.post(MCP, call("1e300")).await;
    assert_json(
        &r,
        200,
        violations(
            "Catalog.search",
            json!(1),
            json!({"limit":["This value should be less than or equal to 4294967295."]}),
        ),
    );
    let r = p.post(MCP, call("4294967296")).await;
    assert_json(
        &r,
        200,
        violations(
            "Catalog.search",
            json!(1),
            json!({"limit":["This value should be less than or equal to 4294967295."]}),
        ),
    );
}

// ---------------------------------------------------------------------------------------------
// Services, panics, environments
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn service_method_with_custom_concat_is_served() {
    let p = start(prod()).await;
    let r = p
        .post(INTERNAL, r#"{"jsonrpc":"2.0","method":"Bad:ping","id":1}"#)
        .await;
    assert_raw(&r, r#"{"jsonrpc":"2.0","id":1,"result":"PONG"}"#);
}

#[tokio::test]
async fn panic_is_internal_error_and_the_server_keeps_serving() {
    let p = start(prod()).await;
    let panic = r#"{"jsonrpc":"2.0","method":"Chaos.panic","id":1}"#;
    let expected = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal JSON-RPC error","data":{"exception":"panic"}}}"#;
    assert_raw(&p.post(INTERNAL, panic).await, expected);
    // The next request is served, and so is the one after another panic.
    assert_raw(
        &p.post(INTERNAL, r#"{"jsonrpc":"2.0","method":"Bad:ping","id":1}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":1,"result":"PONG"}"#,
    );
    assert_raw(&p.post(INTERNAL, panic).await, expected);
    // In a batch, a panic does not sink its siblings.
    let r = p
        .post(
            INTERNAL,
            r#"[{"jsonrpc":"2.0","method":"Chaos.panic","id":1},{"jsonrpc":"2.0","method":"Bad:ping","id":2}]"#,
        )
        .await;
    assert_raw(
        &r,
        r#"[{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal JSON-RPC error","data":{"exception":"panic"}}},{"jsonrpc":"2.0","id":2,"result":"PONG"}]"#,
    );
    assert_raw(
        &p.post(MCP, r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#)
            .await,
        PONG,
    );
}

#[tokio::test]
async fn prod_panic_data_has_no_message_file_line_or_backtrace() {
    let p = start(prod()).await;
    let r = p
        .post(
            INTERNAL,
            r#"{"jsonrpc":"2.0","method":"Chaos.panic","id":1}"#,
        )
        .await;
    assert_json(
        &r,
        200,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal JSON-RPC error",
            "data":{"exception":"panic"}}}),
    );
}

#[tokio::test]
async fn dev_panic_data_tells_the_panic_message_and_location() {
    let p = start(catalog(Environment::DEV).build().unwrap()).await;
    let r = p
        .post(
            INTERNAL,
            r#"{"jsonrpc":"2.0","method":"Chaos.panic","id":1}"#,
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let mut v = r.json();
    let data = v["error"]["data"].as_object_mut().expect("data object");
    // Where and how: present, values vary with the build.
    for key in ["file", "line"] {
        assert!(
            data.remove(key).is_some(),
            "no `{key}` in dev data: {}",
            r.body
        );
    }
    // The panic site's stack: a dev server always shows it, whichever server was built first.
    let trace = data.remove("trace");
    assert!(
        trace
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|t| !t.is_empty()),
        "no `trace` in dev data: {}",
        r.body
    );
    assert_eq!(
        v,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,
            "message":"Method panicked: chaos: this method always panics",
            "data":{"exception":"panic","message":"Method panicked: chaos: this method always panics",
                "code":-32603,"previous":null}}})
    );
}

#[tokio::test]
async fn dev_panic_location_is_the_panic_site() {
    let p = start(catalog(Environment::DEV).build().unwrap()).await;
    let r = p
        .post(
            INTERNAL,
            r#"{"jsonrpc":"2.0","method":"Chaos.panic","id":1}"#,
        )
        .await;
    let data = &r.json()["error"]["data"];
    assert_eq!(
        (&data["file"], &data["line"]),
        (&json!("examples/src/internal.rs"), &json!(24)),
        "the location of `panic!` in Chaos.panic"
    );
}

// ---------------------------------------------------------------------------------------------
// HTTP limits
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn non_json_content_type_is_415() {
    let p = start(prod()).await;
    let body = r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#;
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "text/json",
    ] {
        let r = p.post_as(MCP, Some(ct), body).await;
        assert_eq!(
            (r.status, r.body.as_str()),
            (415, "Content-Type must be application/json"),
            "{ct}"
        );
    }
    // JSON with parameters and `+json` types are accepted.
    for ct in [
        Some("application/json; charset=utf-8"),
        Some("application/json-patch+json"),
    ] {
        assert_raw(&p.post_as(MCP, ct, body).await, PONG);
    }
    // No Content-Type at all is refused: a cross-site form or `fetch` can send a body without
    // one and without a CORS preflight.
    let r = p.post_as(MCP, None, body).await;
    assert_eq!(
        (r.status, r.body.as_str()),
        (415, "Content-Type must be application/json")
    );
}

#[tokio::test]
async fn body_over_the_limit_is_413() {
    let p = start(catalog(Environment::PROD).body_bytes(1024).build().unwrap()).await;
    let call = |pad: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"Catalog.ping","params":{{"who":"x"}},"id":1{}}}"#,
            " ".repeat(pad)
        )
    };
    let fits = call(1024 - call(0).len());
    assert_eq!(fits.len(), 1024);
    assert_raw(&p.post(MCP, fits).await, PONG);
    let r = p.post(MCP, call(1025 - call(0).len())).await;
    assert_eq!(r.status, 413, "{r:?}");
    let r = p.post(MCP, call(100_000)).await;
    assert_eq!(r.status, 413, "{r:?}");
}

#[tokio::test]
async fn batch_over_max_batch_is_one_invalid_request() {
    let p = start(catalog(Environment::PROD).batch_items(3).build().unwrap()).await;
    let batch = |n: usize| {
        let items: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"jsonrpc":"2.0","method":"Catalog.ping","id":{i}}}"#))
            .collect();
        format!("[{}]", items.join(","))
    };
    let r = p.post(MCP, batch(3)).await;
    assert_raw(
        &r,
        r#"[{"jsonrpc":"2.0","id":0,"result":"pong, x"},{"jsonrpc":"2.0","id":1,"result":"pong, x"},{"jsonrpc":"2.0","id":2,"result":"pong, x"}]"#,
    );
    let r = p.post(MCP, batch(4)).await;
    assert_json(
        &r,
        200,
        invalid_request(
            Value::Null,
            "Invalid Request: batch too large (4 items, at most 3)",
        ),
    );
}

#[tokio::test]
async fn default_max_batch_is_100() {
    let p = start(prod()).await;
    let batch = |n: usize| {
        let items: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"jsonrpc":"2.0","method":"Catalog.ping","id":{i}}}"#))
            .collect();
        format!("[{}]", items.join(","))
    };
    let r = p.post(MCP, batch(100)).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json().as_array().map(Vec::len), Some(100));
    let r = p.post(MCP, batch(1001)).await;
    assert_json(
        &r,
        200,
        invalid_request(
            Value::Null,
            "Invalid Request: batch too large (1001 items, at most 100)",
        ),
    );
}

// ---------------------------------------------------------------------------------------------
// OpenRPC
// ---------------------------------------------------------------------------------------------

async fn openrpc(path: &str) -> Value {
    let p = start(examples::builder().state(Hits::default()).build().unwrap()).await;
    let r = p.get(path).await;
    assert_eq!(
        (r.status, r.content_type.as_deref()),
        (200, Some("application/json")),
        "{r:?}"
    );
    r.json()
}

fn method<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["methods"]
        .as_array()
        .expect("methods")
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no method {name}"))
}

#[tokio::test]
async fn openrpc_document_on_get() {
    let doc = openrpc(MCP).await;
    assert_eq!(doc["openrpc"], json!("1.3.2"));
    assert_eq!(
        doc["info"],
        json!({"title":"catalog","version":"v1","x-group":"mcp","x-versions":["v1"]})
    );
    // Absolute under the request's Host (the test server's loopback address and port).
    let url = doc["servers"][0]["url"].as_str().unwrap_or_default();
    let port = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/rpc/mcp/v1"));
    assert!(port.is_some_and(|p| p.parse::<u16>().is_ok()), "{url}");
    assert_eq!(doc["servers"], json!([{"name":"mcp","url":url}]));
    let names: Vec<&str> = doc["methods"]
        .as_array()
        .expect("methods")
        .iter()
        .map(|m| m["name"].as_str().expect("name"))
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "methods are sorted by name");
    assert_eq!(
        names,
        [
            "Catalog.get",
            "Catalog.ping",
            "Catalog.pitch",
            "Catalog.search",
            "Catalog.tree",
            "Jobs.once",
            "Jobs.run",
            "Mail.send",
            "Orders.pay",
            "Stats.hits"
        ]
    );
    // Another group has its own document with its own methods.
    let doc = openrpc(INTERNAL).await;
    let names: Vec<&str> = doc["methods"]
        .as_array()
        .expect("methods")
        .iter()
        .map(|m| m["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "Bad:ping",
            "Catalog.get",
            "Catalog.search",
            "Chaos.panic",
            "Events.counts"
        ]
    );
}

#[tokio::test]
async fn openrpc_ping_method_object_is_exact() {
    let doc = openrpc(MCP).await;
    assert_eq!(
        method(&doc, "Catalog.ping"),
        &json!({
            "name":"Catalog.ping",
            "summary":"Ping.",
            "description":"Ping.",
            "tags":[{"name":"Catalog"}],
            "params":[{
                "name":"who",
                "description":"Who is pinging",
                "required":false,
                "schema":{"type":"string","description":"Who is pinging","default":"x"}
            }],
            "result":{"name":"result","schema":{"type":"string"}},
            "paramStructure":"either"
        })
    );
}

#[tokio::test]
async fn openrpc_search_params_show_required_and_default() {
    let doc = openrpc(MCP).await;
    assert_eq!(
        method(&doc, "Catalog.search")["params"],
        json!([
            {"name":"query","description":"Text to look for in product names","required":true,
                "schema":{"type":"string","description":"Text to look for in product names"}},
            {"name":"limit","description":"How many products to return at most","required":false,
                "schema":{"type":"integer","minimum":0,"maximum":4294967295u32,
                    "description":"How many products to return at most","default":10}}
        ])
    );
}

#[tokio::test]
async fn openrpc_recursive_result_refs_a_self_referencing_component() {
    let doc = openrpc(MCP).await;
    assert_eq!(
        method(&doc, "Catalog.tree")["result"],
        json!({"name":"result","schema":{"$ref":"#/components/schemas/Category"}})
    );
    assert_eq!(
        doc["components"]["schemas"]["Category"],
        json!({
            "type":"object",
            "description":"A category of the catalog tree, with its subcategories.",
            "properties":{
                "name":{"type":"string","description":"The category name."},
                "children":{"type":"array","items":{"$ref":"#/components/schemas/Category"},
                    "description":"Subcategories."}
            },
            "required":["name","children"]
        })
    );
    // No `$defs` are left behind anywhere: every reference points into `components`.
    let text = doc.to_string();
    assert!(!text.contains("$defs"), "{text}");
}

/// The keys the OpenRPC 1.3.2 meta-schema allows in a Content Descriptor (plus `x-*`).
const CONTENT_DESCRIPTOR_KEYS: &[&str] = &[
    "name",
    "summary",
    "description",
    "required",
    "schema",
    "deprecated",
];

#[tokio::test]
async fn openrpc_content_descriptors_have_only_spec_keys() {
    for path in [MCP, INTERNAL] {
        let doc = openrpc(path).await;
        for m in doc["methods"].as_array().expect("methods") {
            let descriptors = m["params"]
                .as_array()
                .expect("params")
                .iter()
                .chain([&m["result"]]);
            for d in descriptors {
                for key in d.as_object().expect("descriptor").keys() {
                    assert!(
                        CONTENT_DESCRIPTOR_KEYS.contains(&key.as_str()) || key.starts_with("x-"),
                        "{}: content descriptor key `{key}` is not allowed: {d}",
                        m["name"]
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn an_unknown_group_or_version_names_the_endpoints_there_are() {
    let p = start(prod()).await;
    let body = r#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#;
    for path in ["/rpc/nope/v1", "/rpc/mcp/v9", "/rpc/mcp"] {
        let r = p.post(path, body).await;
        assert_eq!(
            (r.status, r.content_type.as_deref(), r.json()),
            (
                404,
                Some("application/json"),
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32601,
                    "message": "No JSON-RPC endpoint at this path; the endpoints are /rpc/admin/v1, /rpc/conformance/v1, /rpc/internal/v1, /rpc/mcp/v1, /rpc/probe/v1"}})
            ),
            "{path}"
        );
    }
    let r = p.get("/mcp/internal/v1").await;
    assert_eq!(
        (r.status, r.json()),
        (
            404,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32601,
                "message": "No MCP endpoint at this path; the endpoints are /mcp/admin/v1, /mcp/conformance/v1, /mcp/mcp/v1"}})
        )
    );
    // Outside the prefixes the application's own answers stand (here: axum's empty 404).
    let r = p.get("/elsewhere").await;
    assert_eq!((r.status, r.body.as_str()), (404, ""));
}

#[tokio::test]
async fn an_in_process_client_error_keeps_its_violations() {
    let client = prod().client("mcp", 1);
    let e = client
        .call(
            "Mail.send",
            json!({"email": "nope", "subject": "", "text": "0123456789"}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), -32602);
    let seen: Vec<(&str, &str, &str)> = e
        .violation_list()
        .expect("the violations")
        .iter()
        .map(|v| (v.key.as_str(), v.pointer.as_str(), v.message.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (
                "email",
                "/email",
                "This value is not a valid email address."
            ),
            ("subject", "/subject", "This value should not be blank.")
        ]
    );
    // Rendered again, it is the wire's error.
    assert_eq!(
        e.to_wire(&Environment::PROD)["data"],
        json!({"email": ["This value is not a valid email address."],
            "subject": ["This value should not be blank."]})
    );
}
