//! JSON-RPC 2.0 envelopes: parse, run each call through the core, write the answer.
//!
//! Parsing borrows from the body (`&RawValue`), so params are only decoded when a call runs.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::catalog::Catalog;
use crate::context::Face;
use crate::core::{CallRequest, Core};
use crate::env::Environment;
use crate::error::RpcError;

/// Limits applied to envelopes.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The most items a batch may have.
    pub max_batch: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_batch: 1000 }
    }
}

/// The answer to one body: an HTTP status and, unless every item was a notification, a body.
#[derive(Debug, PartialEq, Eq)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body, `None` for notifications only.
    pub body: Option<Vec<u8>>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The members of a request object; anything else in it is ignored.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
}

/// A checked request: `id` is `None` for a notification.
#[derive(Debug)]
pub struct Request<'a> {
    /// The id's JSON text (number, string or `null`); `None` for a notification.
    pub id: Option<&'a RawValue>,
    /// The method name.
    pub method: Cow<'a, str>,
    /// The params' JSON text.
    pub params: Option<&'a RawValue>,
}

/// An item that is not a valid request: answered with this error (id `null` unless readable).
#[derive(Debug)]
pub struct Invalid<'a> {
    /// The id, when it could be read.
    pub id: Option<&'a RawValue>,
    /// The error.
    pub error: RpcError,
}

/// Checks one request object.
pub fn parse_item(raw: &RawValue) -> Result<Request<'_>, Invalid<'_>> {
    let bad = |id, msg: &'static str| Invalid {
        id,
        error: RpcError::invalid_request(msg),
    };
    let env: Envelope<'_> = match serde_json::from_str(raw.get()) {
        Ok(e) => e,
        Err(_) => {
            return Err(bad(
                None,
                "Invalid Request: expected a JSON-RPC request object",
            ));
        }
    };
    let id = match env.id {
        Some(id)
            if matches!(
                id.get().as_bytes().first(),
                Some(b'"' | b'-' | b'0'..=b'9') | Some(b'n')
            ) =>
        {
            Some(id)
        }
        Some(_) => {
            return Err(bad(
                None,
                "Invalid Request: `id` must be a string or a number",
            ));
        }
        None => None,
    };
    if let Some(v) = env.jsonrpc
        && v.get() != "\"2.0\""
        // Escaped spellings ("2\u002e0") are the same string: decode before refusing.
        && serde_json::from_str::<Cow<'_, str>>(v.get()).ok().as_deref() != Some("2.0")
    {
        return Err(bad(id, "Invalid Request: `jsonrpc` must be \"2.0\""));
    }
    let method: Cow<'_, str> = match env
        .method
        .map(|m| serde_json::from_str::<Cow<'_, str>>(m.get()))
    {
        Some(Ok(m)) if !m.trim().is_empty() => m,
        _ => {
            return Err(bad(
                id,
                "Invalid Request: `method` must be a non-empty string",
            ));
        }
    };
    let params = match env.params {
        Some(p) if matches!(p.get().as_bytes().first(), Some(b'{' | b'[')) => Some(p),
        Some(p) if p.get() == "null" => None,
        Some(_) => {
            return Err(bad(
                id,
                "Invalid Request: `params` must be an object or an array",
            ));
        }
        None => None,
    };
    Ok(Request { id, method, params })
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"result":<result>}`.
pub fn write_result(out: &mut Vec<u8>, id: Option<&RawValue>, result: &RawValue) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.map_or("null", |i| i.get()).as_bytes());
    out.extend_from_slice(b",\"result\":");
    out.extend_from_slice(result.get().as_bytes());
    out.push(b'}');
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"error":{...}}`.
pub fn write_error(out: &mut Vec<u8>, id: Option<&RawValue>, error: &RpcError, env: &Environment) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.map_or("null", |i| i.get()).as_bytes());
    out.extend_from_slice(b",\"error\":");
    // Writing a Value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, &error.to_wire(env));
    out.push(b'}');
}

/// Whether a body is a batch: its first non-space byte is `[`.
pub fn is_batch(body: &[u8]) -> bool {
    body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

fn decode_params(raw: Option<&RawValue>) -> Result<Option<Value>, RpcError> {
    raw.map(|p| crate::core::json::from_str(p.get()))
        .transpose()
        .map_err(|e| {
            RpcError::invalid_params(format!(
                "Invalid params: {}",
                crate::core::json::message(&e)
            ))
        })
}

/// Runs one checked request; `None` for a notification.
async fn run_one(
    core: &Core,
    catalog: &Catalog,
    req: Request<'_>,
    out: &mut Vec<u8>,
    after: &Option<crate::core::events::AfterResponse>,
) -> Option<u16> {
    let result = match decode_params(req.params) {
        Ok(params) => {
            let extras = crate::context::CallExtras {
                after_response: after.clone(),
                ..Default::default()
            };
            match catalog.get(&req.method) {
                // No pipeline future for a call that cannot suspend (see `Core::runs_now`).
                Some(info) if core.runs_now(info) => {
                    core.call_now(catalog, info, params, Face::JsonRpc, extras)
                }
                // Boxed: the pipeline's future is a few KB that this one would carry.
                _ => {
                    Box::pin(core.call(CallRequest {
                        catalog,
                        method: &req.method,
                        params,
                        face: Face::JsonRpc,
                        extras,
                    }))
                    .await
                }
            }
        }
        Err(e) => Err(e),
    };
    let id = req.id?;
    match result {
        Ok(output) => {
            write_result(out, Some(id), output.as_json());
            Some(200)
        }
        Err(e) => {
            write_error(out, Some(id), &e, core.env());
            Some(e.http_status())
        }
    }
}

/// Handles a whole body (single or batch) for one endpoint.
pub async fn handle(
    core: &Core,
    catalog: &Catalog,
    body: &[u8],
    limits: Limits,
    after: Option<crate::core::events::AfterResponse>,
) -> Reply {
    let env = core.env();
    let parse_error = || {
        let mut out = Vec::new();
        write_error(
            &mut out,
            None,
            &RpcError::parse_error("Invalid json data"),
            env,
        );
        Reply {
            status: 500,
            body: Some(out),
        }
    };
    if !is_batch(body) {
        let Ok(raw) = serde_json::from_slice::<&RawValue>(body) else {
            return parse_error();
        };
        let mut out = Vec::with_capacity(128);
        return match parse_item(raw) {
            Ok(req) => match run_one(core, catalog, req, &mut out, &after).await {
                Some(status) => Reply {
                    status,
                    body: Some(out),
                },
                None => Reply {
                    status: 204,
                    body: None,
                },
            },
            Err(inv) => {
                write_error(&mut out, inv.id, &inv.error, env);
                Reply {
                    status: 200,
                    body: Some(out),
                }
            }
        };
    }
    let Ok(items) = serde_json::from_slice::<Vec<&RawValue>>(body) else {
        return parse_error();
    };
    let single_error = |e: RpcError| {
        let mut out = Vec::new();
        write_error(&mut out, None, &e, env);
        Reply {
            status: 200,
            body: Some(out),
        }
    };
    if items.is_empty() {
        return single_error(RpcError::invalid_request("Invalid Request: empty batch"));
    }
    if items.len() > limits.max_batch {
        return single_error(RpcError::invalid_request(format!(
            "Invalid Request: batch too large ({} items, at most {})",
            items.len(),
            limits.max_batch
        )));
    }
    // Items run concurrently; answers keep the request order, one per non-notification.
    let after = &after;
    let answers = futures_util::future::join_all(items.iter().map(|raw| async move {
        let mut out = Vec::new();
        match parse_item(raw) {
            Ok(req) => {
                run_one(core, catalog, req, &mut out, after).await?;
            }
            Err(inv) => write_error(&mut out, inv.id, &inv.error, env),
        }
        Some(out)
    }))
    .await;
    let mut body =
        Vec::with_capacity(answers.iter().flatten().map(|a| a.len() + 1).sum::<usize>() + 2);
    body.push(b'[');
    for a in answers.into_iter().flatten() {
        if body.len() > 1 {
            body.push(b',');
        }
        body.extend_from_slice(&a);
    }
    body.push(b']');
    if body.len() == 2 {
        Reply {
            status: 204,
            body: None,
        }
    } else {
        Reply {
            status: 200,
            body: Some(body),
        }
    }
}
