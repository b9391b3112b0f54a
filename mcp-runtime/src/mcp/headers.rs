//! The HTTP headers of a request on a revision whose headers mirror its envelope
//! (2026-07-28, SEP-2243): `Mcp-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and a tool's
//! `Mcp-Param-*` say what the body says, so that an intermediary can route and authorize on
//! them without reading it; a request whose headers say otherwise is refused (-32020). On
//! every revision, `Accept-Language` must agree with the request's `_meta` language when both
//! are sent (SEP-2792, [`check_language`]).
//!
//! Decided here, without HTTP types: the transport gives the headers through [`Headers`].

use base64::Engine as _;
use serde_json::Value;

use super::engine;
use super::handler::{Answer, McpEndpoint, Message};
use super::protocol::Era;
use crate::error::codes;

/// `Mcp-Protocol-Version`.
pub(crate) const VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`.
pub(crate) const METHOD: &str = "mcp-method";
/// `Mcp-Name`.
pub(crate) const NAME: &str = "mcp-name";

/// A request's headers, as the transport holds them (names in lower case).
pub(crate) trait Headers {
    /// The first value of `name`, if it is text.
    fn first(&self, name: &str) -> Option<&str>;
    /// How many times `name` is sent.
    fn count(&self, name: &str) -> usize;
    /// Every line of `name` combined into one value (RFC 9110 §5.2: joined by `", "`), if
    /// every line is text.
    fn combined(&self, name: &str) -> Option<std::borrow::Cow<'_, str>>;
}

/// `Accept-Language`.
pub(crate) const ACCEPT_LANGUAGE: &str = "accept-language";

/// The Streamable HTTP binding of the language carrier (SEP-2792), on every revision: when a
/// request sends both the `_meta` carrier and an `Accept-Language` header they must say the
/// same, compared exactly once the surrounding whitespace is trimmed (no case, order or
/// weight normalised); otherwise HTTP 400 with -32020. A missing header is no mismatch
/// (intermediaries strip it), and a carrier that is not a string counts as absent.
pub(crate) fn check_language(
    ep: &McpEndpoint,
    msg: &Message,
    headers: &impl Headers,
) -> Result<(), Answer> {
    let Some(carried) = msg.meta().language_raw() else {
        return Ok(());
    };
    let Some(header) = headers.combined(ACCEPT_LANGUAGE) else {
        return Ok(());
    };
    let ows = [' ', '\t'];
    if header.trim_matches(ows) == carried.trim_matches(ows) {
        return Ok(());
    }
    let mut answer = ep.error(
        msg.id.as_ref(),
        Era::latest_handshake(),
        codes::HEADER_MISMATCH,
        "accept-language header does not match the request's _meta \"io.modelcontextprotocol/acceptLanguage\"",
        None,
    );
    answer.status = 400;
    Err(answer)
}

/// Checks a stateless request's envelope (its `_meta` keys and revision) and, on a revision
/// whose headers mirror it, its headers against it: a request is told what is wrong with its
/// body's keys before what is wrong with its headers.
pub(crate) fn check(
    ep: &McpEndpoint,
    msg: &Message,
    era: Era,
    headers: &impl Headers,
) -> Result<(), Answer> {
    ep.check_modern_keys(msg)?;
    if !era.mirrored_headers() {
        return ep.check_modern_version(msg);
    }
    let id = msg.id.as_ref();
    let mismatch = |m: &str| ep.error(id, era, codes::HEADER_MISMATCH, m, None);
    if headers.first(VERSION) != msg.meta_version() {
        return Err(mismatch(
            "mcp-protocol-version header does not match the request envelope's protocol version",
        ));
    }
    ep.check_modern_version(msg)?;
    if headers.count(METHOD) != 1 || headers.first(METHOD) != Some(msg.method.as_str()) {
        return Err(mismatch(
            "mcp-method header does not match the request body's method",
        ));
    }
    // The header mirrors the body's name (tools, prompts), URI (resources) or task id.
    if let Some(key) = engine::named_param(&msg.method) {
        let given = headers.first(NAME).and_then(decode_header_value);
        let body = msg
            .params
            .as_ref()
            .and_then(|p| p.get(key))
            .and_then(Value::as_str);
        if given.as_deref() != body || headers.count(NAME) != 1 {
            return Err(mismatch(&format!(
                "mcp-name header does not match the request body's '{key}' parameter"
            )));
        }
    }
    if engine::is_tool_call(&msg.method)
        && !ep.mirrored.is_empty()
        && let Some(mirrors) = msg.param_name().and_then(|n| ep.mirrored.get(n))
        && let Err(m) = check_mirrored(mirrors, headers, msg)
    {
        return Err(mismatch(&m));
    }
    Ok(())
}

/// Decodes an `Mcp-Name`-style header value (`=?base64?...?=` for unsafe values).
pub(crate) fn decode_header_value(v: &str) -> Option<std::borrow::Cow<'_, str>> {
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b) => base64::engine::general_purpose::STANDARD
            .decode(b)
            .ok()
            .and_then(|d| String::from_utf8(d).ok())
            .map(std::borrow::Cow::Owned),
        None => Some(std::borrow::Cow::Borrowed(v)),
    }
}

/// Checks the `Mcp-Param-*` headers of a `tools/call` against the arguments they mirror
/// (SEP-2243): each present exactly when its argument is, decoded strictly (`=?base64?…?=`),
/// equal to it (integers compared as numbers).
fn check_mirrored(
    mirrors: &[crate::catalog::Mirrored],
    headers: &impl Headers,
    msg: &Message,
) -> Result<(), String> {
    let args = msg.params.as_ref().and_then(|p| p.get("arguments"));
    for m in mirrors {
        let body = args.and_then(|a| a.get(&m.param)).filter(|v| !v.is_null());
        if headers.count(&m.header) > 1 {
            return Err(format!("{} header is repeated", m.header));
        }
        let given = headers.first(&m.header);
        let (given, body) = match (given, body) {
            (None, None) => continue,
            (Some(g), Some(b)) => (g, b),
            (None, Some(_)) => {
                return Err(format!(
                    "{} header is missing for the argument '{}'",
                    m.header, m.param
                ));
            }
            (Some(_), None) => {
                return Err(format!(
                    "{} header is sent without the argument '{}'",
                    m.header, m.param
                ));
            }
        };
        let decoded = decode_header_value(given.trim())
            .ok_or_else(|| format!("{} header is not a valid value", m.header))?;
        let same = match m.ty {
            "integer" => decoded
                .parse::<i128>()
                .ok()
                .zip(
                    body.as_i64()
                        .map(i128::from)
                        .or(body.as_u64().map(i128::from)),
                )
                .is_some_and(|(h, b)| h == b),
            "boolean" => body
                .as_bool()
                .is_some_and(|b| decoded == if b { "true" } else { "false" }),
            _ => body.as_str() == Some(&*decoded),
        };
        if !same {
            return Err(format!(
                "{} header does not match the argument '{}'",
                m.header, m.param
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde_json::json;

    use super::*;

    /// Headers as a plain map: the check needs no HTTP types.
    #[derive(Default)]
    struct Map(HashMap<&'static str, Vec<&'static str>>);

    impl Headers for Map {
        fn first(&self, name: &str) -> Option<&str> {
            self.0.get(name).and_then(|v| v.first().copied())
        }
        fn count(&self, name: &str) -> usize {
            self.0.get(name).map_or(0, Vec::len)
        }
        fn combined(&self, name: &str) -> Option<std::borrow::Cow<'_, str>> {
            self.0.get(name).map(|v| v.join(", ").into())
        }
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> Map {
        let mut m = Map::default();
        for (k, v) in pairs {
            m.0.entry(*k).or_default().push(*v);
        }
        m
    }

    fn message(method: &str, params: Value) -> Message {
        let mut params = params;
        params["_meta"] = json!({
            super::super::protocol::META_PROTOCOL_VERSION: "2026-07-28",
            super::super::protocol::META_CLIENT_CAPABILITIES: {},
        });
        Message::new(Some(json!(1)), method, Some(params))
    }

    fn refusal(a: Answer) -> (u16, Value) {
        let body: Value = serde_json::from_slice(&a.body.into_vec()).expect("JSON");
        (a.status, body["error"]["message"].clone())
    }

    static PING: crate::record::MethodDef = crate::record::fixtures::method("Work.ping", &[]);

    #[test]
    fn headers_must_say_what_the_envelope_says() {
        let server = crate::Server::builder()
            .without_registered_methods()
            .method(&PING)
            .build()
            .expect("the server builds");
        let ep = server.mcp_endpoint("g", 1).expect("an MCP group");
        let era = Era::latest_stateless();
        let call = message("tools/call", json!({"name": "t", "arguments": {}}));
        let good = [(VERSION, "2026-07-28"), (METHOD, "tools/call"), (NAME, "t")];
        assert!(check(ep, &call, era, &headers(&good)).is_ok());
        // The name may come base64-encoded.
        let encoded = [good[0], good[1], (NAME, "=?base64?dA==?=")];
        assert!(check(ep, &call, era, &headers(&encoded)).is_ok());
        for (bad, says) in [
            (
                vec![good[1], good[2]],
                "mcp-protocol-version header does not match",
            ),
            (
                vec![good[0], (METHOD, "tools/list"), good[2]],
                "mcp-method header",
            ),
            (
                vec![good[0], good[1], good[1], good[2]],
                "mcp-method header",
            ),
            (vec![good[0], good[1]], "mcp-name header"),
            (vec![good[0], good[1], (NAME, "u")], "mcp-name header"),
        ] {
            let (status, message) = refusal(check(ep, &call, era, &headers(&bad)).unwrap_err());
            assert_eq!(status, 400, "{bad:?}");
            assert!(
                message.as_str().is_some_and(|m| m.starts_with(says)),
                "{message}"
            );
        }
        // A handshake revision's headers mirror nothing: only its envelope is checked.
        let handshake = Era::latest_handshake();
        assert!(!handshake.mirrored_headers() && era.mirrored_headers());
    }
}
