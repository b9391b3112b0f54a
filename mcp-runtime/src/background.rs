//! Work that runs beside requests: `post_response` jobs queued until a response is written,
//! and the tracker the graceful shutdown waits on.
//!
//! Below the core and the request context (both use it), so neither depends on the other for it.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;

/// Background work of the server (`post_response` listeners), counted so a graceful
/// shutdown can wait for it.
#[derive(Clone, Default)]
pub struct Background {
    running: Arc<(std::sync::atomic::AtomicUsize, tokio::sync::Notify)>,
}

impl std::fmt::Debug for Background {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Background")
            .field(
                "running",
                &self.running.0.load(std::sync::atomic::Ordering::Relaxed),
            )
            .finish()
    }
}

impl Background {
    /// Spawns a job.
    pub fn spawn(&self, job: BoxFuture<'static, ()>) {
        use std::sync::atomic::Ordering;
        let running = self.running.clone();
        running.0.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(async move {
            // Decrement even if the job panics.
            struct Done(Arc<(std::sync::atomic::AtomicUsize, tokio::sync::Notify)>);
            impl Drop for Done {
                fn drop(&mut self) {
                    if self.0.0.fetch_sub(1, Ordering::SeqCst) == 1 {
                        self.0.1.notify_waiters();
                    }
                }
            }
            let _done = Done(running);
            job.await;
        });
    }

    /// Waits until no job runs, at most `deadline`; returns whether all finished.
    pub async fn drain(&self, deadline: std::time::Duration) -> bool {
        use std::sync::atomic::Ordering;
        let wait = async {
            loop {
                let notified = self.running.1.notified();
                if self.running.0.load(Ordering::SeqCst) == 0 {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(deadline, wait).await.is_ok()
    }
}

/// Work to run once the response has been written (`post_response` listeners).
#[derive(Clone, Default)]
pub struct AfterResponse {
    jobs: Arc<Mutex<Vec<BoxFuture<'static, ()>>>>,
    background: Background,
}

impl std::fmt::Debug for AfterResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AfterResponse")
    }
}

impl AfterResponse {
    /// Queues a job.
    pub fn push(&self, job: BoxFuture<'static, ()>) {
        if let Ok(mut j) = self.jobs.lock() {
            j.push(job);
        }
    }
    /// A queue whose jobs run as `background` work.
    pub fn new(background: &Background) -> Self {
        Self {
            jobs: Arc::default(),
            background: background.clone(),
        }
    }

    /// Runs every queued job: each is polled once here, and only one that has to wait is
    /// spawned as background work. Listeners that answer at once (plain functions) then cost
    /// no task per call.
    pub fn run(&self) {
        let jobs = self
            .jobs
            .lock()
            .map(|mut j| std::mem::take(&mut *j))
            .unwrap_or_default();
        for mut job in jobs {
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            // A job that panics here must not take the connection writing the response down.
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                job.as_mut().poll(&mut cx)
            })) {
                Ok(std::task::Poll::Ready(())) => {}
                // Polled again at once by the task, which registers a waker that works.
                Ok(std::task::Poll::Pending) => self.background.spawn(job),
                Err(_) => tracing::warn!("a post_response job panicked"),
            }
        }
    }
    /// Whether jobs are queued.
    pub fn is_empty(&self) -> bool {
        self.jobs.lock().map(|j| j.is_empty()).unwrap_or(true)
    }
}
