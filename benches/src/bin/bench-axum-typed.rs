//! `bench-axum-typed --listen 127.0.0.1:PORT`: the stricter ceiling (issue 38), a bare axum 0.8
//! handler that deserializes the request into typed structs (serde derive, borrowing its
//! strings) and writes its answer with typed structs, at `/mcp` (`tools/call` of `add`, both
//! eras' result shapes) and `/rpc` (a plain JSON-RPC `add`). `bench-axum` parses into a
//! `serde_json::Value` and writes with `json!`: this one does what a hand-written server with
//! a typed wire model would.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Request<'a, P> {
    #[allow(dead_code)] // Read to be checked by serde, as a server would.
    jsonrpc: &'a str,
    #[serde(borrow)]
    id: &'a RawValue,
    method: &'a str,
    params: P,
}

#[derive(Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: Add,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<Meta<'a>>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    version: Option<&'a str>,
}

#[derive(Serialize)]
struct Answer<'a, R> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: R,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    result_type: Option<&'static str>,
    content: [Text; 1],
    structured_content: Structured,
    is_error: bool,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Stamp>,
}

#[derive(Serialize)]
struct Text {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
}

#[derive(Serialize)]
struct Structured {
    result: i64,
}

#[derive(Serialize)]
struct Stamp {
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    server_info: ServerInfo,
}

#[derive(Serialize)]
struct ServerInfo {
    name: &'static str,
    version: &'static str,
}

/// `None` when the body is not a `tools/call` of `add` whose sum fits.
fn call_answer(body: &[u8]) -> Option<Vec<u8>> {
    let req: Request<CallParams> = serde_json::from_slice(body).ok()?;
    if req.method != "tools/call" || req.params.name != "add" {
        return None;
    }
    let sum = req.params.arguments.a.checked_add(req.params.arguments.b)?;
    let modern = req.params.meta.and_then(|m| m.version) == Some("2026-07-28");
    let result = CallResult {
        result_type: modern.then_some("complete"),
        content: [Text {
            kind: "text",
            text: sum.to_string(),
        }],
        structured_content: Structured { result: sum },
        is_error: false,
        meta: modern.then_some(Stamp {
            server_info: ServerInfo {
                name: "bench-axum-typed",
                version: "0.1.0",
            },
        }),
    };
    serde_json::to_vec(&Answer {
        jsonrpc: "2.0",
        id: req.id,
        result,
    })
    .ok()
}

/// `None` when the body is not a call of `add` whose sum fits.
fn rpc_answer(body: &[u8]) -> Option<Vec<u8>> {
    let req: Request<Add> = serde_json::from_slice(body).ok()?;
    if req.method != "add" {
        return None;
    }
    let sum = req.params.a.checked_add(req.params.b)?;
    serde_json::to_vec(&Answer {
        jsonrpc: "2.0",
        id: req.id,
        result: sum,
    })
    .ok()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    benches::serve_ceiling(call_answer, rpc_answer).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_like_the_value_ceiling() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        ] {
            let typed: serde_json::Value =
                serde_json::from_slice(&call_answer(body.as_bytes()).unwrap()).unwrap();
            let mut value: serde_json::Value =
                serde_json::from_slice(&benches::serde_baseline(body.as_bytes()).unwrap()).unwrap();
            // The same answer, but for the name in the stamp.
            if let Some(info) =
                value.pointer_mut("/result/_meta/io.modelcontextprotocol~1serverInfo/name")
            {
                *info = "bench-axum-typed".into();
            }
            assert_eq!(typed, value, "{body}");
        }
        let rpc = br#"{"jsonrpc":"2.0","id":7,"method":"add","params":{"a":2,"b":3}}"#;
        assert_eq!(
            rpc_answer(rpc).unwrap(),
            br#"{"jsonrpc":"2.0","id":7,"result":5}"#
        );
        assert_eq!(call_answer(b"{}"), None);
    }
}
