//! Discovery documents on the wire: `rpc.discover` (single, in a batch, in process), `GET
//! ?info` and `?unroll`, the Postman collection (HTTP and `Server::postman`, what `catalog postman` prints),
//! and the URLs of every document when the router is nested under a prefix.
//!
//! Exact means: the whole body, as raw text or parsed and compared with `json!`.

use mcp_runtime::prelude::*;
use serde_json::{Value, json};

use tests::{example_prod, serve_url};

/// A JSON-RPC group that exists only in this test binary, for an exact Postman collection.
const DISC: ApiGroup = ApiGroup::rpc("disc");

/// Adds two numbers.
///
/// Returns their sum.
#[rpc_method(name = "Disc.add", groups = [DISC])]
fn disc_add(
    /// The first
    a: i64,
    /// The second
    #[param(default = 2)]
    b: i64,
) -> i64 {
    a + b
}

/// Says hello.
#[rpc_method(name = "Disc.hello", groups = [DISC])]
fn disc_hello(
    /// Where to send it
    #[param(email)]
    to: String,
    /// Who is greeted
    name: Option<String>,
) -> String {
    format!("hello {}, {to}", name.unwrap_or_default())
}

struct Reply {
    status: u16,
    content_type: Option<String>,
    language: Option<String>,
    www_authenticate: Option<String>,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

async fn send(req: reqwest::RequestBuilder) -> Reply {
    let r = req.send().await.unwrap();
    let header = |n: &str| r.headers().get(n).map(|v| v.to_str().unwrap().to_owned());
    Reply {
        status: r.status().as_u16(),
        content_type: header("content-type"),
        language: header("content-language"),
        www_authenticate: header("www-authenticate"),
        body: r.text().await.unwrap(),
    }
}

fn get(url: String) -> reqwest::RequestBuilder {
    reqwest::Client::new().get(url)
}

fn post(url: String, body: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_owned())
}

const DISCOVER: &str = r#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#;

#[tokio::test]
async fn rpc_discover_answers_the_document_get_serves() {
    let base = serve_url(example_prod().build().unwrap()).await;
    let doc = send(get(format!("{base}/rpc/mcp/v1"))).await;
    assert_eq!(doc.status, 200);
    let r = send(post(format!("{base}/rpc/mcp/v1"), DISCOVER)).await;
    assert_eq!(
        (r.status, r.content_type.as_deref()),
        (200, Some("application/json"))
    );
    assert_eq!(
        r.body,
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#, doc.body)
    );
    // Implied, so not listed among the methods.
    let methods = doc.json()["methods"].clone();
    assert!(
        methods
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["name"] != "rpc.discover"),
        "{methods}"
    );
    // Absolute, under the origin of the checked Host: the OpenRPC meta-schema wants a URI.
    assert_eq!(
        doc.json()["servers"],
        json!([{"name": "mcp", "url": format!("{base}/rpc/mcp/v1")}])
    );
}

#[tokio::test]
async fn rpc_discover_in_a_batch_and_as_a_notification() {
    let base = serve_url(example_prod().build().unwrap()).await;
    let url = format!("{base}/rpc/disc/v1");
    let discover = send(post(url.clone(), DISCOVER)).await.body;
    let add = r#"{"jsonrpc":"2.0","method":"Disc.add","params":{"a":1},"id":2}"#;
    let added = send(post(url.clone(), add)).await.body;
    assert_eq!(added, r#"{"jsonrpc":"2.0","id":2,"result":3}"#);
    let batch = format!(
        r#"[{DISCOVER},{add},{{"jsonrpc":"2.0","method":"rpc.discover"}},{{"jsonrpc":"2.0","method":"rpc.discover","params":[],"id":"x"}}]"#
    );
    let r = send(post(url.clone(), &batch)).await;
    assert_eq!(r.status, 200);
    let with_x = discover.replacen(r#""id":1"#, r#""id":"x""#, 1);
    assert_eq!(r.body, format!("[{discover},{added},{with_x}]"));
    // A notification alone: nothing.
    let r = send(post(url, r#"{"jsonrpc":"2.0","method":"rpc.discover"}"#)).await;
    assert_eq!((r.status, r.body.as_str()), (204, ""));
}

#[tokio::test]
async fn rpc_discover_in_process() {
    let server = example_prod().build().unwrap();
    let doc: Value = serde_json::from_slice(&server.openrpc("disc", 1, None).unwrap()).unwrap();
    let got = server
        .client("disc", 1)
        .call("rpc.discover", Value::Null)
        .await
        .unwrap();
    assert_eq!(got, doc);
}

#[tokio::test]
async fn info_is_the_head_of_the_document() {
    let base = serve_url(example_prod().build().unwrap()).await;
    for query in ["info", "info=1", "x=1&info"] {
        let r = send(get(format!("{base}/rpc/mcp/v1?{query}"))).await;
        assert_eq!(
            (r.status, r.content_type.as_deref(), r.language.as_deref()),
            (200, Some("application/json"), Some("en"))
        );
        assert_eq!(
            r.body,
            format!(
                r#"{{"openrpc":"1.3.2","info":{{"title":"catalog","version":"v1","x-group":"mcp","x-versions":["v1"]}},"servers":[{{"name":"mcp","url":"{base}/rpc/mcp/v1"}}]}}"#
            ),
            "?{query}"
        );
    }
    // Any other query is ignored, as before.
    let full = send(get(format!("{base}/rpc/mcp/v1"))).await.body;
    assert_eq!(send(get(format!("{base}/rpc/mcp/v1?x=1"))).await.body, full);
    assert_eq!(
        send(get(format!("{base}/rpc/mcp/v1?infos"))).await.body,
        full
    );
}

/// `schema` with each `$ref` to `name` replaced by `with`.
fn replace_ref(schema: &Value, name: &str, with: &Value) -> Value {
    match schema {
        Value::Object(o)
            if o.get("$ref") == Some(&json!(format!("#/components/schemas/{name}"))) =>
        {
            with.clone()
        }
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), replace_ref(v, name, with)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| replace_ref(v, name, with)).collect()),
        other => other.clone(),
    }
}

#[tokio::test]
async fn unroll_writes_recursive_schemas_out_to_the_depth_asked() {
    let base = serve_url(example_prod().build().unwrap()).await;
    let plain = send(get(format!("{base}/rpc/mcp/v1"))).await.json();
    let category = plain["components"]["schemas"]["Category"].clone();
    // A level of the tree: the component with its recursive reference replaced.
    let level = |inner: &Value| replace_ref(&category, "Category", inner);
    let below = json!({"x-unrolled": "Category"});
    for (query, depth) in [("unroll", 3), ("unroll=1", 1), ("x=1&unroll=5", 5)] {
        let r = send(get(format!("{base}/rpc/mcp/v1?{query}"))).await;
        assert_eq!(r.status, 200, "?{query}");
        let doc = r.json();
        let mut tree = below.clone();
        for _ in 0..depth {
            tree = level(&tree);
        }
        // Only the recursive component is gone, and only the method using it changed.
        let mut expected = plain.clone();
        let schemas = expected["components"]["schemas"].as_object_mut().unwrap();
        schemas.remove("Category");
        for m in expected["methods"].as_array_mut().unwrap() {
            if m["name"] == "Catalog.tree" {
                m["result"]["schema"] = tree.clone();
            }
        }
        assert_eq!(doc, expected, "?{query}");
    }
    // With `info`, the head alone, as without it.
    let info = send(get(format!("{base}/rpc/mcp/v1?info"))).await.body;
    assert_eq!(
        send(get(format!("{base}/rpc/mcp/v1?unroll&info")))
            .await
            .body,
        info
    );
    for bad in ["0", "6", "x", "-1"] {
        let r = send(get(format!("{base}/rpc/mcp/v1?unroll={bad}"))).await;
        assert_eq!(
            (r.status, r.body.as_str()),
            (
                400,
                format!(
                    r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32602,"message":"unroll must be a depth from 1 to 5, got \"{bad}\""}}}}"#
                )
                .as_str()
            ),
            "?unroll={bad}"
        );
    }
    // A long value (or one past usize) is echoed cut to 128 characters, as every client input is.
    let long = "9".repeat(10_000);
    let r = send(get(format!("{base}/rpc/mcp/v1?unroll={long}"))).await;
    let shown = format!("{}…", &long[..128]);
    assert_eq!(
        (r.status, r.body),
        (
            400,
            format!(
                r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32602,"message":"unroll must be a depth from 1 to 5, got \"{shown}\""}}}}"#
            )
        )
    );
}

/// The collection of group `disc` with `base` as its `baseUrl`.
fn disc_collection(base: &str) -> Value {
    let item = |name: &str, raw: &str, description: &str| {
        json!({
            "name": name,
            "request": {
                "method": "POST",
                "header": [{"key": "Content-Type", "value": "application/json"}],
                "body": {"mode": "raw", "raw": raw, "options": {"raw": {"language": "json"}}},
                "url": {"raw": "{{baseUrl}}/rpc/disc/v1", "host": ["{{baseUrl}}"], "path": ["rpc", "disc", "v1"]},
                "description": description,
            }
        })
    };
    json!({
        "info": {
            "name": "catalog disc v1",
            "description": "JSON-RPC 2.0 methods of group `disc` v1 (OpenRPC: GET {{baseUrl}}/rpc/disc/v1).",
            "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json",
        },
        "item": [
            item(
                "Disc.add",
                "{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"Disc.add\",\n  \"params\": {\n    \"a\": 0,\n    \"b\": 2\n  },\n  \"id\": 1\n}",
                "Adds two numbers.\n\nReturns their sum.",
            ),
            item(
                "Disc.hello",
                "{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"Disc.hello\",\n  \"params\": {\n    \"to\": \"user@example.com\",\n    \"name\": \"string\"\n  },\n  \"id\": 1\n}",
                "Says hello.",
            ),
        ],
        "variable": [{"key": "baseUrl", "value": base, "type": "string"}],
    })
}

#[tokio::test]
async fn postman_collection_over_http_and_as_the_cli_prints_it() {
    let server = example_prod().build().unwrap();
    let printed = server
        .postman("disc", 1, None, Some("http://127.0.0.1:8080"))
        .unwrap();
    let base = serve_url(server.clone()).await;
    let r = send(get(format!("{base}/rpc/disc/v1/postman"))).await;
    assert_eq!(
        (r.status, r.content_type.as_deref(), r.language.as_deref()),
        (200, Some("application/json"), Some("en"))
    );
    assert_eq!(r.json(), disc_collection(&base));
    // `catalog postman --group disc` prints the same document, at its own base URL.
    let printed: Value = serde_json::from_slice(&printed).unwrap();
    assert_eq!(printed, disc_collection("http://127.0.0.1:8080"));
    assert_eq!(
        serde_json::from_slice::<Value>(&server.postman("disc", 1, None, None).unwrap()).unwrap(),
        printed
    );
    assert_eq!(server.postman("nope", 1, None, None), None);
}

#[tokio::test]
async fn a_protected_group_protects_its_collection_and_names_its_auth() {
    let base = serve_url(example_prod().api_tokens(["s3cret"]).build().unwrap()).await;
    let url = format!("{base}/rpc/admin/v1/postman");
    assert_eq!(send(get(url.clone())).await.status, 401);
    assert_eq!(send(get(url.clone()).bearer_auth("bad")).await.status, 403);
    let doc = send(get(url).bearer_auth("s3cret")).await.json();
    assert_eq!(
        (&doc["auth"], &doc["variable"]),
        (
            &json!({"type": "bearer", "bearer": [{"key": "token", "value": "{{token}}", "type": "string"}]}),
            &json!([{"key": "baseUrl", "value": base, "type": "string"}, {"key": "token", "value": "", "type": "string"}])
        )
    );
    let names: Vec<&str> = doc["item"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    // `Admin.audit` needs a scope a static token does not grant: it is not shown to this
    // caller (who would be refused it), as MCP lists do not show it.
    assert_eq!(names, ["Admin.reindex"]);
    // A custom token header: an API key in that header (header names are kept lower-case).
    let server = example_prod()
        .api_tokens(["s3cret"])
        .token_header("Ufo-RPC-Token")
        .build()
        .unwrap();
    let doc: Value =
        serde_json::from_slice(&server.postman("admin", 1, None, Some("http://h")).unwrap())
            .unwrap();
    assert_eq!(
        doc["auth"],
        json!({"type": "apikey", "apikey": [
            {"key": "key", "value": "ufo-rpc-token", "type": "string"},
            {"key": "value", "value": "{{token}}", "type": "string"},
            {"key": "in", "value": "header", "type": "string"}]})
    );
}

/// `server.router()` nested under `/api` in an app of the test's own, on a loopback port.
async fn nested(server: Server) -> String {
    let app = axum::Router::new().nest("/api", server.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

#[tokio::test]
async fn under_a_prefix_every_url_has_it() {
    let server = example_prod()
        .api_tokens(["s3cret"])
        .authorization_servers(["https://auth.example.com"], &["admin"])
        .build()
        .unwrap();
    let base = nested(server).await;
    // OpenRPC: GET, ?info and rpc.discover.
    let doc = send(get(format!("{base}/api/rpc/mcp/v1"))).await;
    assert_eq!(
        doc.json()["servers"],
        json!([{"name": "mcp", "url": format!("{base}/api/rpc/mcp/v1")}])
    );
    let info = send(get(format!("{base}/api/rpc/mcp/v1?info"))).await;
    assert_eq!(
        info.body,
        format!(
            r#"{{"openrpc":"1.3.2","info":{{"title":"catalog","version":"v1","x-group":"mcp","x-versions":["v1"]}},"servers":[{{"name":"mcp","url":"{base}/api/rpc/mcp/v1"}}]}}"#
        )
    );
    let r = send(post(format!("{base}/api/rpc/mcp/v1"), DISCOVER)).await;
    assert_eq!(
        r.body,
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#, doc.body)
    );
    // Postman: the origin from the checked Host, then the prefix.
    let p = send(get(format!("{base}/api/rpc/disc/v1/postman"))).await;
    assert_eq!(p.json(), disc_collection(&format!("{base}/api")));
    // MCP OAuth: the challenge names the metadata under the prefix, which is served there and
    // names the resource under the prefix.
    let host = base.trim_start_matches("http://");
    let metadata = format!("http://{host}/api/.well-known/oauth-protected-resource/mcp/admin/v1");
    let r = send(
        reqwest::Client::new()
            .post(format!("{base}/api/mcp/admin/v1"))
            .header("accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})),
    )
    .await;
    assert_eq!(
        (r.status, r.www_authenticate),
        (
            401,
            Some(format!("Bearer resource_metadata=\"{metadata}\""))
        )
    );
    let meta = json!({"resource": format!("http://{host}/api/mcp/admin/v1"),
        "authorization_servers": ["https://auth.example.com"],
        "bearer_methods_supported": ["header"], "scopes_supported": ["admin"]});
    assert_eq!(send(get(metadata)).await.json(), meta);
    let root = send(get(format!(
        "{base}/api/.well-known/oauth-protected-resource"
    )))
    .await;
    assert_eq!(root.json(), meta);
    // The root well-known path is the outer app's: not served by a nested router.
    assert_eq!(
        send(get(format!("{base}/.well-known/oauth-protected-resource")))
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn under_a_prefix_with_a_public_url_every_url_is_absolute() {
    let server = example_prod()
        .api_tokens(["s3cret"])
        .public_url("https://api.example.com/")
        .build()
        .unwrap();
    let base = nested(server).await;
    let doc = send(get(format!("{base}/api/rpc/mcp/v1"))).await.json();
    assert_eq!(
        doc["servers"],
        json!([{"name": "mcp", "url": "https://api.example.com/api/rpc/mcp/v1"}])
    );
    let p = send(get(format!("{base}/api/rpc/disc/v1/postman"))).await;
    assert_eq!(p.json(), disc_collection("https://api.example.com/api"));
    let r = send(
        reqwest::Client::new()
            .post(format!("{base}/api/mcp/admin/v1"))
            .header("accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})),
    )
    .await;
    assert_eq!(
        r.www_authenticate.as_deref(),
        Some(
            "Bearer resource_metadata=\"https://api.example.com/api/.well-known/oauth-protected-resource/mcp/admin/v1\""
        )
    );
    let meta = send(get(format!(
        "{base}/api/.well-known/oauth-protected-resource/mcp/admin/v1"
    )))
    .await
    .json();
    assert_eq!(meta["resource"], "https://api.example.com/api/mcp/admin/v1");
}

#[tokio::test]
async fn a_wildcard_prefix_is_never_copied() {
    let server = example_prod().build().unwrap();
    let app = axum::Router::new().nest("/{tenant}", server.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let doc = send(get(format!("http://{addr}/t-1/rpc/mcp/v1?info"))).await;
    assert_eq!(
        doc.json()["servers"],
        json!([{"name": "mcp", "url": format!("http://{addr}/t-1/rpc/mcp/v1")}])
    );
    // Not a plain path: left out.
    let doc = send(get(format!("http://{addr}/a%22b/rpc/mcp/v1?info"))).await;
    assert_eq!(
        doc.json()["servers"],
        json!([{"name": "mcp", "url": format!("http://{addr}/rpc/mcp/v1")}])
    );
}
