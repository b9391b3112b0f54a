//! Versions: each version inherits the previous one's methods; `removed_in` drops a method.

use mcp_runtime::prelude::*;
use serde_json::{Value, json};

use tests::serve;

const V: ApiGroup = ApiGroup::mcp("versioned");

/// In v1 only.
#[rpc_method(name = "Old.gone", groups = [V], removed_in = 2)]
fn gone() -> String {
    "old".into()
}

/// In every version.
#[rpc_method(name = "Same.kept", groups = [V])]
fn kept() -> String {
    "kept".into()
}

/// From v2 on.
#[rpc_method(name = "New.added", groups = [V], version = 2)]
fn added() -> String {
    "new".into()
}

/// From v3 on (so v3 exists and inherits v2).
#[rpc_method(name = "Newer.v3", groups = [V], version = 3)]
fn v3() -> String {
    "v3".into()
}

fn names(server: &Server, version: u32) -> Vec<&'static str> {
    server
        .registry()
        .catalog("versioned", version)
        .unwrap()
        .methods()
        .iter()
        .map(|m| m.name())
        .collect()
}

#[test]
fn catalogs_inherit_and_drop() {
    let server = examples::with_states(Server::builder()).build().unwrap();
    assert_eq!(server.registry().versions("versioned"), [1, 2, 3]);
    assert_eq!(names(&server, 1), ["Old.gone", "Same.kept"]);
    assert_eq!(names(&server, 2), ["New.added", "Same.kept"]);
    assert_eq!(names(&server, 3), ["New.added", "Newer.v3", "Same.kept"]);
}

#[tokio::test]
async fn each_version_has_its_routes() {
    let server = examples::with_states(Server::builder())
        .env(Environment::PROD)
        .build()
        .unwrap();
    let addr = serve(server).await;
    let call = |v: u32, method: &'static str| async move {
        let r: Value = reqwest::Client::new()
            .post(format!("http://{addr}/rpc/versioned/v{v}"))
            .json(&json!({"jsonrpc":"2.0","method":method,"id":1}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        r
    };
    assert_eq!(call(1, "Old.gone").await["result"], "old");
    let r = call(2, "Old.gone").await;
    assert_eq!(r["error"]["code"], -32601);
    assert_eq!(
        r["error"]["message"],
        "Method \"Old.gone\" for version \"v2\" is not found in group \"versioned\""
    );
    assert_eq!(call(2, "New.added").await["result"], "new");
    assert_eq!(call(1, "New.added").await["error"]["code"], -32601);
    assert_eq!(call(3, "Same.kept").await["result"], "kept");
    // The OpenRPC document lists the versions.
    let doc: Value = reqwest::get(format!("http://{addr}/rpc/versioned/v2"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["info"]["x-versions"], json!(["v1", "v2", "v3"]));
    assert_eq!(doc["info"]["version"], "v2");
}
