//! A metrics hook: counts and latency per method, recorded by a listener.
//!
//! ```
//! use std::sync::Arc;
//! use mcp_runtime::{Server, core::metrics::Metrics};
//! let metrics = Arc::new(Metrics::default());
//! let server = Server::builder().metrics(metrics.clone()).build().unwrap();
//! assert!(metrics.snapshot().is_empty());
//! # drop(server);
//! ```

use std::collections::BTreeMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;

use super::events::{Event, EventKind, Listener};
use crate::error::RpcError;

/// Counts and latency of one method.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MethodStats {
    /// Successful calls (cache hits are not calls).
    pub ok: u64,
    /// Failed calls.
    pub errors: u64,
    /// Sum of call durations, in microseconds.
    pub total_us: u64,
    /// The longest call, in microseconds.
    pub max_us: u64,
}

/// Per-method statistics; register with [`crate::ServerBuilder::metrics`].
#[derive(Debug, Default)]
pub struct Metrics {
    by_method: Mutex<BTreeMap<String, MethodStats>>,
}

impl Metrics {
    /// The statistics so far, by method name.
    pub fn snapshot(&self) -> BTreeMap<String, MethodStats> {
        self.by_method.lock().map(|m| m.clone()).unwrap_or_default()
    }

    fn record(&self, method: &str, ok: bool, us: u64) {
        if let Ok(mut m) = self.by_method.lock() {
            let s = m.entry(method.to_owned()).or_default();
            if ok {
                s.ok += 1;
            } else {
                s.errors += 1;
            }
            s.total_us += us;
            s.max_us = s.max_us.max(us);
        }
    }
}

/// The listener side of [`Metrics`] (on `response` and `error`).
pub(crate) struct MetricsListener(pub std::sync::Arc<Metrics>);

impl Listener for MetricsListener {
    fn handle<'a, 'b: 'a>(
        &'a self,
        event: &'a mut Event<'b>,
    ) -> BoxFuture<'a, Result<(), RpcError>> {
        let r = self.now(event);
        Box::pin(std::future::ready(r))
    }

    fn handle_now(&self, event: &mut Event<'_>) -> Option<Result<(), RpcError>> {
        Some(self.now(event))
    }

    fn answers_at_once(&self) -> bool {
        true
    }
}

impl MetricsListener {
    fn now(&self, event: &Event<'_>) -> Result<(), RpcError> {
        let us = u64::try_from(event.context().elapsed().as_micros()).unwrap_or(u64::MAX);
        self.0
            .record(event.method(), event.kind() == EventKind::Response, us);
        Ok(())
    }
}
