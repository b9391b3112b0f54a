//! Errors users already have: methods returning `anyhow::Result<T>` (the `anyhow` feature) or
//! `Result<T, Box<dyn Error + Send + Sync>>`, and `?` on `std::io::Error` and
//! `serde_json::Error` in a method returning `Result<T, RpcError>`: each is -32603, with the
//! error's chain in the `data` of `dev` and only the exception in production. Exact answers
//! over HTTP.

use mcp_runtime::prelude::*;
use serde_json::{Value, json};

const ERRS: ApiGroup = ApiGroup::rpc("errs");
const PATH: &str = "/rpc/errs/v1";

const ANYHOW_AT: u32 = line!() + 2; // the attribute's line, which its errors name
/// An `anyhow` error with a context.
#[rpc_method(name = "Errs.anyhow", groups = [ERRS])]
fn anyhow_error(fail: bool) -> anyhow::Result<u32> {
    if fail {
        let inner = anyhow::anyhow!("disk unplugged");
        return Err(inner.context("loading the config"));
    }
    Ok(1)
}

const BOXED_AT: u32 = line!() + 3; // an async method's errors name its signature's line
/// A boxed error.
#[rpc_method(name = "Errs.boxed", groups = [ERRS])]
async fn boxed_error() -> Result<u32, Box<dyn std::error::Error + Send + Sync>> {
    Err(Box::new(std::io::Error::other("socket closed")))
}

const IO_AT: u32 = line!() + 4; // a `?` names its own line
/// `?` on an I/O error.
#[rpc_method(name = "Errs.io", groups = [ERRS])]
fn io_error() -> Result<String, RpcError> {
    Ok(std::fs::read_to_string("/nonexistent/mcp-rs/errs")?)
}

const JSON_AT: u32 = line!() + 4; // a `?` names its own line
/// `?` on a JSON error.
#[rpc_method(name = "Errs.json", groups = [ERRS])]
fn json_error() -> Result<u32, RpcError> {
    Ok(serde_json::from_str::<u32>("nope")?)
}

async fn call(env: Environment, method: &str, params: Value) -> Value {
    let server = examples::with_states(Server::builder())
        .env(env)
        .build()
        .expect("valid catalog");
    let url = format!("{}{PATH}", tests::serve_url(server).await);
    let body = json!({"jsonrpc":"2.0","method":method,"params":params,"id":1});
    let res = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("HTTP client")
        .post(url)
        .json(&body)
        .send()
        .await
        .expect("HTTP request");
    assert_eq!(res.status().as_u16(), 200);
    res.json().await.expect("a JSON answer")
}

/// A dev answer without its `trace` (which varies with the build; present and non-empty).
fn without_trace(mut v: Value) -> Value {
    let trace = v["error"]["data"]
        .as_object_mut()
        .and_then(|d| d.remove("trace"));
    assert!(
        trace
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|t| !t.is_empty()),
        "no trace in dev data: {v}"
    );
    v
}

/// The production answer: -32603, the message, the exception only.
fn prod(message: &str, exception: &str) -> Value {
    json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":message,
        "data":{"exception":exception}}})
}

/// The dev answer (without `trace`): the chain in `previous`, where the error was made.
fn dev(message: &str, exception: &str, line: u32, previous: Value) -> Value {
    json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":message,
        "data":{"exception":exception,"message":message,"code":-32603,
            "file":"tests/tests/error_returns.rs","line":line,"previous":previous}}})
}

const INTERNAL: &str = "Ufo\\RpcError\\RpcInternalException";

#[tokio::test]
async fn anyhow_result_is_internal_error_with_its_context_chain_in_dev() {
    assert_eq!(
        call(Environment::PROD, "Errs.anyhow", json!({"fail": false})).await,
        json!({"jsonrpc":"2.0","id":1,"result":1})
    );
    assert_eq!(
        call(Environment::PROD, "Errs.anyhow", json!({"fail": true})).await,
        prod("loading the config", INTERNAL)
    );
    assert_eq!(
        without_trace(call(Environment::DEV, "Errs.anyhow", json!({"fail": true})).await),
        dev(
            "loading the config",
            INTERNAL,
            ANYHOW_AT,
            json!(["loading the config", "disk unplugged"])
        )
    );
}

#[tokio::test]
async fn boxed_error_is_internal_error() {
    assert_eq!(
        call(Environment::PROD, "Errs.boxed", json!({})).await,
        prod("socket closed", INTERNAL)
    );
    assert_eq!(
        without_trace(call(Environment::DEV, "Errs.boxed", json!({})).await),
        dev(
            "socket closed",
            INTERNAL,
            BOXED_AT,
            json!(["socket closed"])
        )
    );
}

#[tokio::test]
async fn question_mark_on_io_and_json_errors_is_internal_error() {
    let io = "No such file or directory (os error 2)";
    assert_eq!(
        call(Environment::PROD, "Errs.io", json!({})).await,
        prod(io, "std::io::error::Error")
    );
    assert_eq!(
        without_trace(call(Environment::DEV, "Errs.io", json!({})).await),
        dev(io, "std::io::error::Error", IO_AT, json!([io]))
    );
    let bad = "expected ident at line 1 column 2";
    assert_eq!(
        call(Environment::PROD, "Errs.json", json!({})).await,
        prod(bad, "serde_json::error::Error")
    );
    assert_eq!(
        without_trace(call(Environment::DEV, "Errs.json", json!({})).await),
        dev(bad, "serde_json::error::Error", JSON_AT, json!([bad]))
    );
}
