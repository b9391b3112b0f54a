//! MCP over stdio: newline-delimited JSON-RPC on stdin/stdout; logs go to stderr; the server
//! exits when stdin closes (after answering what is in flight).
//!
//! This is framing only: lines of at most [`crate::Limits::body_bytes`] each go to the
//! connection's MCP engine ([`crate::mcp::engine::Connection`]), which decides everything the
//! protocol says (the connection is the handshake era's session; at most
//! [`crate::Limits::detached_calls`] calls run at once, one more is refused, never queued,
//! since a running call may wait for the client's answer on this same input); this loop writes
//! the frames it is given, runs the calls and pumps change notices into the streams.

use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::context::Notifier;
use crate::mcp::engine::{Connection, Effect};
use crate::mcp::handler::McpEndpoint;
use crate::mcp::listen::Filter;

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
/// the URIs watched only: the filter's, or the session's `subscriptions` as they change. The
/// engine's `slot` is held while the stream is open.
fn forward(
    ep: &McpEndpoint,
    tx: mpsc::UnboundedSender<Vec<u8>>,
    mut filter: Filter,
    subscriptions: Option<tokio::sync::watch::Receiver<Vec<String>>>,
    limit: Option<std::time::Duration>,
    slot: Option<Arc<()>>,
) -> tokio::task::JoinHandle<()> {
    let mut feed = ep.core.changes().feed();
    feed.watch(&filter.uris);
    tokio::spawn(async move {
        let _slot = slot;
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

/// Serves one endpoint over any reader/writer pair (stdin/stdout in `serve`): the lines go to
/// the connection's engine, and its effects are carried out here.
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
    let max = ep.limits.body_bytes;
    let mut engine = Connection::new(ep.clone());
    let mut watch = Watch::default();
    let mut tasks = tokio::task::JoinSet::new();
    let mut effects = Vec::new();
    let mut input = BufReader::new(input);
    loop {
        match next_line(&mut input, max).await? {
            Line::End => break,
            Line::TooLong => effects.push(engine.too_long()),
            Line::Text(line) if line.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Text(line) => engine.receive(&line, &mut effects),
        }
        // Finished tasks are reaped as we go: the set holds only what is in flight.
        while tasks.try_join_next().is_some() {}
        for effect in effects.drain(..) {
            match effect {
                Effect::Send(frame) => {
                    let _ = tx.send(frame);
                }
                Effect::Call(call) => {
                    let tx = tx.clone();
                    tasks.spawn(async move {
                        let notifier = Arc::new(LineNotifier(tx.clone()));
                        if let Some(answer) = call.run(notifier).await {
                            let _ = tx.send(answer);
                        }
                    });
                }
                Effect::WatchSession(filter) => {
                    let subs = Some(watch.subscriptions.subscribe());
                    let task = forward(&ep, tx.clone(), filter, subs, None, None);
                    watch.forwarding = Some(task.abort_handle());
                }
                Effect::Subscriptions(uris) => {
                    watch.subscriptions.send_replace(uris);
                }
                Effect::Listen(listen) => {
                    watch.listens.retain(|_, t| !t.is_finished());
                    let until = Some(listen.until);
                    let slot = Some(listen.slot);
                    let task = forward(&ep, tx.clone(), listen.filter, None, until, slot);
                    watch.listens.insert(listen.id, task.abort_handle());
                }
                Effect::EndListen(id) => {
                    if let Some(task) = watch.listens.remove(&id) {
                        task.abort();
                    }
                }
            }
        }
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
