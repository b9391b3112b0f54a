//! Mount anywhere: the `axum_app` binary serves its own route and the framework's router
//! nested under `/api`, with its own layers on top of both.

use serde_json::{Value, json};

mod common;

/// A running `axum_app --listen 127.0.0.1:0`, killed on drop.
struct App {
    _proc: common::Spawned,
    base: String,
}

impl App {
    fn start() -> Self {
        let proc = common::Spawned::start(env!("CARGO_BIN_EXE_axum_app"), "axum_app", &[]);
        let base = format!("http://{}", proc.addr);
        App { _proc: proc, base }
    }
}

fn served_by(res: &reqwest::Response) -> Option<&str> {
    res.headers()
        .get("x-served-by")
        .and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn own_routes_nested_framework_routes_and_own_layers() {
    let app = App::start();
    let client = reqwest::Client::new();

    let res = client
        .get(format!("{}/hello", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(served_by(&res), Some("axum_app"));
    assert_eq!(res.text().await.unwrap(), "hello");

    let res = client
        .post(format!("{}/api/rpc/mcp/v1", app.base))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.ping", "params": {"who": "axum"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(served_by(&res), Some("axum_app"));
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": 1, "result": "pong, axum"})
    );

    // MCP: the Host check (loopback only by default) passes on 127.0.0.1 under the prefix.
    let res = client
        .post(format!("{}/api/mcp/mcp/v1", app.base))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(served_by(&res), Some("axum_app"));
    let body: Value = res.json().await.unwrap();
    let names: Vec<&str> = body["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"Catalog.ping"), "{names:?}");

    // A foreign Host is still refused by the framework's check, inside the app's layers.
    let res = client
        .post(format!("{}/api/mcp/mcp/v1", app.base))
        .header("host", "evil.example.com")
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 421);
    assert_eq!(served_by(&res), Some("axum_app"));

    // Routes outside the app and the prefix are the app's 404s (still layered).
    let res = client
        .post(format!("{}/rpc/mcp/v1", app.base))
        .json(&json!({"jsonrpc": "2.0", "id": 4, "method": "Catalog.ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(served_by(&res), Some("axum_app"));
}
