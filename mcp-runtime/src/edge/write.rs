//! The one writer of JSON-RPC answers: results, errors, batches and SSE events, for every
//! face and transport.
//!
//! Answers are written straight into a byte buffer (no `Value` tree built for the envelope).
//! An answer that ends with bytes shared by many answers (a precomputed `tools/list` page)
//! keeps them shared: a batch of pages costs their headers, not copies of the pages.

use bytes::Bytes;
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

/// The JSON bytes of one answer: those written for the request, then bytes shared by every
/// answer that ends the same way (a precomputed tools/list page with the result's closing).
///
/// A page is served by cloning a reference count, not by copying it: transports send the
/// parts as frames of one body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnswerBody {
    head: Vec<u8>,
    shared: Bytes,
}

impl AnswerBody {
    /// An answer of written bytes followed by shared ones.
    pub(crate) fn shared(head: Vec<u8>, shared: Bytes) -> Self {
        Self { head, shared }
    }

    /// The body's length in bytes.
    pub fn len(&self) -> usize {
        self.head.len() + self.shared.len()
    }

    /// Whether the body has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The two parts, in order: the bytes written for this answer, then the shared ones
    /// (empty for every answer but a tools/list page).
    pub fn parts(&self) -> (&[u8], &[u8]) {
        (&self.head, &self.shared)
    }

    /// The parts as frames (the shared one not copied).
    pub(crate) fn into_frames(self) -> impl Iterator<Item = Bytes> {
        [Bytes::from(self.head), self.shared]
            .into_iter()
            .filter(|b| !b.is_empty())
    }

    /// The body in one buffer (copies the shared part, if any).
    pub fn to_vec(&self) -> Vec<u8> {
        self.clone().into_vec()
    }

    /// The body in one buffer; without a shared part, the written buffer itself.
    pub fn into_vec(self) -> Vec<u8> {
        if self.shared.is_empty() {
            return self.head;
        }
        let mut out = self.head;
        out.extend_from_slice(&self.shared);
        out
    }
}

impl From<Vec<u8>> for AnswerBody {
    fn from(head: Vec<u8>) -> Self {
        Self {
            head,
            shared: Bytes::new(),
        }
    }
}

/// The answers of a batch as one JSON array, in frames (shared parts not copied); `None`
/// when every item was a notification (nothing to answer).
pub(crate) fn batch(answers: impl IntoIterator<Item = AnswerBody>) -> Option<Vec<Bytes>> {
    let mut frames = Vec::new();
    for a in answers {
        frames.push(Bytes::from_static(if frames.is_empty() {
            b"["
        } else {
            b","
        }));
        frames.extend(a.into_frames());
    }
    if frames.is_empty() {
        return None;
    }
    frames.push(Bytes::from_static(b"]"));
    Some(frames)
}

/// One SSE event carrying a JSON-RPC message; with an event id (`<stream>_<seq>`) on
/// resumable streams.
pub(crate) fn sse_event(id: Option<(&str, u64)>, json: &[u8]) -> Bytes {
    let mut frame = Vec::with_capacity(json.len() + SSE_EVENT_OVERHEAD);
    sse_event_into(&mut frame, id, json);
    Bytes::from(frame)
}

/// Events without ids, one per message and then the last, written as one body (a call that
/// answered at once after sending notifications: its answer is the last).
pub(crate) fn sse_events(messages: &[Vec<u8>], last: &[u8]) -> Vec<u8> {
    let len = messages
        .iter()
        .map(|m| m.len() + SSE_EVENT_OVERHEAD)
        .sum::<usize>()
        + last.len()
        + SSE_EVENT_OVERHEAD;
    let mut body = Vec::with_capacity(len);
    for m in messages {
        sse_event_into(&mut body, None, m);
    }
    sse_event_into(&mut body, None, last);
    body
}

/// What an event adds to its message, an id aside: room to reserve.
const SSE_EVENT_OVERHEAD: usize = 64;

/// [`sse_event`], appended to `out`.
fn sse_event_into(out: &mut Vec<u8>, id: Option<(&str, u64)>, json: &[u8]) {
    if let Some((stream, seq)) = id {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(stream.as_bytes());
        out.push(b'_');
        // serde_json writes an integer without the formatting machinery; into a Vec it
        // cannot fail.
        let _ = serde_json::to_writer(&mut *out, &seq);
        out.push(b'\n');
    }
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
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

    /// Several messages make one body of events, in order, each framed as `sse_event` frames
    /// it alone.
    #[test]
    fn sse_events_frame_each_message_in_order() {
        let messages = [b"{\"a\":1}".to_vec(), b"{\"b\":2}".to_vec()];
        let body = sse_events(&messages, b"{\"c\":3}");
        assert_eq!(
            body,
            &b"event: message\ndata: {\"a\":1}\n\nevent: message\ndata: {\"b\":2}\n\n\
               event: message\ndata: {\"c\":3}\n\n"[..]
        );
        let one = [
            sse_event(None, &messages[0]),
            sse_event(None, &messages[1]),
            sse_event(None, b"{\"c\":3}"),
        ]
        .concat();
        assert_eq!(body, one);
        assert_eq!(sse_events(&[], b"{}"), b"event: message\ndata: {}\n\n");
    }

    #[test]
    fn answers_and_batches() {
        let id = serde_json::from_str::<&RawValue>("\"a\"").unwrap();
        let mut out = Vec::new();
        result(&mut out, Id::Raw(id), "{\"x\":1}");
        assert_eq!(out, br#"{"jsonrpc":"2.0","id":"a","result":{"x":1}}"#);
        let e = error_body(Id::Null, -32600, "bad \"x\"", Some(&serde_json::json!([1])));
        assert_eq!(
            e,
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad \"x\"","data":[1]}}"#
        );
        let page = Bytes::from_static(b"PAGE}");
        let answers = (0..3).map(|_| AnswerBody::shared(b"{".to_vec(), page.clone()));
        let frames = batch(answers).unwrap();
        let joined: Vec<u8> = frames.iter().flat_map(|f| f.iter().copied()).collect();
        assert_eq!(joined, b"[{PAGE},{PAGE},{PAGE}]");
        // The page is shared, not copied, in every frame that carries it.
        assert!(
            frames
                .iter()
                .filter(|f| f.as_ptr() == page.as_ptr())
                .count()
                == 3
        );
        assert_eq!(batch(std::iter::empty()), None);
    }
}
