//! The accept loop: TCP_NODELAY, a header-read timeout for slow clients, and a graceful
//! shutdown that lets in-flight calls finish (within a deadline) and their `post_response`
//! work run.
//!
//! Written on hyper-util rather than `axum::serve`, which sets neither a header timeout nor a
//! shutdown deadline.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tower::ServiceExt as _;

use crate::core::events::Background;
use crate::limits::Limits;

/// Serves `app` on `listener` until `shutdown` completes, then drains.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: &Limits,
    background: Background,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        // Headers past this are answered 431; hyper needs at least 8 KiB (the limits clamp it).
        .max_buf_size(limits.header_bytes);
    let grace = limits.shutdown_grace;
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of file descriptors and the like: back off instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                };
                // Without TCP_NODELAY, responses written in pieces stall ~40 ms (Nagle + delayed ACK).
                let _ = stream.set_nodelay(true);
                // The peer goes with every request of the connection: the per-caller shares
                // need the client's address.
                let peer = crate::edge::caller::Peer(peer);
                let svc = TowerToHyperService::new(app.clone().map_request(
                    move |mut r: http::Request<hyper::body::Incoming>| {
                        r.extensions_mut().insert(peer);
                        r
                    },
                ));
                let io = super::deadline::WriteDeadline::new(stream, limits.write_timeout);
                let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), svc);
                let conn = graceful.watch(conn.into_owned());
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    tracing::info!("shutting down: finishing in-flight requests");
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(grace = ?grace, "shutdown deadline passed with requests still in flight");
    }
    if !background.drain(grace).await {
        tracing::warn!("shutdown deadline passed with post_response work still running");
    }
    Ok(())
}
