//! Observability: one `rpc.call` span per call with OpenTelemetry's JSON-RPC fields, and the
//! metrics by the conventions on the server's `/metrics` route (the Prometheus text format).

use std::io::Write;
use std::sync::{Arc, Mutex};

use mcp_runtime::Limits;
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

/// The series of the server's `/metrics` page (its lines that are not comments), by name and
/// labels without the scope label every series has.
async fn scrape(server: &mcp_runtime::Server) -> std::collections::BTreeMap<String, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = server.router();
    let serving = tokio::spawn(async move { axum::serve(listener, app).await });
    let res = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .unwrap();
    serving.abort();
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = res.text().await.unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(series, v)| {
            (
                series
                    .replace(",otel_scope_name=\"mcp-runtime\"", "")
                    .replace("otel_scope_name=\"mcp-runtime\",", ""),
                v.to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn every_call_has_a_span_and_metrics() {
    let (buf, _guard) = capture(tracing::Level::INFO);

    // The example serves `/metrics`.
    let server = examples::builder().env(Environment::PROD).build().unwrap();
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

    let series = scrape(&server).await;
    let value = |k: &str| series.get(k).map(String::as_str);
    assert_eq!(
        value(
            r#"rpc_server_call_duration_seconds_count{rpc_method="Catalog.ping",rpc_system_name="jsonrpc"}"#
        ),
        Some("3"),
        "{series:#?}"
    );
    // An MCP call's duration is its request's (`mcp.server.operation.duration`, recorded by
    // the MCP face); its failure is counted by face and code.
    assert_eq!(
        value(r#"mcp_runtime_errors_total{error_type="-32404",face="mcp"}"#),
        Some("1")
    );
    assert_eq!(
        value(r#"mcp_runtime_calls_active{face="jsonrpc"}"#),
        Some("0")
    );
    assert_eq!(value(r#"mcp_runtime_calls_active{face="mcp"}"#), Some("0"));
    // Nothing is measured that did not happen.
    assert!(
        series
            .keys()
            .all(|k| !k.contains("Catalog.get") && !k.contains("refusals")),
        "{series:#?}"
    );

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
