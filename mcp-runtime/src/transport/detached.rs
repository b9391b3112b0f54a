//! Work that outlives its request's handler: MCP calls answered on an SSE stream, and the
//! streams themselves. Both are bounded ([`crate::Limits::detached_calls`],
//! [`crate::Limits::sse_streams`]); a live stream's call is cancelled when its client goes.

use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::context::{Caller, Notifier};
use crate::edge::places::{Places, Slot};
use crate::edge::write;

/// The bounds on detached calls and open SSE streams: a server-wide ceiling each, and a share
/// per caller.
#[derive(Debug)]
pub(crate) struct Detached {
    /// Detached calls (kind 0) and open SSE streams (kind [`STREAM`]), per caller.
    places: Places<Caller, 2>,
    /// Open streams are counted (`mcp_runtime.streams.active`) while their place is held.
    telemetry: crate::core::telemetry::Telemetry,
}

/// An open SSE stream's place: given back, and no longer counted, when it drops.
pub(crate) struct StreamSlot {
    _slot: Slot,
    _counted: crate::core::telemetry::Held,
}

/// The kind of a detached call's place.
#[cfg(test)]
const CALL: usize = 0;
/// The kind of an open SSE stream's place.
const STREAM: usize = 1;

impl Detached {
    /// The bounds of `limits`; with `shares`, each caller's share counts its places on every
    /// instance.
    pub(crate) fn new(
        limits: &crate::Limits,
        shares: Option<&Arc<crate::core::shares::Shares>>,
        telemetry: crate::core::telemetry::Telemetry,
    ) -> Self {
        Self {
            telemetry,
            places: Places::new(
                [limits.detached_calls, limits.sse_streams],
                [
                    limits.detached_calls_per_caller,
                    limits.sse_streams_per_caller,
                ],
            )
            .across(shares, ["calls", "streams"]),
        }
    }

    /// A place for one more detached call of `who`, if the ceiling and its share allow.
    #[cfg(test)]
    pub(crate) fn call(&self, who: Option<&Caller>) -> Option<Slot> {
        self.places.take(CALL, who)
    }

    /// A place for one more open SSE stream of `who`, if the ceiling and its share allow.
    pub(crate) fn stream(&self, who: Option<&Caller>) -> Option<StreamSlot> {
        let slot = self.places.take(STREAM, who)?;
        Some(self.counted(slot))
    }

    /// A detached call's place and its stream's for `who`, both or neither.
    pub(crate) fn call_and_stream(&self, who: Option<&Caller>) -> Option<(Slot, StreamSlot)> {
        let [call, stream] = self.places.take_each(who)?;
        Some((call, self.counted(stream)))
    }

    fn counted(&self, slot: Slot) -> StreamSlot {
        StreamSlot {
            _slot: slot,
            _counted: self.telemetry.stream(),
        }
    }
}

/// A body that holds its stream's slot until it is dropped.
pub(crate) fn with_slot(body: Body, slot: StreamSlot) -> Body {
    Body::new(Held {
        inner: body,
        _slot: slot,
    })
}

struct Held {
    inner: Body,
    _slot: StreamSlot,
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
}

/// How many events a live stream queues for a slow reader; progress past it is dropped (the
/// final answer waits for room, within the SSE time limit).
const LIVE_QUEUE: usize = 32;

/// The sending side of a live (non-resumable) SSE stream: nothing is kept once sent.
pub(crate) struct Live {
    tx: mpsc::Sender<(Bytes, bool)>,
}

impl Live {
    pub(crate) fn channel() -> (Live, mpsc::Receiver<(Bytes, bool)>) {
        let (tx, rx) = mpsc::channel(LIVE_QUEUE);
        (Live { tx }, rx)
    }

    /// Sends one message as an event, waiting for room; `false` once the client is gone.
    pub(crate) async fn send(&self, message: &[u8]) -> bool {
        self.tx
            .send((write::sse_event(None, message), false))
            .await
            .is_ok()
    }

    /// Sends an SSE comment (ignored by clients): a write that finds the client gone ends
    /// the stream, and an idle connection is not dropped by a proxy. `false` once it is gone.
    pub(crate) async fn keep_alive(&self) -> bool {
        self.tx
            .send((Bytes::from_static(b":\n\n"), false))
            .await
            .is_ok()
    }

    /// Sends the last event; the body ends after it.
    pub(crate) async fn finish(&self, event: Bytes) {
        let _ = self.tx.send((event, true)).await;
    }
}

impl Notifier for Live {
    fn notify(&self, message: Vec<u8>) {
        // Progress is advisory: a reader that does not keep up loses some, never the answer.
        let _ = self.tx.try_send((write::sse_event(None, &message), false));
    }
}

/// A call's stream, opened only when the call needs one: by its first message (a
/// notification, a request to its client, a closed connection), or by the transport when the
/// call is still running after its first poll. A call that answers at once without sending
/// anything is answered in plain JSON: no stream, no task, no events kept.
pub(crate) struct Deferred<S, F> {
    open: F,
    stream: OnceLock<Arc<S>>,
}

impl<S, F: Fn() -> Arc<S>> Deferred<S, F> {
    pub(crate) fn new(open: F) -> Self {
        Self {
            open,
            stream: OnceLock::new(),
        }
    }

    /// The stream, opened now if nothing opened it yet.
    pub(crate) fn stream(&self) -> &Arc<S> {
        self.stream.get_or_init(&self.open)
    }

    /// Whether the call has sent anything (its stream is open).
    pub(crate) fn is_open(&self) -> bool {
        self.stream.get().is_some()
    }
}

impl<S: Notifier, F: Fn() -> Arc<S> + Send + Sync> Notifier for Deferred<S, F> {
    fn notify(&self, message: Vec<u8>) {
        self.stream().notify(message);
    }
    fn close_stream(&self) -> bool {
        self.stream().close_stream()
    }
}

/// A live stream whose body does not exist yet. Until the transport knows whether the call
/// waits, what it sends is kept in a plain list (a call that answers on its first poll has
/// its events and answer written as one body: no channel); once the call waits, the list
/// moves to the queue its body reads.
pub(crate) struct LiveStream {
    state: Mutex<LiveState>,
}

enum LiveState {
    /// The messages sent so far (at most [`LIVE_QUEUE`]: progress past it is dropped, as a
    /// full queue drops it), not yet written as events: a call answered at once has them
    /// written with its answer into one body.
    Kept(Vec<Vec<u8>>),
    /// The call waits: its events go to its body's queue.
    Queued(Live),
    /// Drained: the call has answered.
    Done,
}

impl LiveStream {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(LiveState::Kept(Vec::new())),
        })
    }

    /// Sends the last event; the body ends after it.
    pub(crate) async fn finish(&self, event: Bytes) {
        let tx = match self.state.lock().as_deref() {
            Ok(LiveState::Queued(live)) => live.tx.clone(),
            _ => return,
        };
        let _ = tx.send((event, true)).await;
    }

    /// The queue, for the response body (once), with the events kept so far in it.
    pub(crate) fn take_queue(&self) -> Option<mpsc::Receiver<(Bytes, bool)>> {
        let mut state = self.state.lock().ok()?;
        let LiveState::Kept(kept) = &mut *state else {
            return None;
        };
        let kept = std::mem::take(kept);
        let (live, rx) = Live::channel();
        for message in kept {
            // Never more than the queue holds (see `LiveState::Kept`).
            let _ = live.tx.try_send((write::sse_event(None, &message), false));
        }
        *state = LiveState::Queued(live);
        Some(rx)
    }

    /// The messages sent so far, for a call that has already answered: with its answer,
    /// its whole body.
    pub(crate) fn drain(&self) -> Vec<Vec<u8>> {
        let Ok(mut state) = self.state.lock() else {
            return Vec::new();
        };
        match std::mem::replace(&mut *state, LiveState::Done) {
            LiveState::Kept(events) => events,
            other => {
                *state = other;
                Vec::new()
            }
        }
    }
}

impl Notifier for LiveStream {
    fn notify(&self, message: Vec<u8>) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        match &mut *state {
            // Progress is advisory: past what a queue would hold, it is dropped.
            LiveState::Kept(kept) if kept.len() < LIVE_QUEUE => {
                kept.push(message);
            }
            LiveState::Kept(_) | LiveState::Done => {}
            LiveState::Queued(live) => live.notify(message),
        }
    }
}

/// The body of a live stream: its events until the last; dropped (the client went), it
/// cancels the call.
pub(crate) fn live_body(
    rx: mpsc::Receiver<(Bytes, bool)>,
    task: AbortHandle,
    slot: StreamSlot,
) -> Body {
    Body::new(LiveBody {
        rx,
        task,
        done: false,
        _slot: slot,
    })
}

struct LiveBody {
    rx: mpsc::Receiver<(Bytes, bool)>,
    task: AbortHandle,
    done: bool,
    _slot: StreamSlot,
}

impl Drop for LiveBody {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl http_body::Body for LiveBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        if self.done {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some((event, last))) => {
                self.done = last;
                Poll::Ready(Some(Ok(http_body::Frame::data(event))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(calls: usize, streams: usize, share: usize) -> crate::Limits {
        crate::Limits {
            detached_calls: calls,
            sse_streams: streams,
            detached_calls_per_caller: share,
            sse_streams_per_caller: share,
            ..crate::Limits::default()
        }
    }

    #[test]
    fn slots_are_bounded_and_returned() {
        let d = Detached::new(&limits(1, 2, 2), None, Default::default());
        let a = d.stream(None).unwrap();
        let _b = d.stream(None).unwrap();
        assert!(d.stream(None).is_none());
        drop(a);
        assert!(d.stream(None).is_some());
        let p = d.call(None).unwrap();
        assert!(d.call(None).is_none());
        drop(p);
        assert!(d.call(None).is_some());
    }

    #[test]
    fn a_caller_holds_its_share_and_the_others_are_served() {
        let d = Detached::new(&limits(10, 10, 3), None, Default::default());
        let (flood, other) = (Caller::subject("flood"), Caller::subject("other"));
        let held: Vec<_> = (0..3).map(|_| d.stream(Some(&flood)).unwrap()).collect();
        assert!(d.stream(Some(&flood)).is_none(), "past its share");
        let mine = d.stream(Some(&other)).expect("another caller is served");
        drop(held);
        assert!(d.stream(Some(&flood)).is_some(), "its places came back");
        // A refused share gives back the ceiling's place it took.
        let d = Detached::new(&limits(2, 2, 1), None, Default::default());
        let _one = d.call(Some(&flood)).unwrap();
        assert!(d.call(Some(&flood)).is_none());
        assert!(d.call(Some(&other)).is_some());
        drop(mine);
    }

    #[tokio::test]
    async fn a_live_stream_keeps_events_until_its_call_waits_then_queues_them_in_order() {
        let event = |n: usize| write::sse_event(None, format!("{{\"n\":{n}}}").as_bytes());
        // Answered at once: the kept messages (bounded as the queue is) make the body.
        let once = LiveStream::new();
        for n in 0..LIVE_QUEUE + 5 {
            once.notify(format!("{{\"n\":{n}}}").into_bytes());
        }
        let kept = once.drain();
        assert_eq!(kept.len(), LIVE_QUEUE);
        assert_eq!(
            (&kept[0][..], &kept[LIVE_QUEUE - 1][..]),
            (
                &b"{\"n\":0}"[..],
                format!("{{\"n\":{}}}", LIVE_QUEUE - 1).as_bytes()
            )
        );
        assert!(once.drain().is_empty() && once.take_queue().is_none());
        // Waiting: what was kept comes first in the queue, then what follows, then the end.
        let waits = LiveStream::new();
        waits.notify(b"{\"n\":0}".to_vec());
        let mut rx = waits.take_queue().unwrap();
        assert!(waits.take_queue().is_none(), "one queue");
        waits.notify(b"{\"n\":1}".to_vec());
        waits.finish(Bytes::from_static(b"end")).await;
        assert_eq!(rx.recv().await, Some((event(0), false)));
        assert_eq!(rx.recv().await, Some((event(1), false)));
        assert_eq!(rx.recv().await, Some((Bytes::from_static(b"end"), true)));
    }

    #[tokio::test]
    async fn a_dropped_live_body_cancels_its_call() {
        let d = Detached::new(&limits(1, 1, 1), None, Default::default());
        let (live, rx) = Live::channel();
        let task = tokio::spawn(async move {
            live.notify(b"{}".to_vec());
            std::future::pending::<()>().await;
        });
        let body = live_body(rx, task.abort_handle(), d.stream(None).unwrap());
        drop(body);
        assert!(task.await.unwrap_err().is_cancelled());
        assert!(d.stream(None).is_some(), "the slot came back");
    }
}
