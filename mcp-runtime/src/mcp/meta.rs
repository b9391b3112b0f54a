//! A request's `params._meta`, read once with the message.
//!
//! Every 2026-07-28 request carries `_meta` (its revision, the client's capabilities and
//! information, maybe a log level and a progress token). Built as a `Value` map inside the
//! params, it cost a map, a string per key and a hash per lookup on every request, about a
//! sixth of a small call's instructions. [`Meta`] keeps only the members the server acts on;
//! the rest is checked as strictly as any params (no duplicate key, the nesting bound) and not
//! kept.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::LogLevel;
use super::protocol::{
    META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION, TASKS_EXTENSION,
};
use crate::core::json::{Key, Keys, Strict, StrictSkip};
use crate::error::RpcError;

/// The `_meta` key of a request's progress token.
const PROGRESS_TOKEN: &str = "progressToken";
/// The `_meta` keys of a request's W3C trace context.
const TRACEPARENT: &str = "traceparent";
const TRACESTATE: &str = "tracestate";

/// The members of a request's `params._meta` that the server reads. A member absent (or a
/// `_meta` that is not an object) is `None`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Meta {
    /// `io.modelcontextprotocol/protocolVersion`, as sent (any JSON type).
    pub protocol_version: Option<Value>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub client_capabilities: Option<Value>,
    /// `io.modelcontextprotocol/logLevel`.
    pub log_level: Option<Value>,
    /// `progressToken`.
    pub progress_token: Option<Value>,
    /// `traceparent` (the MCP convention for trace context: stdio has no headers).
    pub traceparent: Option<Value>,
    /// `tracestate`.
    pub tracestate: Option<Value>,
    /// `io.modelcontextprotocol/acceptLanguage` (SEP-2792): the language of this request.
    pub accept_language: Option<Value>,
}

/// The view of a request without `_meta`.
pub(crate) static NONE: Meta = Meta {
    protocol_version: None,
    client_capabilities: None,
    log_level: None,
    progress_token: None,
    traceparent: None,
    tracestate: None,
    accept_language: None,
};

impl Meta {
    /// Whether the request's client declared the tasks extension (per request, in `_meta`).
    pub(crate) fn declares_tasks(&self) -> bool {
        self.client_capabilities
            .as_ref()
            .and_then(|c| c.get("extensions"))
            .and_then(|e| e.get(TASKS_EXTENSION))
            .is_some_and(Value::is_object)
    }

    /// The members of a `_meta` value (in-process messages, built as values).
    pub(crate) fn from_value(meta: Value) -> Meta {
        let Value::Object(mut m) = meta else {
            return Meta::default();
        };
        Meta {
            protocol_version: m.remove(META_PROTOCOL_VERSION),
            client_capabilities: m.remove(META_CLIENT_CAPABILITIES),
            log_level: m.remove(META_LOG_LEVEL),
            progress_token: m.remove(PROGRESS_TOKEN),
            traceparent: m.remove(TRACEPARENT),
            tracestate: m.remove(TRACESTATE),
            accept_language: m.remove(super::language::ACCEPT_LANGUAGE),
        }
    }

    /// The revision asked for, when it is a string.
    pub(crate) fn version(&self) -> Option<&str> {
        self.protocol_version.as_ref()?.as_str()
    }

    /// The 2026-07-28 log level: `Ok(None)` when absent (nothing may be logged), `Err` with
    /// the text when it is not a level.
    pub(crate) fn log_level(&self) -> Result<Option<LogLevel>, String> {
        match &self.log_level {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => s.parse().map(Some).map_err(|e| format!("{e}")),
            Some(_) => Err(format!("`_meta.{META_LOG_LEVEL}` must be a string")),
        }
    }

    /// The W3C trace context of `_meta` (`traceparent`, `tracestate`), if well formed.
    pub(crate) fn trace(&self) -> Option<crate::context::TraceParent> {
        let parent = self.traceparent.as_ref()?.as_str()?;
        let state = self.tracestate.as_ref().and_then(Value::as_str);
        crate::context::TraceParent::new(parent, state)
    }

    /// The SEP-2792 language carrier, when it is an `Accept-Language` value: one that is not
    /// (not a string, not the grammar) counts as absent, as the SEP asks.
    pub(crate) fn language_carrier(&self) -> Option<&str> {
        self.language_raw().filter(|v| crate::i18n::well_formed(v))
    }

    /// The SEP-2792 carrier as sent, when it is a string (what a header must agree with).
    pub(crate) fn language_raw(&self) -> Option<&str> {
        self.accept_language.as_ref()?.as_str()
    }

    /// The client's capabilities (`{}` when it sent none).
    pub(crate) fn capabilities(&self) -> Value {
        self.client_capabilities
            .clone()
            .unwrap_or_else(|| json!({}))
    }
}

/// A call's params and their `_meta`, decoded strictly (as [`crate::edge::read::params`]
/// does): `_meta` is not part of the params value.
pub(crate) fn params(
    raw: Option<&RawValue>,
    depth: usize,
) -> Result<(Option<Value>, Option<Meta>), RpcError> {
    let Some(raw) = raw else {
        return Ok((None, None));
    };
    // A raw value is the value's text exactly: an object starts with `{`.
    if !raw.get().starts_with('{') {
        return crate::edge::read::params(Some(raw), depth).map(|p| (p, None));
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    ParamsSeed(Strict::new(depth))
        .deserialize(&mut de)
        .and_then(|p| de.end().map(|()| p))
        .map(|(params, meta)| (Some(Value::Object(params)), meta))
        .map_err(|e| crate::edge::read::invalid_params(&e))
}

/// An object of params: every member as [`Strict`] reads it, but `_meta` read into a [`Meta`].
struct ParamsSeed(Strict);

impl<'de> DeserializeSeed<'de> for ParamsSeed {
    type Value = (Map<String, Value>, Option<Meta>);
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ParamsSeed {
    type Value = (Map<String, Value>, Option<Meta>);

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let inner = self.0.inner()?;
        let mut params = Map::new();
        let mut meta = None;
        // Borrowed where it can be: `_meta`, which every 2026-07-28 request carries, is not kept.
        while let Some(key) = m.next_key_seed(Key)? {
            if key == "_meta" {
                if meta.is_some() {
                    return Err(crate::core::json::duplicate(&key));
                }
                meta = Some(m.next_value_seed(MetaSeed(inner))?);
                continue;
            }
            crate::core::json::insert_member(&mut params, key.into_owned(), &mut m, inner)?;
        }
        Ok((params, meta))
    }
}

/// `_meta`: the members the server reads kept, the others checked and skipped.
struct MetaSeed(Strict);

impl<'de> DeserializeSeed<'de> for MetaSeed {
    type Value = Meta;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Meta, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MetaSeed {
    type Value = Meta;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    // A `_meta` that is not an object has none of the members.
    fn visit_bool<E>(self, _: bool) -> Result<Meta, E> {
        Ok(Meta::default())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Meta, E> {
        Ok(Meta::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Meta, E> {
        Ok(Meta::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Meta, E> {
        Ok(Meta::default())
    }
    fn visit_str<E>(self, _: &str) -> Result<Meta, E> {
        Ok(Meta::default())
    }
    fn visit_unit<E>(self) -> Result<Meta, E> {
        Ok(Meta::default())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Meta, A::Error> {
        StrictSkip(self.0).visit_seq(seq).map(|()| Meta::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Meta, A::Error> {
        let inner = self.0.inner()?;
        let mut meta = Meta::default();
        let mut keys = Keys::default();
        while let Some(key) = m.next_key_seed(Key)? {
            let kept = match &*key {
                META_PROTOCOL_VERSION => &mut meta.protocol_version,
                META_CLIENT_CAPABILITIES => &mut meta.client_capabilities,
                META_LOG_LEVEL => &mut meta.log_level,
                PROGRESS_TOKEN => &mut meta.progress_token,
                TRACEPARENT => &mut meta.traceparent,
                TRACESTATE => &mut meta.tracestate,
                super::language::ACCEPT_LANGUAGE => &mut meta.accept_language,
                _ => {
                    keys.insert(key)?;
                    m.next_value_seed(StrictSkip(inner))?;
                    continue;
                }
            };
            if kept.is_some() {
                return Err(crate::core::json::duplicate(&key));
            }
            *kept = Some(m.next_value_seed(inner)?);
        }
        Ok(meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(params: &str) -> Result<(Option<Value>, Meta), String> {
        let raw: Box<RawValue> = serde_json::from_str(params).map_err(|e| e.to_string())?;
        params_of(&raw)
    }

    fn params_of(raw: &RawValue) -> Result<(Option<Value>, Meta), String> {
        params(Some(raw), 8)
            .map(|(p, m)| (p, m.unwrap_or_default()))
            .map_err(|e| e.message().to_owned())
    }

    #[test]
    fn meta_is_read_out_of_the_params() {
        let (p, m) = read(
            r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"progressToken":7,"io.modelcontextprotocol/logLevel":"info"},"arguments":{"a":1}}"#,
        )
        .unwrap();
        assert_eq!(p, Some(json!({"name":"t","arguments":{"a":1}})));
        assert_eq!(m.version(), Some("2026-07-28"));
        assert_eq!(m.capabilities(), json!({"x":{}}));
        assert_eq!(m.progress_token, Some(json!(7)));
        assert_eq!(m.log_level(), Ok(Some(LogLevel::Info)));
    }

    #[test]
    fn a_meta_read_from_text_is_the_meta_of_the_same_value() {
        let text = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":5,"progressToken":"p","other":[1,{"a":null}]}}"#;
        let (_, from_text) = read(text).unwrap();
        let v: Value = serde_json::from_str(text).unwrap();
        let from_value = Meta::from_value(v["_meta"].clone());
        assert_eq!(format!("{from_text:?}"), format!("{from_value:?}"));
        assert_eq!(from_text.version(), None);
    }

    #[test]
    fn params_that_are_not_an_object_or_a_meta_that_is_not_have_no_members() {
        let (p, m) = read("[1,2]").unwrap();
        assert_eq!(p, Some(json!([1, 2])));
        assert!(m.protocol_version.is_none() && m.progress_token.is_none());
        for meta in ["1", "\"x\"", "null", "true", "[{\"a\":1}]", "1.5"] {
            let (p, m) = read(&format!(r#"{{"_meta":{meta},"a":1}}"#)).unwrap();
            assert_eq!(p, Some(json!({"a":1})), "{meta}");
            assert!(m.client_capabilities.is_none(), "{meta}");
        }
        assert_eq!(params(None, 8).map(|(p, _)| p).ok(), Some(None));
    }

    /// What the strict params reader refuses is refused with `_meta` read apart, with the same
    /// message.
    #[test]
    fn duplicates_and_depth_are_refused_inside_meta_as_anywhere() {
        for (params, message) in [
            (
                r#"{"_meta":{},"_meta":{}}"#,
                "Invalid params: duplicate key `_meta`",
            ),
            (
                r#"{"_meta":{"progressToken":1,"progressToken":2}}"#,
                "Invalid params: duplicate key `progressToken`",
            ),
            (
                r#"{"_meta":{"x":1,"x":2}}"#,
                "Invalid params: duplicate key `x`",
            ),
            (
                r#"{"_meta":{"x":{"y":1,"y":1}}}"#,
                "Invalid params: duplicate key `y`",
            ),
            (
                r#"{"_meta":{"x":[{"y":1,"y":1}]}}"#,
                "Invalid params: duplicate key `y`",
            ),
            (
                r#"{"_meta":[{"y":1,"y":1}]}"#,
                "Invalid params: duplicate key `y`",
            ),
            (
                r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"y":1,"y":1}}}"#,
                "Invalid params: duplicate key `y`",
            ),
            (
                r#"{"a":1,"a":2,"_meta":{}}"#,
                "Invalid params: duplicate key `a`",
            ),
            (
                r#"{"_meta":{"x":[[[[[[[[1]]]]]]]]}}"#,
                "Invalid params: nested deeper than 8 levels",
            ),
        ] {
            let ours = read(params).map(|_| ()).unwrap_err();
            assert_eq!(ours, message, "{params}");
            let raw: Box<RawValue> = serde_json::from_str(params).unwrap();
            let strict = crate::edge::read::params(Some(&raw), 8).unwrap_err();
            assert_eq!(strict.message(), message, "{params}");
        }
        // Many keys: past the few kept in place, a duplicate is still found.
        let many: Vec<String> = (0..40).map(|i| format!(r#""k{i}":{i}"#)).collect();
        let ok = format!(r#"{{"_meta":{{{}}}}}"#, many.join(","));
        assert!(read(&ok).is_ok());
        let dup = format!(r#"{{"_meta":{{{},"k3":0}}}}"#, many.join(","));
        assert_eq!(
            read(&dup).unwrap_err(),
            "Invalid params: duplicate key `k3`"
        );
        // An escaped key is the same key as its plain spelling.
        assert_eq!(
            read(r#"{"_meta":{"k":1,"\u006b":2}}"#).unwrap_err(),
            "Invalid params: duplicate key `k`"
        );
    }
}
