//! The one writer of JSON-RPC messages: results, errors, notifications and requests, for
//! every face, transport and call (a handler's progress and logs, a question to the client, a
//! listen stream's notices). The faces write the members they know; the envelope around
//! them is written here, straight into a byte buffer (no `Value` tree built for it).
//!
//! Below the faces, in the layer of records and types, so that everything above writes with
//! it; the framing of answers (bodies of shared bytes, batches, SSE) is `edge::write`'s.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::env::Environment;
use crate::error::RpcError;

/// An answer's id, however the face holds it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Id<'a> {
    /// The JSON text of the request's id.
    Raw(&'a RawValue),
    /// The id as a value.
    Value(&'a Value),
    /// A string id (one the server made: a request to its client).
    Str(&'a str),
    /// `null` (an unreadable id).
    Null,
}

impl<'a> From<Option<&'a RawValue>> for Id<'a> {
    fn from(id: Option<&'a RawValue>) -> Self {
        id.map_or(Id::Null, Id::Raw)
    }
}

impl<'a> From<Option<&'a Value>> for Id<'a> {
    fn from(id: Option<&'a Value>) -> Self {
        id.map_or(Id::Null, Id::Value)
    }
}

fn write_id(out: &mut Vec<u8>, id: Id<'_>) {
    match id {
        Id::Raw(raw) => out.extend_from_slice(raw.get().as_bytes()),
        // Writing a string or a number into a Vec cannot fail.
        Id::Value(v) => {
            let _ = serde_json::to_writer(&mut *out, v);
        }
        Id::Str(s) => json_string(out, s),
        Id::Null => out.extend_from_slice(b"null"),
    }
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"result":` (the caller writes the result and `}`).
pub(crate) fn open_result(out: &mut Vec<u8>, id: Id<'_>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_id(out, id);
    out.extend_from_slice(b",\"result\":");
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"result":<result>}`.
pub(crate) fn result(out: &mut Vec<u8>, id: Id<'_>, result: &str) {
    open_result(out, id);
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"error":{"code":..,"message":..[,"data":..]}}`.
pub(crate) fn error(out: &mut Vec<u8>, id: Id<'_>, code: i32, message: &str, data: Option<&Value>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_id(out, id);
    out.extend_from_slice(b",\"error\":{\"code\":");
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(b",\"message\":");
    let _ = serde_json::to_writer(&mut *out, message);
    if let Some(d) = data {
        out.extend_from_slice(b",\"data\":");
        let _ = serde_json::to_writer(&mut *out, d);
    }
    out.extend_from_slice(b"}}");
}

/// Appends an [`RpcError`] as `env` renders it (data per environment).
pub(crate) fn rpc_error(out: &mut Vec<u8>, id: Id<'_>, e: &RpcError, env: &Environment) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_id(out, id);
    out.extend_from_slice(b",\"error\":");
    let _ = serde_json::to_writer(&mut *out, &e.to_wire(env));
    out.push(b'}');
}

/// An error answer in a fresh buffer.
pub(crate) fn error_body(id: Id<'_>, code: i32, message: &str, data: Option<&Value>) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + message.len());
    error(&mut out, id, code, message, data);
    out
}

/// Appends `{"jsonrpc":"2.0","method":<method>[,"params":<params>]}`; `Err` when the params
/// do not serialize (a handler's log data can fail to), with nothing written.
pub(crate) fn notification<P: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    method: &str,
    params: Option<&P>,
) -> Result<(), serde_json::Error> {
    let start = out.len();
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    json_string(out, method);
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        if let Err(e) = serde_json::to_writer(&mut *out, p) {
            out.truncate(start);
            return Err(e);
        }
    }
    out.push(b'}');
    Ok(())
}

/// A notification in a fresh buffer, for params that always serialize (maps of values,
/// plain records); ones that do not give an empty message, never a partial one.
pub(crate) fn notification_body<P: Serialize + ?Sized>(
    method: &str,
    params: Option<&P>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(96);
    if notification(&mut out, method, params).is_err() {
        out.clear();
    }
    out
}

/// A request to the client (`{"jsonrpc":"2.0","id":..,"method":..,"params":..}`) in a fresh
/// buffer: what a call asks its client (elicitation, sampling, roots).
pub(crate) fn request_body(id: Id<'_>, method: &str, params: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_id(&mut out, id);
    out.extend_from_slice(b",\"method\":");
    json_string(&mut out, method);
    out.extend_from_slice(b",\"params\":");
    let _ = serde_json::to_writer(&mut out, params);
    out.push(b'}');
    out
}

/// A result whose members are a map, in a fresh buffer (the end of a listen stream).
pub(crate) fn result_body(id: Id<'_>, result: &serde_json::Map<String, Value>) -> Vec<u8> {
    let mut out = Vec::with_capacity(96);
    open_result(&mut out, id);
    let _ = serde_json::to_writer(&mut out, result);
    out.push(b'}');
    out
}

/// A `notifications/progress`, written around its four values: the member names are
/// constants, so only the values go through serde_json (a progress or total that is not
/// finite is `null`, as a `Value` made from it would be). Writing into a Vec cannot fail.
pub(crate) fn progress(
    token: &Value,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"#,
    );
    let _ = serde_json::to_writer(&mut out, token);
    out.extend_from_slice(br#","progress":"#);
    write_f64(&mut out, progress);
    if let Some(t) = total {
        out.extend_from_slice(br#","total":"#);
        write_f64(&mut out, t);
    }
    if let Some(m) = message {
        out.extend_from_slice(br#","message":"#);
        json_string(&mut out, m);
    }
    out.extend_from_slice(b"}}");
    out
}

/// A number as serde_json writes an `f64`. Progress is mostly whole counts, written here as
/// an integer and `.0` (serde_json's float formatter costs ten times that).
fn write_f64(out: &mut Vec<u8>, x: f64) {
    // Whole, and small enough that serde_json writes it without an exponent; -0.0 keeps
    // its sign through the float path.
    if x.trunc() == x && x.abs() < 1e15 && (x != 0.0 || x.is_sign_positive()) {
        let _ = serde_json::to_writer(&mut *out, &(x as i64));
        out.extend_from_slice(b".0");
    } else {
        let _ = serde_json::to_writer(out, &x);
    }
}

/// Appends `s` as a JSON string, byte for byte what `serde_json::to_writer(out, s)` writes.
///
/// Written by hand because the text of a structured tool result is that result's JSON
/// escaped again: serde_json's escaper checks a byte at a time and copies each run between
/// escapes through `io::Write`, 13 instructions a byte on such text (a 10 KB result spent
/// 136 k instructions here). This one reads 8 bytes at a time and writes by index into room
/// made ahead: a word is stored whole, and where it holds a byte to escape, the escape is
/// written over the rest. The crates that go faster (`sonic-rs`, `json-escape-simd`) bring
/// unsafe SIMD code for this one loop.
pub(crate) fn json_string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let start = out.len();
    // Room for the text, a quarter more for escapes, grown if the text needs more; written
    // by index, then cut to what was written.
    out.resize(start + bytes.len() + bytes.len() / 4 + ROOM, 0);
    out[start] = b'"';
    let mut o = start + 1;
    let mut i = 0;
    while let Some(word) = bytes.get(i..i + 8) {
        if o + ROOM > out.len() {
            out.resize(out.len() + (bytes.len() - i) + ROOM, 0);
        }
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        out[o..o + 8].copy_from_slice(&w);
        // The first byte to escape, if any (the mask's lowest bit is exact; see `to_escape`).
        let run = (to_escape(u64::from_le_bytes(w)).trailing_zeros() / 8) as usize;
        if run == 8 {
            (i, o) = (i + 8, o + 8);
            continue;
        }
        o = escape(out, o + run, w[run]);
        i += run + 1;
    }
    for &b in &bytes[i..] {
        if o + ROOM > out.len() {
            out.resize(out.len() + ROOM, 0);
        }
        o = escape(out, o, b);
    }
    out[o] = b'"';
    out.truncate(o + 1);
}

/// Room kept ahead of the write position: a whole word plus the longest escape after it.
const ROOM: usize = 16;

/// A mask with the high bit of each byte of `w` (little-endian) that is `"`, `\\` or below
/// 0x20. Above the first such byte a bit may be set wrongly (a borrow), never below it: the
/// lowest set bit is always the first byte to escape.
#[inline]
fn to_escape(w: u64) -> u64 {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
    zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\'))) | below_space
}

/// Writes one byte at `dst[o]` as serde_json writes it in a string; returns where the next
/// goes. `dst` has [`ROOM`] past `o`.
#[inline(always)]
fn escape(dst: &mut [u8], o: usize, b: u8) -> usize {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match b {
        b'"' | b'\\' => b,
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        0x08 => b'b',
        0x0c => b'f',
        0..0x20 => {
            dst[o..o + 6].copy_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]);
            return o + 6;
        }
        _ => {
            dst[o] = b;
            return o + 1;
        }
    };
    dst[o..o + 2].copy_from_slice(&[b'\\', short]);
    o + 2
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escaper writes what serde_json writes, for every byte below 0x80 in every
    /// position of a word, for text around it, and for non-ASCII text.
    #[test]
    fn json_strings_are_written_as_serde_json_writes_them() {
        let check = |s: &str| {
            let mut ours = Vec::new();
            json_string(&mut ours, s);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(s).unwrap(),
                "{s:?}"
            );
        };
        for b in 0u8..0x80 {
            let c = char::from(b);
            for before in 0..10 {
                for after in [0, 1, 7, 8, 9] {
                    check(&format!("{}{c}{}", "a".repeat(before), "z".repeat(after)));
                }
            }
        }
        for s in [
            "",
            "é",
            "\u{7f}\u{80}\u{ff}",
            "日本語のテキスト \"quoted\" \\ back\n",
            "𝄞𝄞𝄞𝄞 🎵 mixed\t\u{1}",
            r#"{"rows":[{"n":1,"name":"a\"b","tags":["x","y"]}]}"#,
        ] {
            check(s);
            check(&s.repeat(5));
        }
    }

    #[test]
    fn messages_are_written_as_their_json_values_were() {
        let token = serde_json::json!("t");
        let progress = |total, message| String::from_utf8(progress(&token, 1.0, total, message));
        assert_eq!(
            progress(Some(f64::NAN), Some("a\"b")).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1.0,"total":null,"message":"a\"b"}}"#
        );
        assert_eq!(
            progress(None, None).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1.0}}"#
        );
        let params = serde_json::json!({"level": "info", "logger": "db", "data": {"b": 1}});
        assert_eq!(
            notification_body("notifications/message", Some(&params)),
            br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"db","data":{"b":1}}}"#
        );
        assert_eq!(
            notification_body::<Value>("notifications/tools/list_changed", None),
            br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
        );
        // Params that fail to serialize leave nothing behind.
        struct Fails;
        impl Serialize for Fails {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        let mut out = b"kept".to_vec();
        assert!(notification(&mut out, "m", Some(&Fails)).is_err());
        assert_eq!(out, b"kept");
        assert_eq!(
            request_body(
                Id::Value(&serde_json::json!(7)),
                "roots/list",
                &serde_json::json!({})
            ),
            br#"{"jsonrpc":"2.0","id":7,"method":"roots/list","params":{}}"#
        );
        let mut result = serde_json::Map::new();
        result.insert("resultType".into(), "complete".into());
        assert_eq!(
            result_body(Id::Null, &result),
            br#"{"jsonrpc":"2.0","id":null,"result":{"resultType":"complete"}}"#
        );
    }

    #[test]
    fn numbers_are_written_as_serde_json_writes_an_f64() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2.25,
            100.0,
            1e14 + 1.0,
            999_999_999_999_999.0,
            1e15,
            -1e15,
            1e16,
            1e300,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let mut ours = Vec::new();
            write_f64(&mut ours, x);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(&x).unwrap(),
                "{x:?}"
            );
        }
    }
}
