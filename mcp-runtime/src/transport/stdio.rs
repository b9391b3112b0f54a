//! MCP over stdio: newline-delimited JSON-RPC on stdin/stdout; logs go to stderr; the server
//! exits when stdin closes (after answering what is in flight).

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::context::{CallExtras, Notifier};
use crate::mcp::envelope::{Parsed, parse_body};
use crate::mcp::handler::{Incoming, McpEndpoint, error_body};
use crate::mcp::protocol::{self, Era};

struct LineNotifier(mpsc::UnboundedSender<Vec<u8>>);

impl Notifier for LineNotifier {
    fn notify(&self, message: Vec<u8>) {
        let _ = self.0.send(message);
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
    // The revision negotiated by `initialize` (the handshake era is scoped to the process).
    let negotiated: Arc<Mutex<Option<&'static str>>> = Arc::default();
    let mut tasks = tokio::task::JoinSet::new();
    let mut lines = BufReader::new(input).lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        if let Some(p) = &ep.poison {
            let _ = tx.send(error_body(None, -32603, p, None));
            continue;
        }
        // The same strict reader as Streamable HTTP (a duplicate key is a parse error here).
        let single = match parse_body(line.as_bytes()) {
            Ok(Parsed::Single(single)) => single,
            Ok(Parsed::Batch(_)) => {
                let _ = tx.send(error_body(
                    None,
                    -32600,
                    "Batches are not supported on stdio",
                    None,
                ));
                continue;
            }
            Err(_) => {
                let _ = tx.send(error_body(None, -32700, "Parse error", None));
                continue;
            }
        };
        let msg = match single {
            Ok(Incoming::Request(m)) => m,
            Ok(_) => continue,
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
        let ep = ep.clone();
        let tx = tx.clone();
        tasks.spawn(async move {
            let notifier: Arc<dyn Notifier> = Arc::new(LineNotifier(tx.clone()));
            let answer = ep
                .handle(
                    msg,
                    era,
                    CallExtras {
                        progress_token: None,
                        notifier: Some(notifier),
                        after_response: None,
                        language: None,
                    },
                )
                .await;
            let _ = tx.send(answer.body.into_vec());
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
