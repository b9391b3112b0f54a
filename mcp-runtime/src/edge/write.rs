//! How answers are framed: bodies, batches and SSE events, for every face and transport (the
//! messages themselves are written by [`crate::wire`]).
//!
//! An answer that ends with bytes shared by many answers (a precomputed `tools/list` page)
//! keeps them shared: a batch of pages costs their headers, not copies of the pages.

use bytes::Bytes;

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

#[cfg(test)]
mod tests {
    use super::*;

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
        use crate::wire::{Id, error_body, result};
        use serde_json::value::RawValue;
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
