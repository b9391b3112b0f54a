//! The language of each request (SEP-2792), on every transport: a request's
//! `params._meta["io.modelcontextprotocol/acceptLanguage"]` (an `Accept-Language` value) selects
//! the language its answer is written in, and the answer names it in
//! `result._meta["io.modelcontextprotocol/contentLanguage"]` (`error.data._meta` for an error).
//!
//! Decided once for every transport, where the engine answers a message
//! (`McpEndpoint::serve` and `handle`): `McpEndpoint::carried_language` is the language a
//! message asks for, `McpEndpoint::take_language` makes it the call's and
//! `McpEndpoint::name_language` writes it into the answer (with [`stamp`] where it must read
//! the answer to know where). On Streamable HTTP the carrier must agree with the
//! `Accept-Language` header when both are sent (`headers::check_language`); a bare header
//! still negotiates, as it always has (the seed's contract, kept where the SEP draft would
//! ignore it).

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::core::json::Key;

/// The request's `_meta` key of its language preference (an `Accept-Language` value).
pub(crate) const ACCEPT_LANGUAGE: &str = "io.modelcontextprotocol/acceptLanguage";
/// The answer's `_meta` key of the language it is written in.
pub(crate) const CONTENT_LANGUAGE: &str = "io.modelcontextprotocol/contentLanguage";

/// `body` (a JSON-RPC response or notification) with `contentLanguage` in `result._meta`,
/// `error.data._meta` or `params._meta`; `None` when there is nowhere to put it (an error
/// whose `data` is not an object, a `_meta` that is not one) or it names a language already.
///
/// Written into the bytes where the member goes, not by rebuilding the answer: one scan of
/// the answer, which keeps its members and their order as they were written.
pub(crate) fn stamp(body: &[u8], lang: &str) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(body).ok()?;
    let member = format!("\"{CONTENT_LANGUAGE}\":{}", serde_json::Value::from(lang));
    let top = members(text, ["result", "error", "params"])?;
    let (at, insert) = match top.found {
        [Some(result), _, _] | [None, None, Some(result)] => into_meta(text, result, &member)?,
        [None, Some(error), _] => {
            let e = members(error.get(), ["data", "", ""])?;
            match e.found[0] {
                Some(data) => into_meta(text, data, &member)?,
                None => (
                    end_of(text, error),
                    format!("{}\"data\":{{\"_meta\":{{{member}}}}}", comma(e.any)),
                ),
            }
        }
        [None, None, None] => return None,
    };
    let mut out = Vec::with_capacity(body.len() + insert.len());
    out.extend_from_slice(&body[..at]);
    out.extend_from_slice(insert.as_bytes());
    out.extend_from_slice(&body[at..]);
    Some(out)
}

/// Where and what to write to put `member` into `object`'s `_meta` (the `_meta` made when
/// it has none); `None` when `object` or its `_meta` is not an object, or the `_meta` has
/// the member already.
fn into_meta(text: &str, object: &RawValue, member: &str) -> Option<(usize, String)> {
    let o = members(object.get(), ["_meta", "", ""])?;
    Some(match o.found[0] {
        None => (
            end_of(text, object),
            format!("{}\"_meta\":{{{member}}}", comma(o.any)),
        ),
        Some(meta) => {
            let m = members(meta.get(), [CONTENT_LANGUAGE, "", ""])?;
            if m.found[0].is_some() {
                return None;
            }
            (end_of(text, meta), format!("{}{member}", comma(m.any)))
        }
    })
}

fn comma(after_members: bool) -> &'static str {
    if after_members { "," } else { "" }
}

/// The offset in `text` of the closing brace of `object`, a slice of it.
fn end_of(text: &str, object: &RawValue) -> usize {
    object.get().as_ptr() as usize - text.as_ptr() as usize + object.get().len() - 1
}

/// What [`members`] found of an object.
struct Found<'a> {
    /// The raw values of the names asked for.
    found: [Option<&'a RawValue>; 3],
    /// Whether the object has any member.
    any: bool,
}

/// The raw values of up to three members of the object `text` (slices of it; an empty name
/// is none); `None` when `text` is not an object.
fn members<'a>(text: &'a str, names: [&str; 3]) -> Option<Found<'a>> {
    if !text.starts_with('{') {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    Look(names).deserialize(&mut de).ok()
}

struct Look<'n>([&'n str; 3]);

impl<'de> DeserializeSeed<'de> for Look<'_> {
    type Value = Found<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Look<'_> {
    type Value = Found<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Found<'de>, A::Error> {
        let mut found = Found {
            found: [None, None, None],
            any: false,
        };
        while let Some(key) = m.next_key_seed(Key)? {
            found.any = true;
            match self.0.iter().position(|n| !n.is_empty() && *n == key) {
                Some(i) => found.found[i] = Some(m.next_value::<&'de RawValue>()?),
                None => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::stamp;

    fn stamped(body: &str) -> Option<String> {
        stamp(body.as_bytes(), "uk").map(|b| String::from_utf8(b).unwrap())
    }

    const CL: &str = r#""io.modelcontextprotocol/contentLanguage":"uk""#;

    #[test]
    fn a_result_gets_the_language_in_its_meta_made_or_kept() {
        assert_eq!(
            stamped(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"_meta":{{{CL}}}}}}}"#)
        );
        assert_eq!(
            stamped(r#"{"jsonrpc":"2.0","id":"a","result":{"tools":[{"_meta":{}}]}}"#).unwrap(),
            format!(
                r#"{{"jsonrpc":"2.0","id":"a","result":{{"tools":[{{"_meta":{{}}}}],"_meta":{{{CL}}}}}}}"#
            )
        );
        assert_eq!(
            stamped(r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"a":{"b":1}},"x":2}}"#).unwrap(),
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"_meta":{{"a":{{"b":1}},{CL}}},"x":2}}}}"#
            )
        );
        assert_eq!(
            stamped(r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{}}}"#).unwrap(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"_meta":{{{CL}}}}}}}"#)
        );
    }

    #[test]
    fn an_error_gets_it_in_its_data_meta() {
        assert_eq!(
            stamped(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}"#).unwrap(),
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32602,"message":"m","data":{{"_meta":{{{CL}}}}}}}}}"#
            )
        );
        assert_eq!(
            stamped(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"x":[]}}}"#)
                .unwrap(),
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":1,"message":"m","data":{{"x":[],"_meta":{{{CL}}}}}}}}}"#
            )
        );
    }

    #[test]
    fn a_notification_gets_it_in_its_params_meta() {
        assert_eq!(
            stamped(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"Крок"}}"#)
                .unwrap(),
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"p","progress":1,"message":"Крок","_meta":{{{CL}}}}}}}"#
            )
        );
    }

    #[test]
    fn nowhere_to_put_it_or_named_already_leaves_the_answer_as_it_was() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":"text"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/contentLanguage":"en"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            "not json",
        ] {
            assert_eq!(stamped(body), None, "{body}");
        }
    }

    #[test]
    fn escaped_keys_and_strings_are_read_as_json() {
        assert_eq!(
            stamped(r#"{"jsonrpc":"2.0","id":"}","result":{"\u005fmeta":{"k":"}"}}}"#).unwrap(),
            format!(r#"{{"jsonrpc":"2.0","id":"}}","result":{{"\u005fmeta":{{"k":"}}",{CL}}}}}}}"#)
        );
    }
}
