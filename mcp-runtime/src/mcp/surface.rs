//! Resources, resource templates, prompts and completions on the MCP face: their list items
//! (precomputed per language), `resources/read`, `prompts/get` and `completion/complete`.
//!
//! Reading a resource and getting a prompt are calls through the core pipeline, as
//! `tools/call` is: listeners, cache, time limits, panics caught, logs and progress.

use std::borrow::Cow;
use std::collections::BTreeMap;

use futures_util::FutureExt as _;
use serde_json::{Map, Value};

use super::handler::{Answer, McpEndpoint, Message};
use super::items::Texts;
use super::protocol::Era;
use crate::catalog::{MethodInfo, bind_strings};
use crate::completion::{Completion, CompletionRequest};
use crate::context::{CallExtras, Face};
use crate::core::CallRequest;
use crate::error::{RpcError, codes, shown};
use crate::output::Output;
use crate::record::CompletionDef;

/// A URI from the params, within [`crate::Limits::uri_bytes`], or the -32602 answer (a longer
/// one is never matched nor echoed).
pub(crate) fn bounded_uri<'p>(
    ep: &McpEndpoint,
    id: Option<&Value>,
    era: Era,
    uri: Option<&'p str>,
) -> Result<&'p str, Answer> {
    let max = ep.limits.uri_bytes;
    match uri {
        Some(u) if u.len() <= max && !u.contains(['\n', '\r']) => Ok(u),
        Some(u) if u.len() > max => Err(ep.error(
            id,
            era,
            codes::INVALID_PARAMS,
            &format!("Invalid request parameters: the URI is longer than {max} bytes"),
            None,
        )),
        _ => Err(ep.error(
            id,
            era,
            codes::INVALID_PARAMS,
            "Invalid request parameters: `uri` must be a URI string",
            None,
        )),
    }
}

/// A string member of the params, or the -32602 answer naming it.
fn string_param<'p>(
    ep: &McpEndpoint,
    id: Option<&Value>,
    era: Era,
    params: Option<&'p Value>,
    key: &str,
) -> Result<&'p str, Answer> {
    params
        .and_then(|p| p.get(key))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ep.error(
                id,
                era,
                codes::INVALID_PARAMS,
                &format!("Invalid request parameters: `{key}` must be a string"),
                None,
            )
        })
}

impl McpEndpoint {
    /// Applies a `resources/subscribe` or `resources/unsubscribe` to a session's list: the
    /// URI must name a resource (subscribe), the list holds at most
    /// [`crate::Limits::subscriptions`]; the error is the answer.
    pub(crate) fn apply_subscription(
        &self,
        subs: &mut Vec<String>,
        msg: &Message,
        era: Era,
    ) -> Result<(), Answer> {
        let id = msg.id.as_ref();
        let uri = msg
            .params
            .as_ref()
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str);
        let uri = bounded_uri(self, id, era, uri)?;
        if msg.method == "resources/unsubscribe" {
            subs.retain(|u| u != uri);
            return Ok(());
        }
        if self.catalog.resolve(uri).is_none() {
            return Err(self.resource_not_found(id, era, uri));
        }
        if !subs.iter().any(|u| u == uri) {
            if subs.len() >= self.limits.subscriptions {
                let m = format!(
                    "at most {} resource subscriptions per session",
                    self.limits.subscriptions
                );
                return Err(self.error(id, era, codes::INVALID_PARAMS, &m, None));
            }
            let bytes: usize = subs.iter().map(String::len).sum::<usize>() + uri.len();
            if bytes > self.limits.subscription_bytes {
                let m = format!(
                    "at most {} bytes of subscribed URIs per session",
                    self.limits.subscription_bytes
                );
                return Err(self.error(id, era, codes::INVALID_PARAMS, &m, None));
            }
            subs.push(uri.to_owned());
        }
        Ok(())
    }

    /// Runs a resource's or prompt's function through the core pipeline, as `tools/call` runs
    /// a method's.
    fn run<'a>(
        &'a self,
        info: &'a MethodInfo,
        args: Map<String, Value>,
        extras: CallExtras,
    ) -> crate::core::Calling<'a> {
        self.core.call(CallRequest {
            catalog: &self.catalog,
            info,
            params: Some(Value::Object(args)),
            face: Face::Mcp,
            extras,
        })
    }

    /// The answer to a call's error: argument values the schema refuses are -32602 (naming
    /// them), a "not found" from the function is the era's resource-not-found when `uri` is
    /// given, anything else keeps its code.
    fn call_error(&self, id: Option<&Value>, era: Era, e: RpcError, uri: Option<&str>) -> Answer {
        if e.is_schema_failure() {
            let list = e.violation_list().unwrap_or_default();
            let parts: Vec<String> = list
                .iter()
                .take(3)
                .map(|v| format!("'{}': {}", v.pointer.trim_start_matches('/'), v.message))
                .collect();
            let message = format!("Invalid arguments: {}", parts.join("; "));
            return self.error(id, era, codes::INVALID_PARAMS, &message, None);
        }
        if let (Some(uri), codes::DATA_NOT_FOUND) = (uri, e.code()) {
            return self.resource_not_found(id, era, uri);
        }
        let wire = e.to_wire(self.core.env());
        self.error(id, era, e.code(), e.message(), wire.get("data"))
    }

    /// Resource not found: -32002 on the handshake era, -32602 on 2026-07-28 (SEP-2164);
    /// `data.uri` either way.
    pub(crate) fn resource_not_found(&self, id: Option<&Value>, era: Era, uri: &str) -> Answer {
        let code = era.resource_not_found();
        let data = serde_json::json!({ "uri": shown(uri) });
        self.error(id, era, code, "Resource not found", Some(&data))
    }

    /// `resources/read`.
    pub(crate) async fn resources_read(
        &self,
        id: Option<&Value>,
        params: Option<Value>,
        era: Era,
        extras: CallExtras,
    ) -> Answer {
        let uri = params
            .as_ref()
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str);
        let uri = match bounded_uri(self, id, era, uri) {
            Ok(u) => u,
            Err(a) => return a,
        };
        if let Some((skill, file)) = self.catalog.skill_file(uri) {
            if let Some((refused, _)) = self.skill_refusal(id, skill, extras.identity.as_deref()) {
                return refused;
            }
            let lang = self.language(extras.language.as_deref());
            if let Some(file) = skill.variant(Some(lang)).files.get(file) {
                return self.skill_read(id, era, file);
            }
        }
        let Some((r, vars)) = self.catalog.resolve(uri) else {
            return self.resource_not_found(id, era, uri);
        };
        let args = bind_strings(&r.args, vars);
        let input = extras.input.clone();
        let out = match self.run(&r.call, args, extras).await {
            Ok(out) => out,
            Err(e) => {
                if let Some(a) = self.interrupted(id, era, input.as_ref()) {
                    return a;
                }
                return self.call_error(id, era, e, Some(uri));
            }
        };
        let contents = match contents(out, uri, r.def.mime_type, r.app_meta.as_ref()) {
            Ok(c) => c,
            Err(e) => return self.call_error(id, era, e, None),
        };
        if contents.is_empty() {
            // SEP-2164: never an empty read; the function found nothing.
            return self.resource_not_found(id, era, uri);
        }
        let mut members = Vec::with_capacity(64);
        members.extend_from_slice(b"\"contents\":");
        // Values of strings and maps: serialization cannot fail.
        let _ = serde_json::to_writer(&mut members, &contents);
        if era.typed_results() {
            // The hint follows the server's own cache rule for the resource; a protected
            // group's reads are the caller's.
            let ttl = r.call.def.cache.map_or(0, |c| c.ttl_ms);
            let scope = if self.catalog.group().is_protected() {
                "private"
            } else {
                "public"
            };
            members.extend_from_slice(
                format!(",\"ttlMs\":{ttl},\"cacheScope\":\"{scope}\"").as_bytes(),
            );
        }
        self.ok(id, era, &members)
    }

    /// `prompts/get`.
    pub(crate) async fn prompts_get(
        &self,
        id: Option<&Value>,
        params: Option<Value>,
        era: Era,
        extras: CallExtras,
    ) -> Answer {
        let name = match string_param(self, id, era, params.as_ref(), "name") {
            Ok(n) => n,
            Err(a) => return a,
        };
        let Some(p) = self.catalog.prompt(name) else {
            let m = format!("Unknown prompt: {}", shown(name));
            return self.error(id, era, codes::INVALID_PARAMS, &m, None);
        };
        let mut args = Map::new();
        match params.as_ref().and_then(|x| x.get("arguments")) {
            None | Some(Value::Null) => {}
            Some(Value::Object(given)) => {
                let strings = given
                    .iter()
                    .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?.to_owned())));
                args = bind_strings(&p.args, strings);
                // Values sent as JSON rather than strings are taken as they are.
                for (k, v) in given.iter().filter(|(_, v)| !v.is_string()) {
                    args.insert(k.clone(), v.clone());
                }
            }
            Some(_) => {
                return self.error(
                    id,
                    era,
                    codes::INVALID_PARAMS,
                    "Invalid request parameters: `arguments` must be an object",
                    None,
                );
            }
        }
        let lang = extras.language.clone();
        let input = extras.input.clone();
        let out = match self.run(&p.call, args, extras).await {
            Ok(out) => out,
            Err(e) => {
                if let Some(a) = self.interrupted(id, era, input.as_ref()) {
                    return a;
                }
                return self.call_error(id, era, e, None);
            }
        };
        let lang = self.language(lang.as_deref());
        match prompt_result(out, || {
            Texts::of(
                &p.call,
                &self.translations,
                self.catalog.group().name(),
                lang,
            )
            .description
            .map(Cow::into_owned)
        }) {
            Ok(members) => self.ok(id, era, &members),
            Err(e) => self.call_error(id, era, e, None),
        }
    }

    /// `completion/complete`.
    /// `completion/complete`; a prompt or template `identity` may not use is unknown to it,
    /// as its lists do not show it.
    pub(crate) async fn complete(
        &self,
        id: Option<&Value>,
        params: Option<Value>,
        era: Era,
        identity: Option<&crate::Identity>,
    ) -> Answer {
        let invalid = |m: &str| self.error(id, era, codes::INVALID_PARAMS, m, None);
        let Some(Value::Object(params)) = params else {
            return invalid("Invalid request parameters");
        };
        let reference = params.get("ref");
        let kind = reference
            .and_then(|r| r.get("type"))
            .and_then(Value::as_str);
        let member = |key: &str| reference.and_then(|r| r.get(key)).and_then(Value::as_str);
        // What a prompt or a template completes: its functions and its arguments' names.
        let of = |completions: &'static [CompletionDef], method: &crate::MethodDef| {
            let names: Vec<&str> = method.params.iter().map(|x| x.name).collect();
            (completions, names)
        };
        let (completions, names) = match kind {
            Some("ref/prompt") => {
                let Some(name) = member("name") else {
                    return invalid("Invalid request parameters: `ref.name` must be a string");
                };
                match self.catalog.prompt(name) {
                    Some(p) if p.call.admits(identity) => of(p.def.completions, p.def.method),
                    _ => return invalid(&format!("Unknown prompt: {}", shown(name))),
                }
            }
            Some("ref/resource") => {
                let Some(uri) = member("uri") else {
                    return invalid("Invalid request parameters: `ref.uri` must be a string");
                };
                match self.catalog.template(uri) {
                    Some(r) if r.call.admits(identity) => of(r.def.completions, r.def.method),
                    _ => return invalid(&format!("Unknown resource template: {}", shown(uri))),
                }
            }
            _ => {
                return invalid(
                    "Invalid request parameters: `ref.type` must be \"ref/prompt\" or \"ref/resource\"",
                );
            }
        };
        let argument = params.get("argument");
        let (Some(arg), Some(value)) = (
            argument.and_then(|a| a.get("name")).and_then(Value::as_str),
            argument
                .and_then(|a| a.get("value"))
                .and_then(Value::as_str),
        ) else {
            return invalid(
                "Invalid request parameters: `argument` must have a string `name` and `value`",
            );
        };
        if !names.contains(&arg) {
            return invalid(&format!("Unknown argument: {}", shown(arg)));
        }
        let completion = match completions.iter().find(|c| c.argument == arg) {
            None => Ok(Completion::default()),
            Some(c) => {
                let arguments: BTreeMap<String, String> = params
                    .get("context")
                    .and_then(|c| c.get("arguments"))
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect();
                let req = CompletionRequest {
                    argument: arg.to_owned(),
                    value: value.to_owned(),
                    arguments,
                    states: crate::completion::States::of(self.core.state().clone()),
                };
                // A panicking completion function is an error answer, as a method's panic is.
                match std::panic::AssertUnwindSafe((c.complete)(req))
                    .catch_unwind()
                    .await
                {
                    Ok(r) => r,
                    Err(_) => Err(RpcError::internal("the completion function panicked")),
                }
            }
        };
        match completion {
            Ok(c) => {
                let mut members = b"\"completion\":".to_vec();
                let _ = serde_json::to_writer(&mut members, &c.capped());
                self.ok(id, era, &members)
            }
            Err(e) => self.call_error(id, era, e, None),
        }
    }
}

/// The contents of a read from the function's output: a string is the text, any other JSON
/// value its JSON text, [`super::ResourceContent`]s as given; `uri` and `mimeType` default to
/// the resource's, and an app's `_meta.ui` to what the app asks of its host.
fn contents(
    out: Output,
    uri: &str,
    mime_type: Option<&str>,
    app_meta: Option<&Value>,
) -> Result<Vec<Value>, RpcError> {
    let with_defaults = |mut c: Map<String, Value>| {
        c.entry("uri").or_insert_with(|| uri.into());
        if let Some(m) = mime_type {
            c.entry("mimeType").or_insert_with(|| m.into());
        }
        // An app's page carries what it asks of the host, as its list entry does.
        if let Some(meta) = app_meta {
            c.entry("_meta").or_insert_with(|| meta.clone());
        }
        // `uri` first, as the specification writes it.
        let mut ordered = Map::with_capacity(c.len());
        for k in ["uri", "mimeType", "text", "blob"] {
            if let Some(v) = c.remove(k) {
                ordered.insert(k.into(), v);
            }
        }
        ordered.extend(c);
        Value::Object(ordered)
    };
    let bad = |e: serde_json::Error| RpcError::internal(format!("invalid resource contents: {e}"));
    match out {
        Output::Tool(raw) => {
            let list: Vec<Map<String, Value>> = serde_json::from_str(raw.get()).map_err(bad)?;
            Ok(list.into_iter().map(with_defaults).collect())
        }
        Output::Json(raw) => {
            let text = match serde_json::from_str::<Value>(raw.get()).map_err(bad)? {
                Value::String(s) => s,
                _ => raw.get().to_owned(),
            };
            let mut c = Map::new();
            c.insert("text".into(), text.into());
            Ok(vec![with_defaults(c)])
        }
    }
}

/// The members of a `prompts/get` result from the function's output: messages, one message,
/// a [`super::PromptResult`] or a string (one user text message). `description` gives the
/// prompt's description when the output has none.
fn prompt_result(
    out: Output,
    description: impl FnOnce() -> Option<String>,
) -> Result<Vec<u8>, RpcError> {
    let bad = |e: serde_json::Error| RpcError::internal(format!("invalid prompt messages: {e}"));
    let value: Value = serde_json::from_str(out.as_json().get()).map_err(bad)?;
    let (desc, messages) = match value {
        Value::String(text) => (
            None,
            serde_json::json!([{"role": "user", "content": {"type": "text", "text": text}}]),
        ),
        Value::Array(list) => (None, Value::Array(list)),
        Value::Object(mut o) if o.contains_key("messages") => (
            o.remove("description"),
            o.remove("messages").unwrap_or_default(),
        ),
        Value::Object(o) if o.contains_key("role") => (None, Value::Array(vec![Value::Object(o)])),
        _ => {
            return Err(RpcError::internal(
                "a prompt returns messages, a message, a PromptResult or a string",
            ));
        }
    };
    let mut members = Vec::with_capacity(128);
    if let Some(d) = desc
        .filter(|d| !d.is_null())
        .or_else(|| description().map(Value::from))
    {
        members.extend_from_slice(b"\"description\":");
        let _ = serde_json::to_writer(&mut members, &d);
        members.push(b',');
    }
    members.extend_from_slice(b"\"messages\":");
    let _ = serde_json::to_writer(&mut members, &messages);
    Ok(members)
}
