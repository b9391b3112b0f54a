//! Panics in user code (a handler, a listener) become errors, never a dead worker.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;

/// Builds a future and runs it, catching a panic in either step: an async handler or a
/// listener may panic before it returns its future as well as while it runs.
pub(crate) async fn catch_panics<Fut: std::future::Future>(
    build: impl FnOnce() -> Fut,
) -> std::thread::Result<Fut::Output> {
    match std::panic::catch_unwind(AssertUnwindSafe(build)) {
        Ok(fut) => AssertUnwindSafe(fut).catch_unwind().await,
        Err(panic) => Err(panic),
    }
}
