//! `bench-features FEATURE [--listen 127.0.0.1:PORT] [--redis URL]`: the minimal server
//! (group `feat`, `/mcp/feat/v1`) with one feature added, for the feature-cost table of
//! `docs/benchmarks.md`; `bench-features FEATURE --describe` prints the request that measures it
//! (JSON: path, body, headers, whether a session is opened first, what the answer contains; a
//! body's `__N__` is to be replaced by a number of its own per request).
//!
//! `scripts/bench.sh` (stage `features`) measures each feature's server CPU per request under
//! load and its instructions per request under callgrind, and subtracts `none`'s.

use mcp_runtime::prelude::*;
use serde_json::{Value, json};

/// Every feature, in the order of the table.
const FEATURES: &[&str] = &[
    "none",
    "tracing-info",
    "tracing-info-default",
    "tracing-warn",
    "listeners",
    "translations",
    "translations-lang",
    "auth",
    "cache-memory",
    "cache-redis",
    "lock-memory",
    "lock-redis",
    "rate-memory",
    "rate-redis",
    "dto20",
    "result10k",
    "session",
    "progress",
    "metrics",
    "otlp",
];

/// Texts of the `feat` group's tools in two languages (what `translations` adds).
const TRANSLATIONS: &[(&str, &str)] = &[
    (
        "rpc.en.yaml",
        "sum:\n  title: Sum\n  description: Adds two integers.\n  params:\n    a: The first addend\n    b: The second addend\n",
    ),
    (
        "rpc.uk.yaml",
        "sum:\n  title: Сума\n  description: Додає два цілі числа.\n  params:\n    a: Перший доданок\n    b: Другий доданок\n",
    ),
];

fn usage() -> ! {
    eprintln!(
        "usage: bench-features FEATURE [--listen 127.0.0.1:PORT] [--redis URL] | FEATURE --describe\n\
         features: {}",
        FEATURES.join(" ")
    );
    std::process::exit(2)
}

/// The request that measures `feature`: (tool, arguments, extra headers, with progress token).
fn request(feature: &str) -> (&'static str, Value, Vec<(&'static str, &'static str)>, bool) {
    let sum = json!({"a": 2, "b": 3});
    match feature {
        "translations-lang" => ("sum", sum, vec![("Accept-Language", "uk")], false),
        "auth" => (
            "sum",
            sum,
            vec![("Authorization", "Bearer bench-token")],
            false,
        ),
        "cache-memory" | "cache-redis" => ("sum_cached", sum, vec![], false),
        // A lock key of its own per request (wrk numbers `__N__`): 32 connections taking one
        // key would measure the refusals of a held lock, not the lock.
        "lock-memory" | "lock-redis" => {
            ("sum_locked", json!({"a": "__N__", "b": 3}), vec![], false)
        }
        "rate-memory" | "rate-redis" => ("sum_limited", sum, vec![], false),
        "progress" => ("sum_progress", sum, vec![], true),
        "result10k" => ("big", json!({}), vec![], false),
        "dto20" => {
            let mut r = serde_json::Map::new();
            for i in 1..=20 {
                let v = match i % 3 {
                    _ if i == 20 => json!([1, 2, 3]),
                    1 => json!(format!("value {i}")),
                    2 => json!(i * 10),
                    _ if matches!(i, 6 | 12 | 18) => json!(1.5),
                    _ => json!(true),
                };
                r.insert(format!("f{i:02}"), v);
            }
            ("dto20", json!({ "record": r }), vec![], false)
        }
        _ => ("sum", sum, vec![], false),
    }
}

fn describe(feature: &str) -> Value {
    let (tool, args, headers, progress) = request(feature);
    let mut params = json!({"name": tool, "arguments": args});
    if progress {
        params["_meta"] = json!({"progressToken": 1});
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let path = if feature == "auth" {
        "/mcp/secure/v1"
    } else {
        "/mcp/feat/v1"
    };
    let body = body.to_string().replace("\"__N__\"", "__N__");
    let expect = match tool {
        "sum_locked" => r#""isError":false"#,
        "big" => r#""name":"row number 099 of the large result""#,
        "dto20" => r#""structuredContent":{"result":570}"#,
        _ => r#""structuredContent":{"result":5}"#,
    };
    json!({
        "feature": feature,
        "path": path,
        "body": body,
        "headers": headers
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Value::from(v)))
            .collect::<serde_json::Map<_, _>>(),
        "session": feature == "session",
        "expect": expect,
    })
}

/// The minimal server with `feature` added.
fn builder(feature: &str, redis: Option<&str>) -> Result<mcp_runtime::ServerBuilder, String> {
    // Naming the group links the `benches` library, whose methods `inventory` then finds.
    let _ = benches::FEAT;
    let b = Server::builder()
        .name("bench-features")
        .version(env!("CARGO_PKG_VERSION"));
    let redis = || redis.ok_or_else(|| format!("{feature} needs --redis URL"));
    Ok(match feature {
        "listeners" => EventKind::ALL.into_iter().fold(b, |b, kind| {
            b.on(kind, |e| {
                std::hint::black_box(e.kind());
                Ok(())
            })
        }),
        "translations" | "translations-lang" => {
            b.default_language("en").translations_embedded(TRANSLATIONS)
        }
        "auth" => b.api_tokens(["bench-token"]),
        "cache-redis" | "lock-redis" | "rate-redis" => b.redis(redis()?),
        "session" => b.mcp_stateful("feat"),
        "metrics" => b.metrics_route("/metrics"),
        f if FEATURES.contains(&f) => b,
        _ => usage(),
    })
}

/// The example's subscriber (`examples/src/bin/catalog.rs`: `LogFields`, no colours) at a
/// fixed level, to stderr; with `default_fields`, tracing-subscriber's own field formatter.
fn subscribe(level: &str, default_fields: bool) {
    let b = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new(level));
    if default_fields {
        b.init();
    } else {
        b.fmt_fields(mcp_runtime::log::LogFields).init();
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let feature = args.next().unwrap_or_else(|| usage());
    if feature == OTLP_SINK {
        return otlp_sink().await;
    }
    if !FEATURES.contains(&feature.as_str()) {
        usage();
    }
    let (mut listen, mut redis) = ("127.0.0.1:0".to_owned(), None);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--describe", None) => {
                println!("{}", describe(&feature));
                return Ok(());
            }
            ("--listen", Some(v)) => listen = v,
            ("--redis", Some(v)) => redis = Some(v),
            _ => usage(),
        }
    }
    match feature.as_str() {
        "tracing-info" => subscribe("info", false),
        "tracing-info-default" => subscribe("info", true),
        "tracing-warn" => subscribe("warn", false),
        _ => {}
    }
    let addr: std::net::SocketAddr = listen.parse()?;
    if !addr.ip().is_loopback() {
        usage();
    }
    let mut b = builder(&feature, redis.as_deref())?;
    // `otlp`: spans and metrics exported over OTLP/HTTP (batched, as the SDK's defaults and
    // `OTEL_BSP_*` say) to a sink on this process's own runtime that reads and drops them.
    let (otel, _sink) = if feature == "otlp" {
        let (sink, child) = start_otlp_sink()?;
        let otel = mcp_runtime::otel::Otel::builder()
            .service_name("bench-features")
            .otlp_endpoint(format!("http://{sink}"))
            .build()?;
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        tracing_subscriber::registry()
            .with(tracing_subscriber::EnvFilter::new("info"))
            .with(otel.layer())
            .init();
        b = b.otel(&otel);
        (Some(otel), Some(child))
    } else {
        (None, None)
    };
    let server = b.build()?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on {}", listener.local_addr()?);
    server
        .serve_listener(listener, mcp_runtime::shutdown_signal())
        .await?;
    if let Some(o) = otel {
        o.shutdown();
    }
    Ok(())
}

/// The argument that makes this binary the OTLP sink of the `otlp` row.
const OTLP_SINK: &str = "otlp-sink";

/// The sink of the `otlp` row, a process of its own (this binary again), so that what it costs
/// to receive the exports is not counted as the server's: its address, and the child (killed
/// when dropped).
fn start_otlp_sink() -> std::io::Result<(String, Sink)> {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(std::env::current_exe()?)
        .arg(OTLP_SINK)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        std::io::BufReader::new(out).read_line(&mut line)?;
    }
    Ok((line.trim().to_owned(), Sink(child)))
}

/// The sink's process, killed on drop.
struct Sink(std::process::Child);

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An OTLP/HTTP receiver that answers 200 to everything and keeps nothing; prints its address.
async fn otlp_sink() -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?);
    let app = axum::Router::new().fallback(|body: axum::body::Bytes| async move {
        std::hint::black_box(body.len());
        axum::http::StatusCode::OK
    });
    axum::serve(listener, app).await?;
    Ok(())
}
