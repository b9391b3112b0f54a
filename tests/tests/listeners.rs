//! `#[rpc_listener]` functions, collected by inventory and ordered by priority: they can reject
//! a call, change params, replace an error and change the response, on both faces.

use mcp_runtime::Limits;
use mcp_runtime::prelude::*;
use mcp_runtime::test_util::handle;
use serde_json::{Value, json};

const L: ApiGroup = ApiGroup::mcp("listen");

/// Echo a text.
#[rpc_method(name = "L.echo", groups = [L])]
fn echo(text: String) -> String {
    text
}

/// Always fails.
#[rpc_method(name = "L.fail", groups = [L])]
fn fail() -> Result<String, RpcError> {
    Err(RpcError::logic("original"))
}

/// Rejects calls whose text is `forbidden` (runs first: priority 10).
#[rpc_listener(event = "request", priority = 10)]
async fn guard(ev: &mut Event<'_>) -> Result<(), RpcError> {
    if ev.params().and_then(|p| p.get("text")) == Some(&json!("forbidden")) {
        return Err(RpcError::new(-32403, "Forbidden by a listener"));
    }
    Ok(())
}

/// Rewrites `shout` to upper case before the call.
#[rpc_listener(event = "pre_execute")]
fn upper(ev: &mut Event<'_>) -> Result<(), RpcError> {
    if let Some(Value::String(t)) = ev.params_mut().and_then(|p| p.get_mut("text"))
        && t == "shout"
    {
        *t = t.to_uppercase();
    }
    Ok(())
}

/// Replaces the error of `L.fail`.
#[rpc_listener(event = "error")]
fn replace(ev: &mut Event<'_>) -> Result<(), RpcError> {
    if ev.method() == "L.fail" {
        ev.replace_error(RpcError::not_found("replaced by a listener"));
    }
    Ok(())
}

/// Decorates the result of `L.echo` for `decorate`.
#[rpc_listener(event = "response", priority = -5)]
fn decorate(ev: &mut Event<'_>) -> Result<(), RpcError> {
    if ev.result().map(|r| r.get()) == Some("\"decorate\"") {
        ev.set_result("[decorate]")?;
    }
    Ok(())
}

async fn call(server: &Server, method: &str, params: Value) -> Value {
    let catalog = server.registry().catalog("listen", 1).unwrap().clone();
    let body = serde_json::to_vec(&json!({"jsonrpc":"2.0","method":method,"params":params,"id":1}))
        .unwrap();
    let r = handle(server.core(), &catalog, &body, &Limits::default(), None).await;
    serde_json::from_slice(&r.body.unwrap()).unwrap()
}

fn server() -> Server {
    Server::builder().env(Environment::PROD).build().unwrap()
}

#[tokio::test]
async fn a_request_listener_rejects_the_call() {
    let r = call(&server(), "L.echo", json!({"text":"forbidden"})).await;
    assert_eq!(r["error"]["code"], -32403);
    assert_eq!(r["error"]["message"], "Forbidden by a listener");
    assert_eq!(
        call(&server(), "L.echo", json!({"text":"fine"})).await["result"],
        "fine"
    );
}

#[tokio::test]
async fn a_pre_execute_listener_changes_params() {
    assert_eq!(
        call(&server(), "L.echo", json!({"text":"shout"})).await["result"],
        "SHOUT"
    );
}

#[tokio::test]
async fn an_error_listener_replaces_the_error() {
    let r = call(&server(), "L.fail", json!({})).await;
    assert_eq!(r["error"]["code"], -32404);
    assert_eq!(r["error"]["message"], "replaced by a listener");
}

#[tokio::test]
async fn a_response_listener_changes_the_result_on_both_faces() {
    assert_eq!(
        call(&server(), "L.echo", json!({"text":"decorate"})).await["result"],
        "[decorate]"
    );
    let s = server();
    let ep = s.mcp_endpoint("listen", 1).unwrap();
    let msg = mcp_runtime::test_util::Message::read(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"L.echo","arguments":{"text":"decorate"}}}).to_string().as_bytes()).expect("a request");
    let a = ep
        .handle(
            msg,
            mcp_runtime::test_util::Era::of("2025-11-25").expect("a revision"),
            Default::default(),
        )
        .await;
    let v: Value = serde_json::from_slice(&a.body.to_vec()).unwrap();
    assert_eq!(
        v["result"]["structuredContent"],
        json!({"result":"[decorate]"})
    );
    // MCP: a rejection by a listener is a tool error, like any pipeline error.
    let msg = mcp_runtime::test_util::Message::read(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"L.echo","arguments":{"text":"forbidden"}}}).to_string().as_bytes()).expect("a request");
    let a = ep
        .handle(
            msg,
            mcp_runtime::test_util::Era::latest_stateless(),
            Default::default(),
        )
        .await;
    let v: Value = serde_json::from_slice(&a.body.to_vec()).unwrap();
    assert_eq!(v["result"]["isError"], true);
    assert_eq!(v["result"]["resultType"], "complete");
}
