//! A discovery document serialized once with its one URL left out, written per request with
//! the URL the request sees.

use axum::body::Bytes;

/// A document serialized once, with one URL left out: `head`, the URL as a JSON string,
/// `tail`.
pub(crate) struct Spliced {
    head: Bytes,
    tail: Bytes,
}

impl Spliced {
    pub(crate) fn new(head: Vec<u8>, tail: Vec<u8>) -> Self {
        Self {
            head: head.into(),
            tail: tail.into(),
        }
    }

    /// The document with `url`, as frames (the shared parts are not copied).
    pub(crate) fn frames(&self, url: &str) -> Vec<Bytes> {
        vec![
            self.head.clone(),
            json_string(url).into(),
            self.tail.clone(),
        ]
    }

    /// The head, `url` and `end` instead of the tail (the `?info` document).
    pub(crate) fn frames_ending(&self, url: &str, end: &'static [u8]) -> Vec<Bytes> {
        vec![
            self.head.clone(),
            json_string(url).into(),
            Bytes::from_static(end),
        ]
    }

    /// Appends the document with `url`.
    pub(crate) fn write(&self, out: &mut Vec<u8>, url: &str) {
        out.extend_from_slice(&self.head);
        out.extend_from_slice(&json_string(url));
        out.extend_from_slice(&self.tail);
    }

    /// The document with `url`, in one buffer.
    pub(crate) fn to_bytes(&self, url: &str) -> Bytes {
        let mut out = Vec::new();
        self.write(&mut out, url);
        out.into()
    }
}

/// A URL as a JSON string.
fn json_string(url: &str) -> Vec<u8> {
    serde_json::to_vec(url).unwrap_or_else(|_| b"\"\"".to_vec())
}
