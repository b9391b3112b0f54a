//! Reading a JSON-RPC message straight from the request bytes.
//!
//! The envelope's members (`jsonrpc`, `id`, `method`, `params`) are read into their places as
//! the parser meets them, with borrowed keys, instead of into a map that is then taken apart:
//! on a small `tools/call` that map (its keys, their hashes, its removals) cost about as much
//! as the tool. Only `params` and `id` become `Value`s. Duplicate keys are refused at every
//! depth, as [`crate::core::json::from_slice`] does.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::handler::{Incoming, Message};
use crate::core::json::{Strict, duplicate};
use crate::error::RpcError;

/// A request body: one message or a batch (whose items are read by [`super::handler::parse_message`]).
#[derive(Debug)]
pub enum Parsed {
    /// One message, or why it is not one (with its id when readable).
    Single(Result<Incoming, (Option<Value>, RpcError)>),
    /// A JSON array.
    Batch(Vec<Value>),
}

/// Parses a request body. The error is the JSON's: a syntax error, or a duplicate key
/// ([`crate::core::json::is_duplicate`]).
pub fn parse_body(bytes: &[u8]) -> Result<Parsed, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let body = BodySeed.deserialize(&mut de)?;
    de.end()?;
    Ok(body)
}

/// The members of a message that decide what it is.
pub(crate) struct Envelope {
    pub id: Option<Value>,
    /// `jsonrpc` is the string `"2.0"`.
    pub version_ok: bool,
    pub method: Option<Value>,
    pub params: Option<Value>,
    /// It has a `result` or an `error` (a response).
    pub answer: bool,
}

pub(crate) fn not_an_object() -> (Option<Value>, RpcError) {
    (
        None,
        RpcError::invalid_request("Invalid Request: expected a JSON-RPC object"),
    )
}

impl Envelope {
    /// The checks, in the order that decides which error a malformed message gets.
    pub fn into_incoming(self) -> Result<Incoming, (Option<Value>, RpcError)> {
        let id = match self.id {
            None => None,
            Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
            Some(_) => {
                return Err((
                    None,
                    RpcError::invalid_request("Invalid Request: `id` must be a string or a number"),
                ));
            }
        };
        if !self.version_ok {
            return Err((
                id,
                RpcError::invalid_request("Invalid Request: `jsonrpc` must be \"2.0\""),
            ));
        }
        let method = match self.method {
            Some(Value::String(m)) if !m.is_empty() => m,
            None if self.answer => return Ok(Incoming::Response),
            _ => {
                return Err((
                    id,
                    RpcError::invalid_request(
                        "Invalid Request: `method` must be a non-empty string",
                    ),
                ));
            }
        };
        let request = id.is_some();
        let msg = Message {
            id,
            method,
            params: self.params,
        };
        Ok(if request {
            Incoming::Request(msg)
        } else {
            Incoming::Notification(msg)
        })
    }
}

struct BodySeed;

impl<'de> DeserializeSeed<'de> for BodySeed {
    type Value = Parsed;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Parsed, D::Error> {
        d.deserialize_any(self)
    }
}

/// Any other top-level value is well-formed JSON but not a message.
fn not_a_message<E>() -> Result<Parsed, E> {
    Ok(Parsed::Single(Err(not_an_object())))
}

impl<'de> Visitor<'de> for BodySeed {
    type Value = Parsed;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message or batch")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Parsed, E> {
        not_a_message()
    }
    fn visit_i64<E>(self, _: i64) -> Result<Parsed, E> {
        not_a_message()
    }
    fn visit_u64<E>(self, _: u64) -> Result<Parsed, E> {
        not_a_message()
    }
    fn visit_f64<E>(self, _: f64) -> Result<Parsed, E> {
        not_a_message()
    }
    fn visit_str<E>(self, _: &str) -> Result<Parsed, E> {
        not_a_message()
    }
    fn visit_unit<E>(self) -> Result<Parsed, E> {
        not_a_message()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Parsed, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(Strict)? {
            items.push(item);
        }
        Ok(Parsed::Batch(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Parsed, A::Error> {
        let mut env = Envelope {
            id: None,
            version_ok: false,
            method: None,
            params: None,
            answer: false,
        };
        let mut seen = 0u8;
        // Members other than the envelope's, kept only to refuse their duplicates.
        let mut others: Vec<String> = Vec::new();
        while let Some(key) = m.next_key_seed(KeySeed)? {
            let member = match key {
                Key::Known(member) => member,
                Key::Other(name) => {
                    if others.contains(&name) {
                        return Err(duplicate(&name));
                    }
                    others.push(name);
                    m.next_value_seed(Strict)?;
                    continue;
                }
            };
            let bit = 1u8 << (member as u8);
            if seen & bit != 0 {
                return Err(duplicate(member.name()));
            }
            seen |= bit;
            match member {
                Member::Jsonrpc => env.version_ok = m.next_value_seed(IsVersion)?,
                Member::Id => env.id = Some(m.next_value_seed(Strict)?),
                Member::Method => env.method = Some(m.next_value_seed(Strict)?),
                Member::Params => env.params = Some(m.next_value_seed(Strict)?),
                Member::Result | Member::Error => {
                    m.next_value_seed(Strict)?;
                    env.answer = true;
                }
            }
        }
        Ok(Parsed::Single(env.into_incoming()))
    }
}

#[derive(Clone, Copy)]
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
}

enum Key {
    Known(Member),
    Other(String),
}

impl Member {
    fn name(self) -> &'static str {
        match self {
            Member::Jsonrpc => "jsonrpc",
            Member::Id => "id",
            Member::Method => "method",
            Member::Params => "params",
            Member::Result => "result",
            Member::Error => "error",
        }
    }
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }
    // Called with the unescaped text (borrowed from the input or from serde_json's scratch
    // buffer), so `"\u006dethod"` is `method` here too.
    fn visit_str<E>(self, v: &str) -> Result<Key, E> {
        Ok(match v {
            "jsonrpc" => Key::Known(Member::Jsonrpc),
            "id" => Key::Known(Member::Id),
            "method" => Key::Known(Member::Method),
            "params" => Key::Known(Member::Params),
            "result" => Key::Known(Member::Result),
            "error" => Key::Known(Member::Error),
            other => Key::Other(other.to_owned()),
        })
    }
}

/// Reads the `jsonrpc` member: whether it is the string `"2.0"` (any other value, read
/// strictly and dropped, is `false`). Not `Strict` and a comparison: that would allocate the
/// string on every message, where this compares the borrowed one.
struct IsVersion;

impl<'de> DeserializeSeed<'de> for IsVersion {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IsVersion {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        Ok(v == "2.0")
    }
    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<bool, A::Error> {
        Strict.visit_seq(seq).map(|_| false)
    }
    fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<bool, A::Error> {
        Strict.visit_map(m).map(|_| false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::handler::parse_message;

    /// The streaming reader and `parse_message` over a parsed `Value` agree on every shape.
    #[test]
    fn agrees_with_parse_message() {
        let cases = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"x","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":2,"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":{"v":"2.0"},"id":1,"method":"ping"}"#,
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":""}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"k":[1]}}"#,
            r#"{"\u006aso\u006erpc":"2.0","\u0069d":3,"me\u0074hod":"ping"}"#,
            r#"{}"#,
            r#"1"#,
            r#""text""#,
            r#"null"#,
            r#"true"#,
        ];
        for case in cases {
            let streamed = match parse_body(case.as_bytes()).unwrap() {
                Parsed::Single(r) => r,
                Parsed::Batch(_) => panic!("{case}: not a batch"),
            };
            let via_value = parse_message(serde_json::from_str(case).unwrap());
            assert_eq!(format!("{streamed:?}"), format!("{via_value:?}"), "{case}");
        }
    }

    #[test]
    fn batches_are_arrays_of_values() {
        let Parsed::Batch(items) = parse_body(br#"[{"a":1},2]"#).unwrap() else {
            panic!("a batch");
        };
        assert_eq!(
            items,
            vec![serde_json::json!({"a":1}), serde_json::json!(2)]
        );
    }

    #[test]
    fn duplicates_are_refused_at_every_level() {
        for case in [
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","\u006dethod":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":1,"x":2}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1,"a":2}}}"#,
            r#"{"jsonrpc":{"a":1,"a":1},"id":1,"method":"ping"}"#,
            r#"[{"a":1,"a":1}]"#,
        ] {
            let e = parse_body(case.as_bytes()).unwrap_err();
            assert!(crate::core::json::is_duplicate(&e), "{case}: {e}");
        }
    }

    #[test]
    fn syntax_errors_are_errors() {
        for case in ["{", r#"{"jsonrpc":"2.0"} x"#, r#"{"id":}"#, ""] {
            let e = parse_body(case.as_bytes()).unwrap_err();
            assert!(!crate::core::json::is_duplicate(&e), "{case}: {e}");
        }
    }
}
