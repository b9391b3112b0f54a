//! The write timeout: a connection whose client stops reading is closed once one write has
//! waited [`crate::Limits::write_timeout`], instead of holding its response (and its task) for
//! as long as the client likes.
//!
//! hyper has no write timeout, and a timer in the response body would never fire: hyper stops
//! polling the body while the socket is full. So the socket itself is wrapped: a write that
//! stays pending starts a timer (allocated only then), and the timer wakes the connection to
//! fail the write when it passes.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// A socket whose writes may not stay blocked longer than a bound.
pub(crate) struct WriteDeadline<T> {
    io: T,
    limit: Option<Duration>,
    /// Running while a write is pending.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<T> WriteDeadline<T> {
    pub(crate) fn new(io: T, limit: Option<Duration>) -> Self {
        Self {
            io,
            limit,
            stalled: None,
        }
    }

    /// What a write that returned `r` means under the deadline.
    fn watch<R>(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<R>>) -> Poll<io::Result<R>> {
        let Some(limit) = self.limit else {
            return r;
        };
        if r.is_ready() {
            self.stalled = None;
            return r;
        }
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading: write timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteDeadline<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, buf);
        self.watch(cx, r)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.watch(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.io).poll_flush(cx);
        self.watch(cx, r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt as _;

    use super::*;

    #[tokio::test]
    async fn a_write_nobody_reads_fails_after_the_limit() {
        // A pipe of 64 bytes that nobody reads: the second write blocks.
        let (ours, _theirs) = tokio::io::duplex(64);
        let mut io = WriteDeadline::new(ours, Some(Duration::from_millis(50)));
        io.write_all(&[0; 64]).await.unwrap();
        let e = io.write_all(&[0; 64]).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    }

    #[tokio::test]
    async fn without_a_limit_nothing_changes() {
        let (ours, mut theirs) = tokio::io::duplex(64);
        let mut io = WriteDeadline::new(ours, None);
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut theirs, &mut all)
                .await
                .map(|_| all.len())
        });
        io.write_all(&[1; 1000]).await.unwrap();
        drop(io);
        assert_eq!(reader.await.unwrap().unwrap(), 1000);
    }
}
