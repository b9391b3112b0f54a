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
    jobs: Arc<Mutex<Jobs>>,
    background: Background,
}

type Job = BoxFuture<'static, ()>;

/// The queued jobs, in order. A request queues one job (its call's listeners) or, in a
/// batch, one per call: the first is kept inline, so a single call's queue allocates nothing.
#[derive(Default)]
struct Jobs {
    first: Option<Job>,
    rest: Vec<Job>,
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
            match j.first {
                None => j.first = Some(job),
                Some(_) => j.rest.push(job),
            }
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
        let Jobs { first, rest } = self
            .jobs
            .lock()
            .map(|mut j| std::mem::take(&mut *j))
            .unwrap_or_default();
        for mut job in first.into_iter().chain(rest) {
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
        self.jobs.lock().map(|j| j.first.is_none()).unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs run in the order they were queued, once each; one that waits runs as background
    /// work, which a drain waits for.
    #[tokio::test]
    async fn queued_jobs_run_once_in_order_and_waiting_ones_in_the_background() {
        let background = Background::default();
        let after = AfterResponse::new(&background);
        assert!(after.is_empty());
        let seen = Arc::new(Mutex::new(Vec::new()));
        for n in 0..3 {
            let seen = seen.clone();
            after.push(Box::pin(async move {
                if n == 1 {
                    tokio::task::yield_now().await;
                }
                seen.lock().unwrap().push(n);
            }));
        }
        assert!(!after.is_empty());
        after.run();
        assert!(after.is_empty());
        // 0 and 2 ran at once; 1 waited and finishes in the background.
        assert_eq!(*seen.lock().unwrap(), [0, 2]);
        assert!(background.drain(std::time::Duration::from_secs(5)).await);
        assert_eq!(*seen.lock().unwrap(), [0, 2, 1]);
        after.run();
        assert_eq!(seen.lock().unwrap().len(), 3);
    }
}
