//! The one batch executor, for JSON-RPC batches and MCP 2025-03-26 batches alike.
//!
//! The reader has already bounded the item count ([`super::Limits::batch_items`]); here the
//! items run at most [`super::Limits::batch_concurrency`] at a time, and their answers keep
//! the request order, one per item that is not a notification.

use std::future::Future;

use bytes::Bytes;
use futures_util::StreamExt as _;

use super::write::{self, AnswerBody};

/// Runs the items' calls, `concurrency` at a time; the answers as one JSON array in frames,
/// or `None` when no item needed an answer (notifications only).
///
/// Takes the calls already built (not yet started): a closure kept across the await would
/// trip rustc's higher-ranked `Send` inference for the borrowed items.
///
/// The items run in one span (`jsonrpc.batch`, a child of the request's trace context
/// `trace`): each item's span is its child.
pub(crate) async fn run<Fut>(
    calls: Vec<Fut>,
    concurrency: usize,
    trace: Option<&crate::context::TraceParent>,
) -> Option<Vec<Bytes>>
where
    Fut: Future<Output = Option<AnswerBody>>,
{
    use tracing::Instrument as _;
    // Only for traces: a process that only logs has the items' spans, as before.
    let span = if crate::core::telemetry::traces_on() {
        tracing::info_span!(
            "jsonrpc.batch",
            otel.name = "jsonrpc batch",
            otel.kind = "server",
            rpc.system = "jsonrpc",
            jsonrpc.batch.size = calls.len(),
        )
    } else {
        tracing::Span::none()
    };
    crate::core::telemetry::set_parent(&span, trace);
    let answers: Vec<Option<AnswerBody>> = futures_util::stream::iter(calls)
        .buffered(concurrency.max(1))
        .collect()
        .instrument(span)
        .await;
    write::batch(answers.into_iter().flatten())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn order_is_kept_and_concurrency_bounded() {
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let calls = (0..20u64).map(|i| {
            let (running, peak) = (&running, &peak);
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(20 - i)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                (i % 5 != 0).then(|| i.to_string().into_bytes().into())
            }
        });
        let frames = super::run(calls.collect(), 3, None).await.unwrap();
        let joined: Vec<u8> = frames.iter().flat_map(|f| f.iter().copied()).collect();
        assert_eq!(
            String::from_utf8(joined).unwrap(),
            "[1,2,3,4,6,7,8,9,11,12,13,14,16,17,18,19]"
        );
        assert_eq!(peak.load(Ordering::SeqCst), 3);
        let none = super::run(vec![async { None }], 3, None).await;
        assert!(none.is_none());
    }
}
