//! Asking the client during a call: elicitation, sampling and roots, on both eras.
//!
//! A method asks through its [`RequestContext`]: [`RequestContext::elicit`] (a form derived
//! from a Rust type), [`RequestContext::elicit_url`], [`RequestContext::sample`] and
//! [`RequestContext::roots`]; [`RequestContext::ask`] names the request's key. The same code
//! runs on both eras:
//!
//! * **Handshake era** (2024-11-05 … 2025-11-25): the request goes out on the call's SSE
//!   stream with a server-generated id; the client POSTs its response on the session and it is
//!   routed to the waiting call ([`crate::Limits::input_wait`] bounds the wait).
//! * **2026-07-28** (multi-round-trip results, SEP-2322): a request that has no answer yet makes
//!   the call end with `resultType: "input_required"`, the open requests keyed in
//!   `inputRequests`, and a signed `requestState`. The client calls again with
//!   `inputResponses` and the state; the method runs again from the start and every request
//!   already answered returns its answer at once (deterministic replay). The state carries
//!   the answers of earlier rounds, bound to the method, its name and a digest of its
//!   arguments, with an expiry, and is authenticated with HMAC-SHA256
//!   ([`RequestStateKeys`]): any instance holding the key serves any round, nothing is kept
//!   in memory between rounds. **Instances behind one address must share the key**
//!   ([`crate::ServerBuilder::request_state_key`]); the default is random per process.
//!
//! To ask several things in one round, await them together (`futures::join!`); asked one
//! after another, each answer costs a round. A method must ask in the same order on every
//! round (the automatic keys `elicit-1`, `sample-2`, ... count the requests).
//!
//! A request needing a capability the client did not declare fails with -32021
//! (`data.requiredCapabilities`); a method that lets that error through is answered with it
//! (HTTP 400 on 2026-07-28). Check first with [`RequestContext::client_supports`].
//!
//! ```
//! use mcp_runtime::prelude::*;
//! use mcp_runtime::mcp::input::Elicited;
//!
//! /// The confirmation form.
//! #[derive(serde::Deserialize, JsonSchema)]
//! struct Confirm {
//!     /// Pay now?
//!     confirm: bool,
//! }
//!
//! async fn pay(ctx: &RequestContext) -> Result<String, RpcError> {
//!     match ctx.elicit::<Confirm>("Pay 12.50 EUR for order 7?").await? {
//!         Elicited::Accepted(Confirm { confirm: true }) => Ok("paid".into()),
//!         _ => Ok("not paid".into()),
//!     }
//! }
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::context::{ClientInput, InputRequest, Notifier, RequestContext};
use crate::error::{RpcError, codes};
use crate::limits::Limits;

// ---------------------------------------------------------------------------------------------
// The typed surface.

/// The client's answer to a form ([`RequestContext::elicit`]) or a URL
/// ([`RequestContext::elicit_url`], with `T = ()`).
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited<T> {
    /// The user accepted: the form's content.
    Accepted(T),
    /// The user declined.
    Declined,
    /// The user dismissed the request without choosing.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The content, if accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accepted(t) => Some(t),
            _ => None,
        }
    }
    /// `accept`, `decline` or `cancel`.
    pub fn action(&self) -> &'static str {
        match self {
            Elicited::Accepted(_) => "accept",
            Elicited::Declined => "decline",
            Elicited::Cancelled => "cancel",
        }
    }
}

/// A `sampling/createMessage` request ([`RequestContext::sample`]).
///
/// ```
/// use mcp_runtime::mcp::input::SamplingRequest;
/// let r = SamplingRequest::new("Summarise: ...", 200).system_prompt("Be brief.");
/// assert_eq!(serde_json::to_value(&r).unwrap()["maxTokens"], 200);
/// ```
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SamplingRequest {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to sample.
    pub max_tokens: u32,
    /// A system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Stop sequences.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// Model preferences (`hints`, priorities), as the specification defines them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
}

impl SamplingRequest {
    /// One user message of text.
    pub fn new(prompt: impl Into<String>, max_tokens: u32) -> Self {
        Self {
            messages: vec![SamplingMessage::user(prompt)],
            max_tokens,
            ..Self::default()
        }
    }
    /// Sets the system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }
}

/// One message of a [`SamplingRequest`].
#[derive(Debug, Clone, Serialize)]
pub struct SamplingMessage {
    /// `user` or `assistant`.
    pub role: &'static str,
    /// The content (`{"type":"text","text":...}`, an image or audio).
    pub content: Value,
}

impl SamplingMessage {
    /// A user message of text.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: "user",
            content: json!({"type": "text", "text": text.into()}),
        }
    }
    /// An assistant message of text.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: "assistant",
            content: json!({"type": "text", "text": text.into()}),
        }
    }
}

/// The client's sampled message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingResult {
    /// Usually `assistant`.
    pub role: String,
    /// The content (text, image or audio; a list when the client sent several blocks).
    pub content: Value,
    /// The model that sampled.
    pub model: String,
    /// Why sampling stopped (`endTurn`, `maxTokens`, ...).
    #[serde(default)]
    pub stop_reason: Option<String>,
}

impl SamplingResult {
    /// The text of the (first) text block.
    pub fn text(&self) -> Option<&str> {
        let block = match &self.content {
            Value::Array(a) => a.iter().find(|b| b["type"] == "text")?,
            b => b,
        };
        block.get("text")?.as_str()
    }
}

/// One of the client's roots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Deserialize)]
struct RootsResult {
    roots: Vec<Root>,
}

#[derive(Deserialize)]
struct ElicitResult {
    action: String,
    #[serde(default)]
    content: Option<Value>,
}

/// The form of [`RequestContext::confirm`].
#[derive(Deserialize, schemars::JsonSchema)]
struct Confirmation {
    /// Confirm
    confirm: bool,
}

/// Asks the client under a chosen key ([`RequestContext::ask`]).
#[derive(Debug)]
pub struct Ask<'c> {
    ctx: &'c RequestContext,
    key: String,
}

impl RequestContext {
    /// Asks the client under `key` (the `inputRequests` key on 2026-07-28) instead of an
    /// automatic one.
    pub fn ask(&self, key: impl Into<String>) -> Ask<'_> {
        Ask {
            ctx: self,
            key: key.into(),
        }
    }

    /// Asks the user to fill a form derived from `T` ([`form_schema`]); see the
    /// [module](crate::mcp::input) for what happens on each era.
    pub async fn elicit<T: DeserializeOwned + schemars::JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, RpcError> {
        self.ask(self.next_input_key("elicit"))
            .elicit(message)
            .await
    }

    /// Sends the user to `url` (URL-mode elicitation; needs the client's `elicitation.url`).
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<Elicited<()>, RpcError> {
        self.ask(self.next_input_key("elicit"))
            .elicit_url(message, url)
            .await
    }

    /// Asks the client's model to sample a message (`sampling/createMessage`).
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingResult, RpcError> {
        self.ask(self.next_input_key("sample"))
            .sample(request)
            .await
    }

    /// The client's roots (`roots/list`).
    pub async fn roots(&self) -> Result<Vec<Root>, RpcError> {
        self.ask(self.next_input_key("roots")).roots().await
    }

    /// Asks the user to confirm (a form of one boolean, `confirm`): `Ok(true)` only when they
    /// accept and tick it; `Ok(false)` when they decline, dismiss or leave it unticked.
    ///
    /// Fail-closed: when the call cannot ask (JSON-RPC; a handshake-era call without a session
    /// and a stream; a client without `elicitation`), it is an error, -32021 with
    /// `data.requiredCapabilities` `{"elicitation":{}}`, which the method lets through with
    /// `?` (the caller is told) or handles on purpose: nothing is done unconfirmed by
    /// accident.
    ///
    /// ```
    /// use mcp_runtime::prelude::*;
    /// # const SHOP: ApiGroup = ApiGroup::mcp("doc_confirm");
    ///
    /// /// Deletes every note.
    /// #[rpc_method(name = "Notes.clear", groups = [SHOP])]
    /// async fn clear(ctx: &RequestContext) -> Result<String, RpcError> {
    ///     if !ctx.confirm("Delete every note?").await? {
    ///         return Ok("kept".into());
    ///     }
    ///     Ok("deleted".into())
    /// }
    /// ```
    pub async fn confirm(&self, message: impl Into<String>) -> Result<bool, RpcError> {
        if self.input_channel().is_none() {
            return Err(RpcError::new(
                codes::MISSING_CLIENT_CAPABILITY,
                "This call needs the user's confirmation and cannot ask its client: over \
                 JSON-RPC, or on the handshake era without a session and an SSE response",
            )
            .with_data(json!({ "requiredCapabilities": { "elicitation": {} } })));
        }
        Ok(matches!(
            self.ask(self.next_input_key("confirm"))
                .elicit::<Confirmation>(message)
                .await?,
            Elicited::Accepted(Confirmation { confirm: true })
        ))
    }

    /// Whether the client declared `capability` (`elicitation`, `sampling`, `roots`); `false`
    /// when the call cannot reach its client at all.
    pub fn client_supports(&self, capability: &str) -> bool {
        self.input_channel().is_some_and(|c| {
            c.capabilities()
                .get(capability)
                .is_some_and(Value::is_object)
        })
    }
}

impl Ask<'_> {
    async fn send(
        self,
        method: &'static str,
        params: Value,
        capability: (&'static str, Option<&'static str>),
    ) -> Result<Value, RpcError> {
        let Some(channel) = self.ctx.input_channel() else {
            return Err(RpcError::runtime(
                "this call cannot ask its client: over HTTP the handshake era needs a session and an SSE response, and JSON-RPC cannot ask at all",
            ));
        };
        channel
            .request(InputRequest {
                key: self.key,
                method,
                params: traced(params),
                capability,
            })
            .await
    }

    /// [`RequestContext::elicit`] under this key.
    pub async fn elicit<T: DeserializeOwned + schemars::JsonSchema>(
        self,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, RpcError> {
        let schema = form_schema::<T>()?;
        let params = json!({"message": message.into(), "requestedSchema": schema});
        let answer = self
            .send("elicitation/create", params, ("elicitation", Some("form")))
            .await?;
        decode_elicited(answer, |content| {
            serde_json::from_value(content.unwrap_or_else(|| json!({}))).map_err(|e| {
                RpcError::invalid_params(format!("the client's form answer does not fit: {e}"))
            })
        })
    }

    /// [`RequestContext::elicit_url`] under this key.
    pub async fn elicit_url(
        self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<Elicited<()>, RpcError> {
        let params = json!({"mode": "url", "message": message.into(), "url": url.into()});
        let answer = self
            .send("elicitation/create", params, ("elicitation", Some("url")))
            .await?;
        decode_elicited(answer, |_| Ok(()))
    }

    /// [`RequestContext::sample`] under this key.
    pub async fn sample(self, request: SamplingRequest) -> Result<SamplingResult, RpcError> {
        let params = serde_json::to_value(&request)
            .map_err(|e| RpcError::internal(format!("the sampling request: {e}")))?;
        let answer = self
            .send("sampling/createMessage", params, ("sampling", None))
            .await?;
        serde_json::from_value(answer).map_err(|e| {
            RpcError::invalid_params(format!("the client's sampling result is invalid: {e}"))
        })
    }

    /// [`RequestContext::roots`] under this key.
    pub async fn roots(self) -> Result<Vec<Root>, RpcError> {
        let answer = self.send("roots/list", json!({}), ("roots", None)).await?;
        serde_json::from_value::<RootsResult>(answer)
            .map(|r| r.roots)
            .map_err(|e| RpcError::invalid_params(format!("the client's roots are invalid: {e}")))
    }
}

/// A request to the client carries the trace context of the call that asks (`_meta`'s
/// `traceparent` and `tracestate`, the MCP convention), when its span is exported.
fn traced(mut params: Value) -> Value {
    let Some(tp) = crate::core::telemetry::context_of(&tracing::Span::current()) else {
        return params;
    };
    if let Value::Object(p) = &mut params {
        let meta = p
            .entry("_meta")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Value::Object(m) = meta {
            m.insert("traceparent".into(), tp.traceparent().into());
            if let Some(state) = tp.tracestate() {
                m.insert("tracestate".into(), state.into());
            }
        }
    }
    params
}

fn decode_elicited<T>(
    answer: Value,
    content: impl FnOnce(Option<Value>) -> Result<T, RpcError>,
) -> Result<Elicited<T>, RpcError> {
    let r: ElicitResult = serde_json::from_value(answer).map_err(|e| {
        RpcError::invalid_params(format!("the client's elicitation result is invalid: {e}"))
    })?;
    match r.action.as_str() {
        "accept" => content(r.content).map(Elicited::Accepted),
        "decline" => Ok(Elicited::Declined),
        "cancel" => Ok(Elicited::Cancelled),
        other => Err(RpcError::invalid_params(format!(
            "unknown elicitation action `{}`",
            other.chars().take(32).collect::<String>()
        ))),
    }
}

/// Whether `answer` has the shape of a result of `method` (a protocol error otherwise).
pub(crate) fn check_answer(method: &str, answer: &Value) -> Result<(), RpcError> {
    let ok = match method {
        "elicitation/create" => serde_json::from_value::<ElicitResult>(answer.clone())
            .is_ok_and(|r| matches!(r.action.as_str(), "accept" | "decline" | "cancel")),
        "sampling/createMessage" => {
            serde_json::from_value::<SamplingResult>(answer.clone()).is_ok()
        }
        "roots/list" => serde_json::from_value::<RootsResult>(answer.clone()).is_ok(),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(RpcError::invalid_params(format!(
            "Invalid inputResponses: not a {method} result"
        )))
    }
}

// ---------------------------------------------------------------------------------------------
// The form schema.

/// The `requestedSchema` of a form for `T`: a flat object of primitive fields, as elicitation
/// allows (strings with `format` email/uri/date/date-time and lengths, numbers and integers
/// with bounds, booleans, single-choice enums untitled (`enum`), titled (`oneOf` of
/// `const`/`title`, from variants with a doc comment or `#[schemars(title)]`) or legacy
/// (`enumNames`), multi-choice enums (`Vec` of an enum: `items.enum` or `items.anyOf`), each
/// with its `default` (SEP-1034: `#[serde(default)]` on the struct takes them from
/// `Default`). Any other field type is an error naming it.
///
/// ```
/// use mcp_runtime::mcp::input::form_schema;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Name {
///     name: String,
///     age: Option<u32>,
/// }
/// assert_eq!(
///     form_schema::<Name>().unwrap(),
///     serde_json::json!({"type":"object","properties":{"name":{"type":"string"},
///         "age":{"type":"integer","minimum":0}},"required":["name"]})
/// );
/// ```
pub fn form_schema<T: schemars::JsonSchema>() -> Result<Value, RpcError> {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let value = serde_json::to_value(&schema).unwrap_or(Value::Null);
    restrict_form(&value).map_err(|m| {
        RpcError::internal(format!(
            "`{}` cannot be an elicitation form: {m}",
            std::any::type_name::<T>()
        ))
    })
}

fn restrict_form(root: &Value) -> Result<Value, String> {
    let props = root
        .get("properties")
        .and_then(Value::as_object)
        .ok_or("not a struct with named fields")?;
    let mut out = Map::new();
    for (name, p) in props {
        out.insert(
            name.clone(),
            form_property(p).map_err(|m| format!("field `{name}`: {m}"))?,
        );
    }
    let required: Vec<Value> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter(|k| k.as_str().is_some_and(|k| out.contains_key(k)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(out));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    Ok(Value::Object(schema))
}

fn copy(out: &mut Map<String, Value>, p: &Map<String, Value>, keys: &[&str]) {
    for k in keys {
        if let Some(v) = p.get(*k) {
            out.insert((*k).to_owned(), v.clone());
        }
    }
}

/// The alternatives of a `oneOf`/`anyOf`, without a `null` one (an `Option`).
fn alternatives(p: &Map<String, Value>) -> Option<Vec<&Map<String, Value>>> {
    let alts = p.get("oneOf").or_else(|| p.get("anyOf"))?.as_array()?;
    Some(
        alts.iter()
            .filter_map(Value::as_object)
            .filter(|a| {
                a.get("type").and_then(Value::as_str) != Some("null")
                    && a.get("const") != Some(&Value::Null)
            })
            .collect(),
    )
}

/// `[{const, title}]` when every alternative is one string constant.
fn titled_options(alts: &[&Map<String, Value>]) -> Option<Vec<Value>> {
    alts.iter()
        .map(|a| {
            let c = a.get("const").and_then(Value::as_str).or_else(|| {
                match a.get("enum").and_then(Value::as_array).map(Vec::as_slice) {
                    Some([one]) => one.as_str(),
                    _ => None,
                }
            })?;
            let title = a
                .get("title")
                .or_else(|| a.get("description"))
                .and_then(Value::as_str)
                .unwrap_or(c);
            Some(json!({"const": c, "title": title}))
        })
        .collect()
}

/// The one non-null `type`.
fn single_type(p: &Map<String, Value>) -> Option<&str> {
    match p.get("type")? {
        Value::String(t) => Some(t),
        Value::Array(ts) => {
            let mut it = ts.iter().filter_map(Value::as_str).filter(|t| *t != "null");
            let t = it.next()?;
            it.next().is_none().then_some(t)
        }
        _ => None,
    }
}

fn form_property(v: &Value) -> Result<Value, String> {
    let p = v.as_object().ok_or("not a schema")?;
    let mut out = Map::new();
    copy(&mut out, p, &["title", "description"]);
    if let Some(alts) = alternatives(p) {
        if let Some(options) = titled_options(&alts) {
            out.insert("type".into(), "string".into());
            out.insert("oneOf".into(), Value::Array(options));
            copy(&mut out, p, &["default"]);
            return Ok(Value::Object(out));
        }
        // `Option<Enum>` and the like: the one non-null alternative, with this one's notes.
        if let [one] = alts.as_slice() {
            let mut merged = (*one).clone();
            for (k, v) in p {
                if !matches!(k.as_str(), "oneOf" | "anyOf") {
                    merged.insert(k.clone(), v.clone());
                }
            }
            return form_property(&Value::Object(merged));
        }
        return Err("a choice of several types".into());
    }
    let ty = match single_type(p) {
        Some(t) => t,
        None if p.get("enum").is_some() => "string",
        None => return Err("no single type".into()),
    };
    match ty {
        "string" => {
            out.insert("type".into(), "string".into());
            if let Some(e) = p.get("enum").and_then(Value::as_array) {
                // An `Option`'s `null` is not a choice: the field is simply not required.
                let e: Vec<Value> = e.iter().filter(|v| !v.is_null()).cloned().collect();
                if !e.iter().all(Value::is_string) {
                    return Err("an enum of non-strings".into());
                }
                out.insert("enum".into(), Value::Array(e.clone()));
                if let Some(names) = p.get("enumNames").and_then(Value::as_array)
                    && names.len() == e.len()
                {
                    out.insert("enumNames".into(), Value::Array(names.clone()));
                }
            }
            copy(&mut out, p, &["minLength", "maxLength"]);
            if let Some(f) = p.get("format").and_then(Value::as_str)
                && matches!(f, "email" | "uri" | "date" | "date-time")
            {
                out.insert("format".into(), f.into());
            }
            if p.get("default").is_some_and(Value::is_string) {
                copy(&mut out, p, &["default"]);
            }
        }
        "integer" | "number" => {
            out.insert("type".into(), ty.into());
            copy(&mut out, p, &["minimum", "maximum"]);
            if p.get("default").is_some_and(Value::is_number) {
                copy(&mut out, p, &["default"]);
            }
        }
        "boolean" => {
            out.insert("type".into(), "boolean".into());
            if p.get("default").is_some_and(Value::is_boolean) {
                copy(&mut out, p, &["default"]);
            }
        }
        "array" => {
            let items = p
                .get("items")
                .and_then(Value::as_object)
                .ok_or("an array without items")?;
            let item = if let Some(options) = alternatives(items).and_then(|a| titled_options(&a)) {
                json!({"anyOf": options})
            } else if let Some(e) = items.get("enum").and_then(Value::as_array)
                && !e.is_empty()
                && e.iter().all(Value::is_string)
            {
                json!({"type": "string", "enum": e})
            } else {
                return Err("an array that is not a multi-choice enum of strings".into());
            };
            out.insert("type".into(), "array".into());
            out.insert("items".into(), item);
            copy(&mut out, p, &["minItems", "maxItems"]);
            if p.get("default").is_some_and(Value::is_array) {
                copy(&mut out, p, &["default"]);
            }
        }
        other => return Err(format!("type `{other}` is not a primitive")),
    }
    Ok(Value::Object(out))
}

// ---------------------------------------------------------------------------------------------
// Capabilities.

/// Whether `caps` declares `capability` (and its member, if any: `elicitation: {}` means
/// form only).
pub(crate) fn supports(caps: &Value, (capability, member): (&str, Option<&str>)) -> bool {
    let Some(c) = caps.get(capability).and_then(Value::as_object) else {
        return false;
    };
    match member {
        None => true,
        Some("form") => c.is_empty() || c.contains_key("form"),
        Some(m) => c.contains_key(m),
    }
}

/// The -32021 error of a request the client cannot take.
pub fn missing_capability((capability, member): (&str, Option<&str>)) -> RpcError {
    let wanted = match member {
        Some(m) if m != "form" => json!({ capability: { m: {} } }),
        _ => json!({ capability: {} }),
    };
    RpcError::new(
        codes::MISSING_CLIENT_CAPABILITY,
        format!("The client did not declare the `{capability}` capability this call needs"),
    )
    .with_data(json!({ "requiredCapabilities": wanted }))
}

/// The client capabilities kept for a session: the three the server may use, each an object
/// (members kept only while small).
pub(crate) fn kept_capabilities(declared: Option<&Value>) -> Value {
    let mut out = Map::new();
    for k in ["elicitation", "sampling", "roots"] {
        if let Some(Value::Object(c)) = declared.and_then(|d| d.get(k)) {
            let small = serde_json::to_string(c).map_or(0, |s| s.len()) <= 256;
            out.insert(
                k.into(),
                if small {
                    Value::Object(c.clone())
                } else {
                    json!({})
                },
            );
        }
    }
    Value::Object(out)
}

/// Where an error the channel recorded is kept for the face.
#[derive(Default)]
struct Refusal(Mutex<Option<(i32, String, Option<Value>)>>);

impl Refusal {
    fn set(&self, e: &RpcError, data: Option<Value>) {
        if let Ok(mut r) = self.0.lock() {
            r.get_or_insert_with(|| (e.code(), e.message().to_owned(), data));
        }
    }
    fn get(&self) -> Option<RpcError> {
        let r = self.0.lock().ok()?;
        let (code, message, data) = r.as_ref()?;
        let e = RpcError::new(*code, message.clone());
        Some(match data {
            Some(d) => e.with_data(d.clone()),
            None => e,
        })
    }
}

fn refuse_missing(refusal: &Refusal, capability: (&'static str, Option<&'static str>)) -> RpcError {
    let e = missing_capability(capability);
    let wanted = match capability.1 {
        Some(m) if m != "form" => json!({ capability.0: { m: {} } }),
        _ => json!({ capability.0: {} }),
    };
    refusal.set(&e, Some(json!({ "requiredCapabilities": wanted })));
    e
}

// ---------------------------------------------------------------------------------------------
// The request state (2026-07-28).

/// The keys that sign and check `requestState`: the current one signs, every one checks (so a
/// key can be rotated: add the new one as current and keep the old one as previous until the
/// states it signed have expired, [`crate::Limits::input_state_ttl`]).
///
/// Instances that serve one address must share the keys. The default
/// ([`RequestStateKeys::random`]) is random per process: a retry reaching another instance,
/// or one after a restart, is refused (-32602) and the client must start the call again.
#[derive(Clone)]
pub struct RequestStateKeys {
    current: Arc<[u8]>,
    previous: Vec<Arc<[u8]>>,
}

impl std::fmt::Debug for RequestStateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestStateKeys")
            .field("previous", &self.previous.len())
            .finish_non_exhaustive()
    }
}

impl Default for RequestStateKeys {
    fn default() -> Self {
        Self::random()
    }
}

impl RequestStateKeys {
    /// 32 random bytes from the OS (a time-based fallback where it has none).
    pub fn random() -> Self {
        let mut k = [0u8; 32];
        if getrandom::fill(&mut k).is_err() {
            let t = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            k = Sha256::digest(t.as_nanos().to_le_bytes()).into();
        }
        Self::new(k.to_vec())
    }
    /// A key from configuration (at least 32 random bytes recommended).
    pub fn new(key: impl Into<Vec<u8>>) -> Self {
        Self {
            current: Arc::from(key.into()),
            previous: Vec::new(),
        }
    }
    /// Also accepts states signed with `key` (rotation).
    pub fn with_previous(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.previous.push(Arc::from(key.into()));
        self
    }

    fn sign(&self, msg: &[u8]) -> [u8; 32] {
        hmac_sha256(&self.current, msg)
    }

    fn verify(&self, msg: &[u8], mac: &[u8]) -> bool {
        use subtle::ConstantTimeEq;
        std::iter::once(&self.current)
            .chain(&self.previous)
            .any(|k| bool::from(hmac_sha256(k, msg).as_slice().ct_eq(mac)))
    }
}

/// HMAC-SHA256 (RFC 2104).
fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    use hmac::Mac as _;
    // HMAC takes a key of any length: `new_from_slice` cannot fail for it.
    match hmac::Hmac::<Sha256>::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(msg);
            mac.finalize().into_bytes().into()
        }
        Err(_) => [0; 32],
    }
}

/// What a state says.
#[derive(Serialize, Deserialize)]
struct StatePayload {
    /// The method (`tools/call`, ...).
    m: String,
    /// The tool or prompt name, or the resource URI.
    n: String,
    /// The digest of the arguments.
    d: String,
    /// Expiry, in seconds since the epoch.
    e: u64,
    /// The round that issued it (1 for the first `input_required`).
    r: usize,
    /// The answers of earlier rounds, by key.
    a: Map<String, Value>,
    /// The keys this state's round asked for: the only `inputResponses` the next round reads.
    #[serde(default)]
    q: Vec<String>,
}

const STATE_PREFIX: &str = "v1.";
const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A value's digest with object keys sorted (so a client re-serializing the same arguments
/// in another order still matches).
fn digest(v: &Value) -> String {
    fn write(h: &mut Sha256, v: &Value) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                h.update(b"{");
                for k in keys {
                    h.update(serde_json::to_string(k).unwrap_or_default().as_bytes());
                    h.update(b":");
                    write(h, &m[k]);
                    h.update(b",");
                }
                h.update(b"}");
            }
            Value::Array(a) => {
                h.update(b"[");
                for x in a {
                    write(h, x);
                    h.update(b",");
                }
                h.update(b"]");
            }
            other => h.update(other.to_string().as_bytes()),
        }
    }
    let mut h = Sha256::new();
    write(&mut h, v);
    let mut out = String::with_capacity(64);
    crate::ids::push_hex(&mut out, &h.finalize());
    out
}

fn bad_state(why: &str) -> RpcError {
    RpcError::invalid_params(format!("Invalid requestState: {why}"))
}

// ---------------------------------------------------------------------------------------------
// One round of a 2026-07-28 call.

/// One round of a 2026-07-28 call that may ask its client: the answers it has (from the
/// state and `inputResponses`), the requests still open, and what the face answers when the
/// method stops to ask.
pub(crate) struct Round {
    caps: Value,
    keys: RequestStateKeys,
    limits: Arc<Limits>,
    method: String,
    name: String,
    digest: String,
    round: usize,
    answers: Map<String, Value>,
    used: Mutex<Map<String, Value>>,
    pending: Mutex<Vec<InputRequest>>,
    refusal: Refusal,
}

impl Round {
    /// The answers of this call's rounds so far, by key.
    pub(crate) fn answers(&self) -> &Map<String, Value> {
        &self.answers
    }

    /// Reads a call's `inputResponses` and `requestState` (taken out of `params`): an invalid
    /// one is the -32602 to answer. Without a state, answers are read only `in_advance`.
    pub(crate) fn open(
        keys: &RequestStateKeys,
        limits: &Arc<Limits>,
        method: &str,
        params: &mut Map<String, Value>,
        caps: Value,
        in_advance: bool,
    ) -> Result<Round, RpcError> {
        let (name_key, args_key) = match method {
            "resources/read" => ("uri", "uri"),
            _ => ("name", "arguments"),
        };
        let name = params
            .get(name_key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let digest = digest(params.get(args_key).unwrap_or(&Value::Null));
        let responses = match params.remove("inputResponses") {
            None => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "Invalid request parameters: `inputResponses` must be an object",
                ));
            }
        };
        let mut round = Round {
            caps,
            keys: keys.clone(),
            limits: limits.clone(),
            method: method.to_owned(),
            name,
            digest,
            round: 0,
            answers: Map::new(),
            used: Mutex::default(),
            pending: Mutex::default(),
            refusal: Refusal::default(),
        };
        // With a state, only what it says its round asked is answered (no answers slipped in
        // for questions a later round would put). Without one, nothing was asked: no answer
        // is read (a confirmation is shown before it is answered), unless the group lets a
        // client answer in advance (SEP-2322 allows it).
        let asked = match params.remove("requestState") {
            None | Some(Value::Null) if in_advance => None,
            None | Some(Value::Null) => Some(Vec::new()),
            Some(Value::String(s)) => {
                let p = round.verify(&s)?;
                round.round = p.r;
                round.answers = p.a;
                Some(p.q)
            }
            Some(_) => return Err(bad_state("not a string")),
        };
        // Earlier rounds' answers stand; this round's fill the rest.
        for (k, v) in responses {
            if asked.as_ref().is_none_or(|q| q.contains(&k)) {
                round.answers.entry(k).or_insert(v);
            }
        }
        Ok(round)
    }

    fn verify(&self, state: &str) -> Result<StatePayload, RpcError> {
        if state.len() > self.limits.input_state_bytes {
            return Err(bad_state("too large"));
        }
        let rest = state
            .strip_prefix(STATE_PREFIX)
            .ok_or_else(|| bad_state("unknown format"))?;
        let (payload, mac) = rest
            .split_once('.')
            .ok_or_else(|| bad_state("unknown format"))?;
        let mac = B64
            .decode(mac)
            .map_err(|_| bad_state("integrity check failed"))?;
        let signed = &state.as_bytes()[..STATE_PREFIX.len() + payload.len()];
        if mac.len() != 32 || !self.keys.verify(signed, &mac) {
            return Err(bad_state("integrity check failed"));
        }
        let bytes = B64
            .decode(payload)
            .map_err(|_| bad_state("integrity check failed"))?;
        let p: StatePayload =
            serde_json::from_slice(&bytes).map_err(|_| bad_state("unknown format"))?;
        if p.m != self.method || p.n != self.name || p.d != self.digest {
            return Err(bad_state("it belongs to another request"));
        }
        if p.e < now_secs() {
            return Err(bad_state("expired; call again without it"));
        }
        if p.r >= self.limits.input_rounds {
            return Err(RpcError::invalid_params(format!(
                "Too many rounds: a call may ask its client at most {} times",
                self.limits.input_rounds
            )));
        }
        Ok(p)
    }

    fn sign(&self, answers: Map<String, Value>, asked: Vec<String>) -> Result<String, RpcError> {
        let payload = StatePayload {
            m: self.method.clone(),
            n: self.name.clone(),
            d: self.digest.clone(),
            e: now_secs() + self.limits.input_state_ttl.as_secs(),
            r: self.round + 1,
            a: answers,
            q: asked,
        };
        let json = serde_json::to_vec(&payload)
            .map_err(|e| RpcError::internal(format!("the request state: {e}")))?;
        let mut state = String::from(STATE_PREFIX);
        B64.encode_string(json, &mut state);
        let mac = self.keys.sign(state.as_bytes());
        state.push('.');
        B64.encode_string(mac, &mut state);
        if state.len() > self.limits.input_state_bytes {
            return Err(RpcError::internal(format!(
                "the answers gathered exceed the request state's bound of {} bytes",
                self.limits.input_state_bytes
            )));
        }
        Ok(state)
    }

    fn answer(&self, req: InputRequest) -> Result<Value, RpcError> {
        if !supports(&self.caps, req.capability) {
            return Err(refuse_missing(&self.refusal, req.capability));
        }
        if let Some(a) = self.answers.get(&req.key) {
            if let Err(e) = check_answer(req.method, a) {
                self.refusal.set(&e, None);
                return Err(e);
            }
            if let Ok(mut used) = self.used.lock() {
                used.insert(req.key, a.clone());
            }
            return Ok(a.clone());
        }
        let Ok(mut pending) = self.pending.lock() else {
            return Err(RpcError::internal("input requests unavailable"));
        };
        if pending.iter().any(|p| p.key == req.key) {
            return Err(RpcError::internal(format!(
                "two input requests under one key `{}`",
                req.key
            )));
        }
        if pending.len() >= self.limits.input_requests {
            let e = RpcError::internal(format!(
                "at most {} input requests per round",
                self.limits.input_requests
            ));
            self.refusal.set(&e, None);
            return Err(e);
        }
        pending.push(req);
        Err(RpcError::runtime(
            "input required from the client (answered as an input_required result)",
        ))
    }
}

impl ClientInput for Round {
    fn capabilities(&self) -> &Value {
        &self.caps
    }
    fn request(&self, req: InputRequest) -> BoxFuture<'_, Result<Value, RpcError>> {
        Box::pin(std::future::ready(self.answer(req)))
    }
    fn interrupted(&self) -> Option<Result<Value, RpcError>> {
        let pending = std::mem::take(&mut *self.pending.lock().ok()?);
        if pending.is_empty() {
            return self.refusal.get().map(Err);
        }
        let used = std::mem::take(&mut *self.used.lock().ok()?);
        let asked = pending.iter().map(|r| r.key.clone()).collect();
        let state = match self.sign(used, asked) {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        let mut requests = Map::new();
        for r in pending {
            requests.insert(r.key, json!({"method": r.method, "params": r.params}));
        }
        Some(Ok(
            json!({"inputRequests": requests, "requestState": state}),
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// The handshake era: requests on the call's stream.

type Waiting = tokio::sync::oneshot::Sender<Result<Value, RpcError>>;

/// The requests an endpoint sent on call streams and waits answers for, by id; bounded.
#[derive(Default)]
pub(crate) struct Waiters {
    inner: Mutex<HashMap<String, (String, Waiting)>>,
}

impl Waiters {
    fn register(
        &self,
        session: &str,
        max: usize,
    ) -> Result<
        (
            String,
            tokio::sync::oneshot::Receiver<Result<Value, RpcError>>,
        ),
        RpcError,
    > {
        let mut m = self
            .inner
            .lock()
            .map_err(|_| RpcError::internal("input requests unavailable"))?;
        m.retain(|_, (_, tx)| !tx.is_closed());
        if m.len() >= max {
            return Err(RpcError::internal(
                "Server busy: too many requests to clients waiting, try again later",
            ));
        }
        let id = format!("s-{}", crate::ids::random_id());
        let (tx, rx) = tokio::sync::oneshot::channel();
        m.insert(id.clone(), (session.to_owned(), tx));
        Ok((id, rx))
    }

    fn forget(&self, id: &str) {
        if let Ok(mut m) = self.inner.lock() {
            m.remove(id);
        }
    }

    /// Routes a client's response (its id's JSON text, its result or error) to the call
    /// waiting for it on `session`; returns whether one was.
    pub(crate) fn deliver(
        &self,
        session: &str,
        id: &str,
        result: Option<&str>,
        error: Option<&str>,
    ) -> bool {
        let Ok(id) = serde_json::from_str::<String>(id) else {
            return false;
        };
        let Ok(mut m) = self.inner.lock() else {
            return false;
        };
        if m.get(&id).is_none_or(|(s, _)| s != session) {
            return false;
        }
        let Some((_, tx)) = m.remove(&id) else {
            return false;
        };
        drop(m);
        let outcome = match (result, error) {
            (Some(r), _) => serde_json::from_str(r)
                .map_err(|_| RpcError::invalid_params("the client's result is not JSON")),
            (None, Some(e)) => {
                let e: Value = serde_json::from_str(e).unwrap_or(Value::Null);
                let code = e["code"].as_i64().and_then(|c| i32::try_from(c).ok());
                let message: String = e["message"]
                    .as_str()
                    .unwrap_or("the client refused")
                    .chars()
                    .take(256)
                    .collect();
                Err(RpcError::new(
                    code.unwrap_or(codes::INTERNAL_ERROR),
                    message,
                ))
            }
            (None, None) => Err(RpcError::invalid_params("an empty response")),
        };
        tx.send(outcome).is_ok()
    }
}

/// The client capabilities a handshake-era call may ask within: read from the session's
/// state only when the call asks its client or looks at them (most calls never do).
pub(crate) struct Capabilities {
    /// The session's stored state, whose `caps=` line holds them.
    session_state: Option<Arc<str>>,
    value: std::sync::OnceLock<Value>,
}

impl Capabilities {
    /// Capabilities already read (stdio keeps them for the connection).
    pub(crate) fn parsed(value: Value) -> Self {
        Self {
            session_state: None,
            value: std::sync::OnceLock::from(value),
        }
    }

    /// Capabilities as a session keeps them: `state` is the session's whole stored text
    /// ([`crate::mcp::session::SessionState`]).
    pub(crate) fn of_session(state: Option<Arc<str>>) -> Self {
        Self {
            session_state: state,
            value: std::sync::OnceLock::new(),
        }
    }

    fn get(&self) -> &Value {
        self.value.get_or_init(|| {
            self.session_state
                .as_deref()
                .and_then(crate::mcp::session::SessionState::capabilities_of)
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or_else(|| json!({}))
        })
    }
}

/// A handshake-era call's way to its client: requests on its SSE stream, answers routed back
/// from the session's POSTs ([`Waiters`]).
pub(crate) struct StreamInput {
    pub(crate) notifier: Arc<dyn Notifier>,
    pub(crate) caps: Capabilities,
    pub(crate) waiters: Arc<Waiters>,
    pub(crate) session: Arc<str>,
    pub(crate) limits: Arc<Limits>,
    refusal: Refusal,
}

impl StreamInput {
    pub(crate) fn new(
        notifier: Arc<dyn Notifier>,
        caps: Capabilities,
        waiters: Arc<Waiters>,
        session: Arc<str>,
        limits: Arc<Limits>,
    ) -> Self {
        Self {
            notifier,
            caps,
            waiters,
            session,
            limits,
            refusal: Refusal::default(),
        }
    }

    async fn ask(&self, req: InputRequest) -> Result<Value, RpcError> {
        if !supports(self.caps.get(), req.capability) {
            return Err(refuse_missing(&self.refusal, req.capability));
        }
        let max = self
            .limits
            .input_requests
            .saturating_mul(self.limits.detached_calls);
        let (id, rx) = self.waiters.register(&self.session, max)?;
        let msg = crate::wire::request_body(crate::wire::Id::Str(&id), req.method, &req.params);
        self.notifier.notify(msg);
        // Until the answer comes, the request is withdrawn if the wait ends otherwise: the
        // time limit, or the call itself cancelled (its future dropped).
        let mut pending = Pending {
            input: self,
            id: Some(id),
            reason: "the call was cancelled",
        };
        let wait = self.limits.input_wait;
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(outcome)) => {
                pending.id = None;
                let v = outcome?;
                check_answer(req.method, &v)?;
                Ok(v)
            }
            Ok(Err(_)) => Err(RpcError::internal("the request to the client was dropped")),
            Err(_) => {
                pending.reason = "timed out";
                Err(RpcError::runtime(format!(
                    "the client did not answer {} within {} ms",
                    req.method,
                    wait.as_millis()
                )))
            }
        }
    }
}

/// `notifications/cancelled` params.
#[derive(serde::Serialize)]
struct Cancelled<'a> {
    #[serde(rename = "requestId")]
    request_id: &'a str,
    reason: &'a str,
}

/// A request sent to the client and not answered: withdrawn (`notifications/cancelled`, and
/// its waiter forgotten) when dropped.
struct Pending<'a> {
    input: &'a StreamInput,
    id: Option<String>,
    reason: &'static str,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        self.input.waiters.forget(&id);
        let params = Cancelled {
            request_id: &id,
            reason: self.reason,
        };
        let cancel = crate::wire::notification_body("notifications/cancelled", Some(&params));
        self.input.notifier.notify(cancel);
    }
}

impl ClientInput for StreamInput {
    fn capabilities(&self) -> &Value {
        self.caps.get()
    }
    fn request(&self, req: InputRequest) -> BoxFuture<'_, Result<Value, RpcError>> {
        Box::pin(self.ask(req))
    }
    fn interrupted(&self) -> Option<Result<Value, RpcError>> {
        self.refusal.get().map(Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    fn round(params: Value, caps: Value) -> Result<Round, RpcError> {
        let Value::Object(mut p) = params else {
            unreachable!()
        };
        Round::open(
            &RequestStateKeys::new(b"k".to_vec()),
            &Arc::new(Limits::default()),
            "tools/call",
            &mut p,
            caps,
            false,
        )
    }

    fn ask(key: &str) -> InputRequest {
        InputRequest {
            key: key.into(),
            method: "roots/list",
            params: json!({}),
            capability: ("roots", None),
        }
    }

    #[test]
    fn a_state_round_trips_and_a_tampered_one_is_refused() {
        let r = round(
            json!({"name": "t", "arguments": {"a": 1}}),
            json!({"roots": {}}),
        )
        .unwrap();
        assert!(r.answer(ask("x")).is_err());
        let Some(Ok(members)) = r.interrupted() else {
            panic!("input required")
        };
        let state = members["requestState"].as_str().unwrap().to_owned();
        let answer = json!({"roots": [{"uri": "file:///a"}]});
        let r2 = round(
            json!({"name": "t", "arguments": {"a": 1}, "requestState": state, "inputResponses": {"x": answer}}),
            json!({"roots": {}}),
        )
        .unwrap();
        assert_eq!(r2.answer(ask("x")).unwrap(), answer);
        // An answer to a question the state did not ask is not read.
        let r3 = round(
            json!({"name": "t", "arguments": {"a": 1}, "requestState": state, "inputResponses": {"y": answer}}),
            json!({"roots": {}}),
        )
        .unwrap();
        assert!(r3.answer(ask("y")).is_err(), "y was never asked");
        // Without a state nothing was asked: no answer is read, unless answers may come in
        // advance.
        let first = json!({"name": "t", "arguments": {"a": 1}, "inputResponses": {"x": answer}});
        let r4 = round(first.clone(), json!({"roots": {}})).unwrap();
        assert!(r4.answer(ask("x")).is_err(), "no state, no answers");
        let Value::Object(mut p) = first else {
            unreachable!()
        };
        let r5 = Round::open(
            &RequestStateKeys::new(b"k".to_vec()),
            &Arc::new(Limits::default()),
            "tools/call",
            &mut p,
            json!({"roots": {}}),
            true,
        )
        .unwrap();
        assert_eq!(r5.answer(ask("x")).unwrap(), answer);
        for bad in [format!("{state}-TAMPERED"), state.replace("v1.", "v1.e")] {
            let e = round(
                json!({"name": "t", "arguments": {"a": 1}, "requestState": bad}),
                json!({}),
            )
            .err()
            .unwrap();
            assert_eq!(e.code(), -32602);
        }
        // Another tool's arguments: refused.
        let e = round(
            json!({"name": "t", "arguments": {"a": 2}, "requestState": state}),
            json!({}),
        )
        .err()
        .unwrap();
        assert!(e.message().contains("another request"));
    }

    #[test]
    fn a_missing_capability_is_32021_with_an_object() {
        let r = round(json!({"name": "t"}), json!({})).unwrap();
        let e = r.answer(ask("x")).unwrap_err();
        assert_eq!(e.code(), -32021);
        let Some(Err(e)) = r.interrupted() else {
            panic!("refused")
        };
        assert_eq!(
            e.to_wire(&crate::Environment::PROD)["data"],
            json!({"requiredCapabilities": {"roots": {}}})
        );
    }
}
