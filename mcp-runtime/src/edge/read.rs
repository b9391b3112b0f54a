//! The one JSON-RPC reader: bytes → a message, a batch of them, or a precise error, for
//! `/rpc`, MCP over HTTP and MCP over stdio.
//!
//! One pass over the bytes, linear in their length: the envelope's members are read into
//! their places as the parser meets them (`id`, `method` and `params` borrowed from the
//! body, never copied), unknown members are skipped without being kept, and a repeated
//! envelope member makes the message invalid. `params` is decoded into a value only when the
//! call runs ([`params`]), strictly: a duplicate key or nesting past [`Limits::depth`] is a
//! -32602 error that still carries the request's id.
//!
//! What the two specifications ask differently is a [`Dialect`], not another reader:
//!
//! | rule | JSON-RPC (`/rpc`) | MCP (HTTP and stdio) |
//! |---|---|---|
//! | `"jsonrpc": "2.0"` | optional (the reference accepts it missing) | required |
//! | `"id": null` | a request answered with `"id": null` | invalid (-32600) |
//! | a message with `result`/`error` and no `method` | invalid | a response to the server |
//! | HTTP status of a parse error (-32700) | 500 (the reference's) | 400 |
//! | HTTP status of an invalid message (-32600) | 200 | 400 |
//!
//! [`Limits::depth`]: super::Limits::depth

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::RpcError;

/// The rules of one face.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dialect {
    /// A message without `"jsonrpc": "2.0"` is invalid.
    pub version_required: bool,
    /// `"id": null` is a request (answered with a null id) rather than an invalid message.
    pub null_id: bool,
    /// A message with `result` or `error` and no `method` is a response to the server.
    pub responses: bool,
    /// The HTTP status of a body that is not JSON.
    pub parse_error_status: u16,
    /// The HTTP status of a single message that is not a valid request.
    pub invalid_status: u16,
}

impl Dialect {
    /// `/rpc`: the reference's rules.
    pub const JSON_RPC: Dialect = Dialect {
        version_required: false,
        null_id: true,
        responses: false,
        parse_error_status: 500,
        invalid_status: 200,
    };
    /// MCP, over Streamable HTTP and stdio.
    pub const MCP: Dialect = Dialect {
        version_required: true,
        null_id: false,
        responses: true,
        parse_error_status: 400,
        invalid_status: 400,
    };
}

/// A request body.
#[derive(Debug)]
pub(crate) enum Body<'a> {
    /// One message.
    Single(Item<'a>),
    /// A JSON array of messages (empty batches included: the face answers them).
    Batch(Vec<Item<'a>>),
}

/// One message, or why it is not one.
pub(crate) type Item<'a> = Result<Incoming<'a>, Invalid<'a>>;

/// A valid message.
#[derive(Debug)]
pub(crate) enum Incoming<'a> {
    /// A request (it has an id) or a notification (it has none).
    Call(Call<'a>),
    /// A response to a request of the server's (MCP only).
    Response(Reply<'a>),
}

/// A response to a request of the server's, borrowed from the body.
#[derive(Debug)]
pub(crate) struct Reply<'a> {
    /// The id's JSON text.
    pub id: Option<&'a RawValue>,
    /// The `result` member's JSON text.
    pub result: Option<&'a RawValue>,
    /// The `error` member's JSON text.
    pub error: Option<&'a RawValue>,
}

/// A request or a notification, borrowed from the body.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    /// The id's JSON text (a string, a number, or `null` where the dialect allows it);
    /// `None` for a notification.
    pub id: Option<&'a RawValue>,
    /// The method name (not blank).
    pub method: Cow<'a, str>,
    /// The params' JSON text (an object or an array); `null` is read as none.
    pub params: Option<&'a RawValue>,
}

/// A message that is not valid: answered with its error, with its id when it was readable.
#[derive(Debug)]
pub(crate) struct Invalid<'a> {
    /// The id, when readable.
    pub id: Option<&'a RawValue>,
    /// The -32600 error.
    pub error: RpcError,
}

/// Why a body could not be read at all.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Not JSON (syntax, encoding, trailing bytes, nesting beyond serde_json's bound): -32700.
    Syntax,
    /// A batch with more items than allowed: refused whole with one -32600 error.
    TooManyItems {
        /// The items counted.
        count: usize,
        /// The bound.
        max: usize,
    },
}

impl ReadError {
    /// The error to answer with.
    pub fn error(&self) -> RpcError {
        match self {
            ReadError::Syntax => RpcError::parse_error("Invalid json data"),
            ReadError::TooManyItems { count, max } => RpcError::invalid_request(format!(
                "Invalid Request: batch too large ({count} items, at most {max})"
            )),
        }
    }
}

/// Reads a body under `dialect`'s rules, refusing batches of more than `max_batch` items.
pub(crate) fn read(
    bytes: &[u8],
    dialect: Dialect,
    max_batch: usize,
) -> Result<Body<'_>, ReadError> {
    // JSON text is UTF-8 (RFC 8259): checked once here, the parser then reads a `str` and
    // does not check each string and raw member again (nor skip one unchecked).
    let text = std::str::from_utf8(bytes).map_err(|_| ReadError::Syntax)?;
    let over = std::cell::Cell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let seed = BodySeed {
        dialect,
        max_batch,
        over: &over,
    };
    let body = seed.deserialize(&mut de).map_err(|_| match over.get() {
        Some(count) => ReadError::TooManyItems {
            count,
            max: max_batch,
        },
        None => ReadError::Syntax,
    })?;
    de.end().map_err(|_| ReadError::Syntax)?;
    Ok(body)
}

/// Decodes a call's params strictly: duplicate keys refused at every depth and nesting bound
/// by `depth`. The error is the -32602 to answer with.
pub(crate) fn params(raw: Option<&RawValue>, depth: usize) -> Result<Option<Value>, RpcError> {
    raw.map(|p| crate::core::json::from_str_depth(p.get(), depth))
        .transpose()
        .map_err(|e| invalid_params(&e))
}

/// The -32602 of params that fail the strict reader.
pub(crate) fn invalid_params(e: &serde_json::Error) -> RpcError {
    RpcError::invalid_params(format!("Invalid params: {}", crate::core::json::message(e)))
}

/// The id as a value (a string or a number; `None` for a notification or a null id).
pub(crate) fn id_value(raw: Option<&RawValue>) -> Option<Value> {
    raw.and_then(|r| serde_json::from_str::<Value>(r.get()).ok())
        .filter(|v| !v.is_null())
}

struct BodySeed<'s> {
    dialect: Dialect,
    max_batch: usize,
    /// Set to the item count of a batch over the bound (the parse then stops with an error).
    over: &'s std::cell::Cell<Option<usize>>,
}

impl<'de> DeserializeSeed<'de> for BodySeed<'_> {
    type Value = Body<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Body<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

fn not_an_object<'a>() -> Item<'a> {
    Err(Invalid {
        id: None,
        error: RpcError::invalid_request("Invalid Request: expected a JSON-RPC request object"),
    })
}

impl<'de> Visitor<'de> for BodySeed<'_> {
    type Value = Body<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message or batch")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Body<'de>, E> {
        Ok(Body::Single(not_an_object()))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Body<'de>, E> {
        Ok(Body::Single(not_an_object()))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Body<'de>, E> {
        Ok(Body::Single(not_an_object()))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Body<'de>, E> {
        Ok(Body::Single(not_an_object()))
    }
    fn visit_str<E>(self, _: &str) -> Result<Body<'de>, E> {
        Ok(Body::Single(not_an_object()))
    }
    fn visit_unit<E>(self) -> Result<Body<'de>, E> {
        Ok(Body::Single(not_an_object()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Body<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.max_batch));
        while items.len() < self.max_batch {
            match seq.next_element_seed(ItemSeed(self.dialect))? {
                Some(item) => items.push(item),
                None => return Ok(Body::Batch(items)),
            }
        }
        // Over the bound: count the rest without keeping them, for an exact error.
        let mut count = items.len();
        while seq.next_element::<IgnoredAny>()?.is_some() {
            count += 1;
        }
        if count == items.len() {
            return Ok(Body::Batch(items));
        }
        self.over.set(Some(count));
        Err(de::Error::custom("batch too large"))
    }
    fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Body<'de>, A::Error> {
        ItemSeed(self.dialect).visit_map(m).map(Body::Single)
    }
}

struct ItemSeed(Dialect);

impl<'de> DeserializeSeed<'de> for ItemSeed {
    type Value = Item<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Item<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemSeed {
    type Value = Item<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Item<'de>, E> {
        Ok(not_an_object())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Item<'de>, E> {
        Ok(not_an_object())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Item<'de>, E> {
        Ok(not_an_object())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Item<'de>, E> {
        Ok(not_an_object())
    }
    fn visit_str<E>(self, _: &str) -> Result<Item<'de>, E> {
        Ok(not_an_object())
    }
    fn visit_unit<E>(self) -> Result<Item<'de>, E> {
        Ok(not_an_object())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(not_an_object())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Item<'de>, A::Error> {
        let mut env = Envelope::default();
        let mut seen = 0u8;
        while let Some(key) = m.next_key_seed(KeySeed)? {
            let Some(member) = key else {
                // Unknown members are skipped, not kept: nothing about them can grow.
                m.next_value::<IgnoredAny>()?;
                continue;
            };
            let bit = 1u8 << (member as u8);
            if seen & bit != 0 {
                env.duplicate.get_or_insert(member.name());
                m.next_value::<IgnoredAny>()?;
                continue;
            }
            seen |= bit;
            let raw: &'de RawValue = m.next_value()?;
            match member {
                Member::Jsonrpc => env.jsonrpc = Some(raw),
                Member::Id => env.id = Some(raw),
                Member::Method => env.method = Some(raw),
                Member::Params => env.params = Some(raw),
                Member::Result => {
                    env.answer = true;
                    env.result = Some(raw);
                }
                Member::Error => {
                    env.answer = true;
                    env.error = Some(raw);
                }
            }
        }
        Ok(env.check(self.0))
    }
}

/// The members of a message, as read.
#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    answer: bool,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
    duplicate: Option<&'static str>,
}

fn invalid<'a>(id: Option<&'a RawValue>, message: &'static str) -> Item<'a> {
    Err(Invalid {
        id,
        error: RpcError::invalid_request(message),
    })
}

impl<'a> Envelope<'a> {
    /// The checks, in the order that decides which error a malformed message gets.
    fn check(self, dialect: Dialect) -> Item<'a> {
        let id = match self.id {
            None => None,
            Some(raw) => match raw.get().as_bytes().first() {
                Some(b'"' | b'-' | b'0'..=b'9') => Some(raw),
                Some(b'n') if dialect.null_id => Some(raw),
                _ => return invalid(None, "Invalid Request: `id` must be a string or a number"),
            },
        };
        if let Some(member) = self.duplicate {
            let id = if member == "id" { None } else { id };
            return Err(Invalid {
                id,
                error: RpcError::invalid_request(format!(
                    "Invalid Request: duplicate member `{member}`"
                )),
            });
        }
        match self.jsonrpc {
            Some(v) if is_version(v) => {}
            None if !dialect.version_required => {}
            _ => return invalid(id, "Invalid Request: `jsonrpc` must be \"2.0\""),
        }
        let method = match self.method {
            None if self.answer && dialect.responses => {
                return Ok(Incoming::Response(Reply {
                    id,
                    result: self.result,
                    error: self.error,
                }));
            }
            None => None,
            Some(m) => serde_json::from_str::<Cow<'a, str>>(m.get()).ok(),
        };
        let Some(method) = method.filter(|m| !m.trim().is_empty()) else {
            return invalid(id, "Invalid Request: `method` must be a non-empty string");
        };
        let params = match self.params {
            Some(p) if matches!(p.get().as_bytes().first(), Some(b'{' | b'[')) => Some(p),
            Some(p) if p.get() == "null" => None,
            None => None,
            Some(_) => {
                return invalid(
                    id,
                    "Invalid Request: `params` must be an object or an array",
                );
            }
        };
        Ok(Incoming::Call(Call { id, method, params }))
    }
}

/// Whether the `jsonrpc` member is the string `"2.0"`; escaped spellings (`"2\u002e0"`) are
/// the same string.
fn is_version(v: &RawValue) -> bool {
    v.get() == "\"2.0\""
        || serde_json::from_str::<Cow<'_, str>>(v.get())
            .ok()
            .as_deref()
            == Some("2.0")
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

/// Reads a member name: the envelope's own, or `None` for any other (not kept).
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Option<Member>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<Member>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Option<Member>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }
    // Called with the unescaped text, so `"\u006dethod"` is `method` here too.
    fn visit_str<E>(self, v: &str) -> Result<Option<Member>, E> {
        Ok(match v {
            "jsonrpc" => Some(Member::Jsonrpc),
            "id" => Some(Member::Id),
            "method" => Some(Member::Method),
            "params" => Some(Member::Params),
            "result" => Some(Member::Result),
            "error" => Some(Member::Error),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(body: &str, dialect: Dialect) -> Result<String, String> {
        match read(body.as_bytes(), dialect, 10) {
            Ok(Body::Single(Ok(Incoming::Call(c)))) => Ok(format!(
                "{}|{}|{}",
                c.id.map_or("-", |i| i.get()),
                c.method,
                c.params.map_or("-", |p| p.get())
            )),
            Ok(Body::Single(Ok(Incoming::Response(_)))) => Ok("response".into()),
            Ok(Body::Single(Err(inv))) => Err(format!(
                "{} {}",
                inv.id.map_or("-", |i| i.get()),
                inv.error.message()
            )),
            Ok(Body::Batch(items)) => Ok(format!("batch of {}", items.len())),
            Err(e) => Err(format!("{e:?}")),
        }
    }

    #[test]
    fn the_dialects_differ_only_where_the_specifications_do() {
        let both = [Dialect::JSON_RPC, Dialect::MCP];
        for d in both {
            assert_eq!(
                one(
                    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1]}}"#,
                    d
                ),
                Ok(r#"1|m|{"a":[1]}"#.into())
            );
            assert_eq!(
                one(
                    r#"{"\u006aso\u006erpc":"2\u002e0","\u0069d":"x","me\u0074hod":"m"}"#,
                    d
                ),
                Ok(r#""x"|m|-"#.into())
            );
            assert_eq!(
                one(r#"{"jsonrpc":"2.0","id":1,"method":"  "}"#, d),
                Err("1 Invalid Request: `method` must be a non-empty string".into())
            );
            assert_eq!(
                one(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#, d),
                Err("- Invalid Request: duplicate member `id`".into())
            );
            assert_eq!(
                one(r#"{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}"#, d),
                Err("1 Invalid Request: duplicate member `method`".into())
            );
            assert_eq!(
                one(r#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#, d),
                Err("- Invalid Request: `id` must be a string or a number".into())
            );
            assert_eq!(
                one(r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#, d),
                Err("1 Invalid Request: `jsonrpc` must be \"2.0\"".into())
            );
            assert_eq!(
                one(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#, d),
                Err("1 Invalid Request: `params` must be an object or an array".into())
            );
            // Unknown members, repeated or not, are skipped.
            assert_eq!(
                one(
                    r#"{"x":1,"x":{"y":2,"y":3},"jsonrpc":"2.0","method":"m"}"#,
                    d
                ),
                Ok("-|m|-".into())
            );
            assert_eq!(one("[1,{}]", d), Ok("batch of 2".into()));
            assert_eq!(one("{", d), Err("Syntax".into()));
            assert_eq!(one(r#"{"jsonrpc":"2.0"} x"#, d), Err("Syntax".into()));
            assert_eq!(one("", d), Err("Syntax".into()));
        }
        let mcp = Dialect::MCP;
        let rpc = Dialect::JSON_RPC;
        assert_eq!(one(r#"{"id":1,"method":"m"}"#, rpc), Ok("1|m|-".into()));
        assert_eq!(
            one(r#"{"id":1,"method":"m"}"#, mcp),
            Err("1 Invalid Request: `jsonrpc` must be \"2.0\"".into())
        );
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#, rpc),
            Ok("null|m|-".into())
        );
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#, mcp),
            Err("- Invalid Request: `id` must be a string or a number".into())
        );
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#, mcp),
            Ok("response".into())
        );
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#, rpc),
            Err("7 Invalid Request: `method` must be a non-empty string".into())
        );
    }

    /// A body that is not UTF-8 is a parse error wherever the bad byte is: in a member the
    /// reader reads, in one it skips, or outside any string.
    #[test]
    fn a_body_that_is_not_utf8_is_a_syntax_error_wherever_the_byte_is() {
        for body in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":\"\xff\"}}"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"extra\":\"\xc3\"}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\xfe\"}",
            b"\xef\xbb\xbf{}",
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\xff]",
        ] {
            for d in [Dialect::JSON_RPC, Dialect::MCP] {
                assert!(
                    matches!(read(body, d, 10), Err(ReadError::Syntax)),
                    "{}",
                    String::from_utf8_lossy(body)
                );
            }
        }
        // Non-ASCII text is read as it is.
        let body = r#"{"jsonrpc":"2.0","id":"é","method":"日本"}"#;
        assert!(read(body.as_bytes(), Dialect::JSON_RPC, 10).is_ok());
    }

    #[test]
    fn batches_are_bounded_and_counted_exactly() {
        let items = format!("[{}]", vec!["{}"; 25].join(","));
        assert_eq!(
            one(&items, Dialect::JSON_RPC),
            Err("TooManyItems { count: 25, max: 10 }".into())
        );
        assert_eq!(one("[]", Dialect::JSON_RPC), Ok("batch of 0".into()));
    }

    #[test]
    fn many_unknown_members_cost_linear_time_and_keep_nothing() {
        // 200 000 distinct unknown members: a quadratic duplicate check would take minutes.
        let mut body = String::from(r#"{"jsonrpc":"2.0","id":1,"method":"m""#);
        for i in 0..200_000 {
            body.push_str(&format!(",\"k{i}\":0"));
        }
        body.push('}');
        assert_eq!(one(&body, Dialect::MCP), Ok("1|m|-".into()));
    }

    #[test]
    fn params_are_strict_and_bounded_in_depth() {
        let raw = |s: &str| serde_json::from_str::<&RawValue>(s).map(|r| r.to_owned());
        let dup = raw(r#"{"a":1,"a":2}"#).unwrap();
        assert_eq!(
            params(Some(&dup), 64).unwrap_err().message(),
            "Invalid params: duplicate key `a`"
        );
        let deep = format!("{}1{}", "[".repeat(65), "]".repeat(65));
        let deep = raw(&deep).unwrap();
        assert_eq!(
            params(Some(&deep), 64).unwrap_err().message(),
            "Invalid params: nested deeper than 64 levels"
        );
        assert!(params(Some(&deep), 128).is_ok());
    }
}
