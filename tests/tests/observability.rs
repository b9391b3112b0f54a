//! Observability: one `rpc.call` span per call with OpenTelemetry's JSON-RPC fields, and the
//! metrics listener's counts and latency per method.

use std::io::Write;
use std::sync::{Arc, Mutex};

use mcp_runtime::Limits;
use mcp_runtime::core::metrics::Metrics;
use mcp_runtime::test_util::handle;
use mcp_runtime::{CallExtras, Environment, Face};
use tracing_subscriber::fmt::format::FmtSpan;

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Captures this thread's log at `level` (spans logged when they close) until the guard drops.
fn capture(level: tracing::Level) -> (Buf, tracing::subscriber::DefaultGuard) {
    let buf = Buf::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_span_events(FmtSpan::CLOSE)
        .with_max_level(level)
        .finish();
    (buf, tracing::subscriber::set_default(subscriber))
}

#[tokio::test]
async fn every_call_has_a_span_and_metrics() {
    let (buf, _guard) = capture(tracing::Level::INFO);

    let metrics = Arc::new(Metrics::default());
    let server = examples::builder()
        .env(Environment::PROD)
        .metrics(metrics.clone())
        .build()
        .unwrap();
    let catalog = server.registry().catalog("mcp", 1).unwrap().clone();
    for _ in 0..3 {
        let r = handle(
            server.core(),
            &catalog,
            br#"{"jsonrpc":"2.0","method":"Catalog.ping","id":1}"#,
            &Limits::default(),
            None,
        )
        .await;
        assert_eq!(r.status, 200);
    }
    let info = catalog.get("Catalog.get").unwrap();
    let admin = server.registry().catalog("admin", 1).unwrap().clone();
    let reindexed = server
        .core()
        .call(mcp_runtime::test_util::CallRequest {
            catalog: &admin,
            info: admin.get("Admin.reindex").unwrap(),
            params: None,
            face: Face::Mcp,
            extras: CallExtras {
                identity: Some(Arc::new(mcp_runtime::Identity::new("ann", ["admin"]))),
                ..CallExtras::default()
            },
        })
        .await;
    assert!(reindexed.is_ok());
    let err = server
        .core()
        .call(mcp_runtime::test_util::CallRequest {
            catalog: &catalog,
            info,
            params: Some(serde_json::json!({"id": 99})),
            face: Face::Mcp,
            extras: CallExtras::default(),
        })
        .await;
    assert_eq!(err.unwrap_err().code(), -32404);

    let stats = metrics.snapshot();
    assert_eq!(
        (stats["Catalog.ping"].ok, stats["Catalog.ping"].errors),
        (3, 0)
    );
    assert_eq!(
        (stats["Catalog.get"].ok, stats["Catalog.get"].errors),
        (0, 1)
    );
    assert!(stats["Catalog.ping"].max_us <= stats["Catalog.ping"].total_us);

    let log = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let closes: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("rpc.call") && l.contains("close"))
        .collect();
    assert_eq!(closes.len(), 5, "{log}");
    let ping = closes[0];
    for field in [
        "otel.kind=\"server\"",
        "rpc.system=\"jsonrpc\"",
        "rpc.jsonrpc.version=\"2.0\"",
        "rpc.method=\"Catalog.ping\"",
        "rpc.group=\"mcp\"",
        "rpc.api_version=1",
        "rpc.face=\"JsonRpc\"",
        "rpc.request_id=\"rpc-",
        "outcome=\"ok\"",
        "duration_us=",
    ] {
        assert!(ping.contains(field), "missing {field} in {ping}");
    }
    assert!(!ping.contains("enduser.id"), "{ping}");
    // The caller's subject, when known; the token never.
    assert!(closes[3].contains("enduser.id=\"ann\""), "{}", closes[3]);
    assert!(
        closes[4].contains("outcome=\"error\"")
            && closes[4].contains("rpc.jsonrpc.error_code=-32404"),
        "{}",
        closes[4]
    );
}

/// Text a client sent reaches the log escaped: a newline in it cannot start a forged line.
#[tokio::test]
async fn request_text_in_logs_is_escaped() {
    let (buf, _guard) = capture(tracing::Level::DEBUG);
    // A listener whose error quotes the request, as application errors often do.
    let server = examples::builder()
        .env(Environment::PROD)
        .on(mcp_runtime::core::EventKind::Request, |ev| {
            let who = ev
                .params()
                .and_then(|p| p.get("who"))
                .and_then(|w| w.as_str());
            match who {
                Some(w) if w.starts_with("refuse") => {
                    Err(mcp_runtime::RpcError::logic(format!("refused caller {w}")))
                }
                _ => Ok(()),
            }
        })
        .build()
        .unwrap();
    let catalog = server.registry().catalog("mcp", 1).unwrap().clone();
    for body in [
        r#"{"jsonrpc":"2.0","method":"Catalog.ping","params":{"who":"refuse\nFORGED caller"},"id":1}"#,
        r#"{"jsonrpc":"2.0","method":"Mail.send","params":{"email":"a@example.com","subject":"hi\nFORGED subject\u001b[31m","text":"0123456789"},"id":2}"#,
    ] {
        let r = handle(
            server.core(),
            &catalog,
            body.as_bytes(),
            &Limits::default(),
            None,
        )
        .await;
        assert_eq!(r.status, 200);
    }
    let log = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert!(
        log.contains("call failed") && log.contains("mail queued"),
        "{log}"
    );
    // The text is there, escaped: the failure's message and the subject.
    assert!(
        log.contains(r"refused caller refuse\nFORGED caller")
            && log.contains(r"hi\nFORGED subject\u{1b}[31m"),
        "{log}"
    );
    assert!(
        log.lines().all(|l| !l.starts_with("FORGED")) && !log.contains('\u{1b}'),
        "{log}"
    );
}
