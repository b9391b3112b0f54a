//! MCP over stdio: newline-delimited JSON-RPC on stdin/stdout; logs go to stderr; the server
//! exits when stdin closes (after answering what is in flight).
//!
//! Lines are read by the edge's reader (MCP dialect), at most [`crate::Limits::body_bytes`]
//! each; at most [`crate::Limits::detached_calls`] calls run at once (reading waits for one
//! to finish), and progress tokens obey the same bound as over HTTP.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::context::{CallExtras, Notifier};
use crate::edge::read::{self, Body, Dialect, Incoming};
use crate::mcp::handler::{McpEndpoint, Message, error_body};
use crate::mcp::protocol::{self, Era};

struct LineNotifier(mpsc::UnboundedSender<Vec<u8>>);

impl Notifier for LineNotifier {
    fn notify(&self, message: Vec<u8>) {
        let _ = self.0.send(message);
    }
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

/// Serves one endpoint over any reader/writer pair (stdin/stdout in [`serve`]).
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
        let msg = match Message::from_call(call, limits.depth) {
            Ok(msg) => msg,
            Err((id, e)) => {
                let _ = tx.send(error_body(id.as_ref(), e.code(), e.message(), None));
                continue;
            }
        };
        let era = if msg.method != "initialize" && msg.meta_version().is_some() {
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
            }
            let v = negotiated
                .lock()
                .ok()
                .and_then(|n| *n)
                .unwrap_or(protocol::LATEST_HANDSHAKE);
            Era::Handshake(v)
        };
        // Reading waits while the bound is reached: a client cannot start more at once.
        let Ok(permit) = calls.clone().acquire_owned().await else {
            break;
        };
        let ep = ep.clone();
        let tx = tx.clone();
        tasks.spawn(async move {
            let notifier: Arc<dyn Notifier> = Arc::new(LineNotifier(tx.clone()));
            let extras = CallExtras {
                notifier: Some(notifier),
                ..CallExtras::default()
            };
            let answer = ep.handle(msg, era, extras).await;
            let _ = tx.send(answer.body.into_vec());
            drop(permit);
        });
    }
    while tasks.join_next().await.is_some() {}
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
