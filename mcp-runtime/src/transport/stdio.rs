//! MCP over stdio: newline-delimited JSON-RPC on stdin/stdout; logs go to stderr; the server
//! exits when stdin closes (after answering what is in flight).
//!
//! Lines are read by the edge's reader (MCP dialect), at most [`crate::Limits::body_bytes`]
//! each; at most [`crate::Limits::detached_calls`] calls run at once (one more is refused with
//! -32603, never queued: reading goes on, since a running call may wait for the client's answer
//! to a question it asked), and progress tokens obey the same bound as over HTTP. The
//! connection is the handshake era's session: a call asks its client on stdout and the answer
//! comes back on stdin; `notifications/cancelled` cancels a running call (it is not answered).

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::context::{CallExtras, ClientInput, Notifier};
use crate::edge::read::{self, Body, Dialect, Incoming};
use crate::mcp::cancel::Running;
use crate::mcp::handler::{McpEndpoint, Message, error_body};
use crate::mcp::input::{StreamInput, Waiters};
use crate::mcp::listen::Filter;
use crate::mcp::protocol::{self, Era};

/// The session key of the connection's calls and questions (one connection, one session).
const CONNECTION: &str = "stdio";

struct LineNotifier(mpsc::UnboundedSender<Vec<u8>>);

impl Notifier for LineNotifier {
    fn notify(&self, message: Vec<u8>) {
        let _ = self.0.send(message);
    }
}

/// The change notices of one stdio connection: the handshake era's session subscriptions
/// (forwarded once `initialize` came), and 2026-07-28 listen streams by request id.
#[derive(Default)]
struct Watch {
    /// The session's subscriptions, watched by its forwarding task.
    subscriptions: tokio::sync::watch::Sender<Vec<String>>,
    forwarding: Option<tokio::task::AbortHandle>,
    listens: std::collections::HashMap<String, tokio::task::AbortHandle>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        // The tasks hold the output's sender: the writer ends only once they are gone.
        for h in self.listens.values().chain(&self.forwarding) {
            h.abort();
        }
    }
}

/// Forwards the changes `filter` lets through to the output until `limit` (`None`: the
/// connection's life); a listen stream then gets its final result. Resource updates come for
/// the URIs watched only: the filter's, or the session's `subscriptions` as they change.
fn forward(
    ep: &McpEndpoint,
    tx: mpsc::UnboundedSender<Vec<u8>>,
    mut filter: Filter,
    subscriptions: Option<tokio::sync::watch::Receiver<Vec<String>>>,
    limit: Option<std::time::Duration>,
) -> tokio::task::JoinHandle<()> {
    let mut feed = ep.core.changes().feed();
    feed.watch(&filter.uris);
    tokio::spawn(async move {
        if filter.subscription.is_some() && tx.send(filter.ack()).is_err() {
            return;
        }
        let deadline = tokio::time::sleep(limit.unwrap_or(std::time::Duration::MAX / 4));
        tokio::pin!(deadline);
        let mut subscriptions = subscriptions;
        loop {
            let subscribed = async {
                match subscriptions.as_mut() {
                    Some(s) => match s.changed().await {
                        Ok(()) => s.borrow_and_update().clone(),
                        Err(_) => std::future::pending().await,
                    },
                    None => std::future::pending().await,
                }
            };
            // Biased: an unsubscribe is applied before an update announced after it.
            let change = tokio::select! {
                biased;
                _ = &mut deadline => break,
                uris = subscribed => {
                    filter.uris = uris;
                    feed.watch(&filter.uris);
                    continue;
                }
                c = feed.next() => match c {
                    Some(c) => c,
                    None => break,
                },
            };
            if let Some(frame) = filter.frame(&change)
                && tx.send(frame).is_err()
            {
                return;
            }
        }
        if filter.subscription.is_some() {
            let _ = tx.send(filter.end());
        }
    })
}

/// One line of input, or how it ended.
enum Line {
    Text(Vec<u8>),
    TooLong,
    End,
}

/// Reads one line of at most `max` bytes; a longer one is skipped to its end.
async fn next_line<R: AsyncBufRead + Unpin>(r: &mut R, max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Text(line),
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Text(line)
            });
        }
    }
}

/// Serves one endpoint over any reader/writer pair (stdin/stdout in `serve`).
pub async fn serve_io<R, W>(ep: Arc<McpEndpoint>, input: R, mut output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        while let Some(mut line) = rx.recv().await {
            line.push(b'\n');
            output.write_all(&line).await?;
            output.flush().await?;
        }
        Ok::<_, std::io::Error>(())
    });
    let limits = ep.limits.clone();
    let calls = Arc::new(tokio::sync::Semaphore::new(limits.detached_calls));
    // The revision negotiated by `initialize` (the handshake era is scoped to the process).
    let negotiated: Arc<Mutex<Option<&'static str>>> = Arc::default();
    let mut log_level: Option<crate::mcp::LogLevel> = None;
    // The connection is the session: the client capabilities `initialize` declared (calls may
    // ask the client), requests sent to it waiting for answers, and the calls it may cancel.
    let mut client_caps = serde_json::Value::Object(serde_json::Map::new());
    let waiters: Arc<Waiters> = Arc::default();
    let running = Running::default();
    let mut watch = Watch::default();
    let mut tasks = tokio::task::JoinSet::new();
    let mut input = BufReader::new(input);
    loop {
        let line = match next_line(&mut input, limits.body_bytes).await? {
            Line::End => break,
            Line::TooLong => {
                let m = format!(
                    "Invalid Request: message larger than {} bytes",
                    limits.body_bytes
                );
                let _ = tx.send(error_body(None, -32600, &m, None));
                continue;
            }
            Line::Text(line) => line,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // Finished tasks are reaped as we go: the set holds only what is in flight.
        while tasks.try_join_next().is_some() {}
        if let Some(p) = &ep.poison {
            let _ = tx.send(error_body(None, -32603, p, None));
            continue;
        }
        let call = match read::read(&line, Dialect::MCP, 1) {
            Ok(Body::Single(Ok(Incoming::Call(call)))) if call.id.is_some() => call,
            Ok(Body::Single(Ok(Incoming::Call(n)))) if n.method == "notifications/cancelled" => {
                // On stdio the client ends a listen stream this way (other requests finish).
                let id = n
                    .params
                    .and_then(|p| serde_json::from_str::<serde_json::Value>(p.get()).ok())
                    .and_then(|p| p.get("requestId").map(ToString::to_string));
                if let Some(task) = id.and_then(|id| watch.listens.remove(&id)) {
                    task.abort();
                }
                let params = n.params.and_then(|p| serde_json::from_str(p.get()).ok());
                running.cancel(CONNECTION, params.as_ref());
                continue;
            }
            Ok(Body::Single(Ok(Incoming::Response(reply)))) => {
                // The client's answer to a request a call sent it (handshake era).
                if let Some(id) = reply.id {
                    waiters.deliver(
                        CONNECTION,
                        id.get(),
                        reply.result.map(|r| r.get()),
                        reply.error.map(|e| e.get()),
                    );
                }
                continue;
            }
            Ok(Body::Single(Ok(_))) => continue,
            Ok(Body::Single(Err(inv))) => {
                let id = read::id_value(inv.id);
                let e = inv.error;
                let _ = tx.send(error_body(id.as_ref(), e.code(), e.message(), None));
                continue;
            }
            Ok(Body::Batch(_)) | Err(read::ReadError::TooManyItems { .. }) => {
                let m = "Batches are not supported on stdio";
                let _ = tx.send(error_body(None, -32600, m, None));
                continue;
            }
            Err(read::ReadError::Syntax) => {
                let _ = tx.send(error_body(None, -32700, "Parse error", None));
                continue;
            }
        };
        let mut msg = match Message::from_call(call, limits.depth) {
            Ok(msg) => msg,
            Err((id, e)) => {
                let _ = tx.send(error_body(id.as_ref(), e.code(), e.message(), None));
                continue;
            }
        };
        let era = if msg.meta_version().is_some() {
            if let Err(a) = ep.check_modern_meta(&msg) {
                let _ = tx.send(a.body.into_vec());
                continue;
            }
            Era::Modern
        } else {
            if msg.method == "initialize" {
                let requested = msg.requested_version();
                if let Ok(mut n) = negotiated.lock() {
                    *n = Some(protocol::negotiate(requested));
                }
                client_caps = crate::mcp::input::kept_capabilities(
                    msg.params.as_ref().and_then(|p| p.get("capabilities")),
                );
            }
            let v = negotiated
                .lock()
                .ok()
                .and_then(|n| *n)
                .unwrap_or(protocol::LATEST_HANDSHAKE);
            // The connection is the session: its level applies to the calls that follow.
            if msg.method == "logging/setLevel"
                && let Ok(level) = crate::mcp::handler::set_level_param(&msg)
            {
                log_level = Some(level);
            }
            Era::Handshake(v)
        };
        let offered = ep.offered();
        match (era, msg.method.as_str()) {
            (Era::Handshake(_), "initialize") if watch.forwarding.is_none() => {
                let filter = Filter::session(offered, Vec::new());
                let subs = Some(watch.subscriptions.subscribe());
                let task = forward(&ep, tx.clone(), filter, subs, None);
                watch.forwarding = Some(task.abort_handle());
            }
            (Era::Handshake(_), "resources/subscribe" | "resources/unsubscribe")
                if offered.resources =>
            {
                let mut applied = Ok(());
                watch.subscriptions.send_if_modified(|subs| {
                    let before = subs.len();
                    applied = ep.apply_subscription(subs, &msg, era);
                    applied.is_ok() && subs.len() != before
                });
                let answer = match applied {
                    Ok(()) => ep.ok(msg.id.as_ref(), era, b""),
                    Err(answer) => answer,
                };
                let _ = tx.send(answer.body.into_vec());
                continue;
            }
            (Era::Modern, "subscriptions/listen") => {
                let id = msg.id.clone().unwrap_or_default();
                match Filter::listen(
                    id.clone(),
                    msg.params.as_ref(),
                    msg.meta(),
                    offered,
                    limits.subscriptions,
                    limits.subscription_bytes,
                ) {
                    Ok(filter) => {
                        watch.listens.retain(|_, t| !t.is_finished());
                        if watch.listens.len() >= limits.sse_streams {
                            let m = "too many listen streams on this connection";
                            let _ = tx.send(error_body(Some(&id), -32603, m, None));
                        } else {
                            let task =
                                forward(&ep, tx.clone(), filter, None, Some(limits.listen_timeout));
                            watch.listens.insert(id.to_string(), task.abort_handle());
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(error_body(Some(&id), e.code(), e.message(), None));
                    }
                }
                continue;
            }
            _ => {}
        }
        // Past the bound a call is refused, not queued: reading must go on, since the calls
        // running may wait for the client's answers on this same input.
        let Ok(permit) = calls.clone().try_acquire_owned() else {
            let m = "Server busy: too many calls in progress, try again later";
            let _ = tx.send(error_body(msg.id.as_ref(), -32603, m, None));
            continue;
        };
        let registered = msg
            .id
            .as_ref()
            .and_then(|id| running.register(CONNECTION, id, limits.detached_calls));
        let ep = ep.clone();
        let tx = tx.clone();
        let handshake_input =
            matches!(era, Era::Handshake(_)).then(|| (client_caps.clone(), waiters.clone()));
        tasks.spawn(async move {
            let notifier: Arc<dyn Notifier> = Arc::new(LineNotifier(tx.clone()));
            let cancel = registered.as_ref().map(|r| r.signal.clone());
            let input = handshake_input.map(|(caps, waiters)| {
                Arc::new(StreamInput::new(
                    notifier.clone(),
                    crate::mcp::input::Capabilities::parsed(caps),
                    waiters,
                    Arc::from(CONNECTION),
                    ep.limits.clone(),
                )) as Arc<dyn ClientInput>
            });
            let mut extras = CallExtras {
                notifier: Some(notifier),
                log_level,
                input,
                cancel: cancel.clone(),
                // One peer per connection: its shares are its own.
                caller: Some(crate::context::Caller::local()),
                ..CallExtras::default()
            };
            let answer = ep.serve(&mut msg, era, &mut extras).await;
            // A cancelled call is not answered.
            if !cancel.is_some_and(|c| c.is_cancelled()) {
                let _ = tx.send(answer.body.into_vec());
            }
            drop((permit, registered));
        });
    }
    while tasks.join_next().await.is_some() {}
    drop(watch);
    drop(tx);
    writer.await.map_err(std::io::Error::other)?
}

/// Serves one endpoint on stdin/stdout until stdin closes.
pub async fn serve(ep: Arc<McpEndpoint>) -> std::io::Result<()> {
    serve_io(ep, tokio::io::stdin(), tokio::io::stdout()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_bounded() {
        let input = b"short\n0123456789abcdef\nend".to_vec();
        let mut r = BufReader::with_capacity(4, &input[..]);
        let mut got = Vec::new();
        loop {
            match next_line(&mut r, 8).await.unwrap() {
                Line::Text(t) => got.push(String::from_utf8(t).unwrap()),
                Line::TooLong => got.push("<too long>".into()),
                Line::End => break,
            }
        }
        assert_eq!(got, ["short", "<too long>", "end"]);
    }
}
