//! Optional sessions of the handshake era, and SSE event streams with resumption
//! (`Last-Event-ID`, SEP-1699).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use tokio::sync::watch;

use crate::context::Notifier;
use crate::error::RpcError;

/// Where sessions live: in memory for one instance, a shared store (e.g. Redis) for several.
pub trait SessionStore: Send + Sync + 'static {
    /// Creates a session for a negotiated revision; returns its id.
    fn create<'a>(&'a self, version: &'a str) -> BoxFuture<'a, Result<String, RpcError>>;
    /// The negotiated revision of a live session, `None` if unknown or ended.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<String>, RpcError>>;
    /// Ends a session; returns whether it existed.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, RpcError>>;
}

/// A secure random id (128 bits, hex): visible ASCII as the transport requires.
pub fn random_id() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // No OS randomness: fall back to a time- and counter-based id (still unique per process).
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        b[..16].copy_from_slice(&t.as_nanos().to_le_bytes());
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Sessions in this process's memory.
#[derive(Default)]
pub struct MemorySessions {
    map: Mutex<HashMap<String, String>>,
}

impl SessionStore for MemorySessions {
    fn create<'a>(&'a self, version: &'a str) -> BoxFuture<'a, Result<String, RpcError>> {
        let id = random_id();
        if let Ok(mut m) = self.map.lock() {
            m.insert(id.clone(), version.to_owned());
        }
        Box::pin(std::future::ready(Ok(id)))
    }
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<String>, RpcError>> {
        let v = self.map.lock().ok().and_then(|m| m.get(id).cloned());
        Box::pin(std::future::ready(Ok(v)))
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, RpcError>> {
        let existed = self
            .map
            .lock()
            .map(|mut m| m.remove(id).is_some())
            .unwrap_or(false);
        Box::pin(std::future::ready(Ok(existed)))
    }
}

#[derive(Default)]
struct StreamState {
    frames: Vec<Bytes>,
    done_at: Option<Instant>,
    /// Bumped when the server closes the client's current connection (SSE polling).
    disconnects: u64,
}

/// One SSE response stream: frames are kept so a client can resume after a disconnect.
pub struct EventStream {
    id: Option<String>,
    retry_ms: u64,
    state: Mutex<StreamState>,
    changed: watch::Sender<u64>,
}

impl EventStream {
    /// A stream; with an id its events carry ids and it starts with a priming event.
    pub fn new(id: Option<String>, retry_ms: u64) -> Arc<Self> {
        let s = Arc::new(Self {
            id,
            retry_ms,
            state: Mutex::default(),
            changed: watch::channel(0).0,
        });
        if let Some(sid) = &s.id {
            let frame = format!("id: {sid}_0\nretry: {}\ndata: \n\n", s.retry_ms);
            s.push_frame(Bytes::from(frame));
        }
        s
    }

    fn push_frame(&self, frame: Bytes) {
        if let Ok(mut st) = self.state.lock() {
            st.frames.push(frame);
        }
        self.changed.send_modify(|v| *v += 1);
    }

    /// Appends one JSON-RPC message as an event.
    pub fn push_message(&self, json: &[u8]) {
        let seq = self.state.lock().map(|s| s.frames.len()).unwrap_or(0);
        let mut frame = Vec::with_capacity(json.len() + 48);
        if let Some(sid) = &self.id {
            frame.extend_from_slice(format!("id: {sid}_{seq}\n").as_bytes());
        }
        frame.extend_from_slice(b"event: message\ndata: ");
        frame.extend_from_slice(json);
        frame.extend_from_slice(b"\n\n");
        self.push_frame(Bytes::from(frame));
    }

    /// Marks the stream complete: readers end after the last frame.
    pub fn finish(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.done_at = Some(Instant::now());
        }
        self.changed.send_modify(|v| *v += 1);
    }

    fn is_stale(&self, now: Instant) -> bool {
        self.state
            .lock()
            .map(|s| {
                s.done_at
                    .is_some_and(|d| now - d > Duration::from_secs(300))
            })
            .unwrap_or(true)
    }

    /// The frames from index `from` on, until the stream is done or the server closes the
    /// connection.
    pub fn body(self: Arc<Self>, from: usize) -> axum::body::Body {
        let rx = self.changed.subscribe();
        let start = self.state.lock().map(|s| s.disconnects).unwrap_or(0);
        let stream =
            futures_util::stream::unfold((self, from, rx), move |(s, pos, mut rx)| async move {
                loop {
                    let next = {
                        let st = s.state.lock().ok()?;
                        if let Some(f) = st.frames.get(pos) {
                            Some(f.clone())
                        } else if st.done_at.is_some() || st.disconnects != start {
                            return None;
                        } else {
                            None
                        }
                    };
                    if let Some(f) = next {
                        return Some((Ok::<_, std::convert::Infallible>(f), (s, pos + 1, rx)));
                    }
                    rx.changed().await.ok()?;
                }
            });
        axum::body::Body::from_stream(stream)
    }
}

impl Notifier for EventStream {
    fn notify(&self, message: Vec<u8>) {
        self.push_message(&message);
    }
    fn close_stream(&self) -> bool {
        if self.id.is_none() {
            return false;
        }
        if let Ok(mut st) = self.state.lock() {
            st.disconnects += 1;
        }
        self.changed.send_modify(|v| *v += 1);
        true
    }
}

/// The resumable streams of an endpoint, by stream id.
#[derive(Default)]
pub struct EventStreams {
    map: Mutex<HashMap<String, (String, Arc<EventStream>)>>,
}

impl EventStreams {
    /// A new resumable stream owned by `session`.
    pub fn open(&self, session: &str, retry_ms: u64) -> Arc<EventStream> {
        let id = random_id();
        let s = EventStream::new(Some(id.clone()), retry_ms);
        if let Ok(mut m) = self.map.lock() {
            let now = Instant::now();
            m.retain(|_, (_, st)| !st.is_stale(now));
            m.insert(id, (session.to_owned(), s.clone()));
        }
        s
    }

    /// The stream and next frame index for a `Last-Event-ID`, if it belongs to `session`.
    pub fn resume(&self, session: &str, last_event_id: &str) -> Option<(Arc<EventStream>, usize)> {
        let (sid, seq) = last_event_id.rsplit_once('_')?;
        let seq: usize = seq.parse().ok()?;
        let m = self.map.lock().ok()?;
        let (owner, s) = m.get(sid)?;
        (owner == session).then(|| (s.clone(), seq + 1))
    }

    /// Drops the streams of an ended session.
    pub fn end_session(&self, session: &str) {
        if let Ok(mut m) = self.map.lock() {
            m.retain(|_, (owner, _)| owner != session);
        }
    }
}
