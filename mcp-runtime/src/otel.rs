//! OpenTelemetry for a server (feature `otel`): spans and metrics by the semantic conventions
//! for MCP and JSON-RPC, exported over OTLP/HTTP where the standard `OTEL_EXPORTER_OTLP_*`
//! variables say, and kept for a Prometheus scrape ([`crate::ServerBuilder::metrics_route`]).
//!
//! [`Otel`] holds the providers. Its [`layer`](Otel::layer) goes into the application's
//! `tracing` subscriber (the runtime's spans become OpenTelemetry spans); the server records
//! its metrics through it once given with [`crate::ServerBuilder::otel`]:
//!
//! ```no_run
//! use mcp_runtime::otel::Otel;
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Exports when OTEL_EXPORTER_OTLP_ENDPOINT (or a signal's own variable) is set; keeps the
//! // metrics for `/metrics` either way.
//! let otel = Otel::builder().service_name("catalog").prometheus().build()?;
//! tracing_subscriber::registry()
//!     .with(tracing_subscriber::fmt::layer())
//!     .with(otel.layer())
//!     .init();
//! let server = mcp_runtime::Server::builder()
//!     .otel(&otel)
//!     .metrics_route("/metrics")
//!     .build()?;
//! server.serve("127.0.0.1:8080".parse()?).await?;
//! otel.shutdown(); // the last spans and metrics, exported before the process ends
//! # Ok(()) }
//! ```
//!
//! What is recorded is chosen by the server, never by a client: no metric label takes a
//! value a client sent (an unknown method is `other`), a span records who called by the
//! identity's subject (`enduser.id`) and never a token, and no span records arguments or
//! results.

use std::sync::Arc;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;

/// The instrumentation scope of everything the runtime records.
const SCOPE: &str = "mcp-runtime";

/// Whether spans are exported: set when a layer is made ([`Otel::layer`]). The spans that
/// exist only for traces (an MCP request's, a batch's, a webhook delivery's) are made only
/// then; a process that only logs pays for none of them.
static TRACES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether an [`Otel`] layer exports spans in this process.
pub(crate) fn traces_on() -> bool {
    TRACES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Why [`OtelBuilder::build`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// An OTLP exporter could not be built (a malformed endpoint or header variable).
    #[error("the OTLP {signal} exporter: {message}")]
    Exporter {
        /// `traces` or `metrics`.
        signal: &'static str,
        /// What the exporter said.
        message: String,
    },
    /// The Prometheus reader could not be registered.
    #[error("the Prometheus reader: {0}")]
    Prometheus(String),
    /// OTLP export sends from the Tokio runtime, and the builder was called outside one.
    #[error("OTLP export needs a Tokio runtime: build Otel inside one (e.g. in #[tokio::main])")]
    NoRuntime,
}

/// The providers of a server's spans and metrics (cheap to clone; one per process).
#[derive(Clone)]
pub struct Otel {
    inner: Arc<Inner>,
}

struct Inner {
    tracer: Option<SdkTracerProvider>,
    meter: SdkMeterProvider,
    registry: Option<prometheus::Registry>,
}

impl std::fmt::Debug for Otel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Otel")
            .field("traces", &self.inner.tracer.is_some())
            .field("prometheus", &self.inner.registry.is_some())
            .finish_non_exhaustive()
    }
}

/// Builds an [`Otel`]; see [`Otel::builder`].
#[derive(Debug)]
pub struct OtelBuilder {
    service: Option<String>,
    prometheus: bool,
    endpoint: Option<String>,
}

impl Otel {
    /// A builder that reads the standard variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `..._METRICS_ENDPOINT`) turns OTLP/HTTP export
    /// on, `OTEL_EXPORTER_OTLP_HEADERS` and `..._TIMEOUT` tune it, `OTEL_SERVICE_NAME` and
    /// `OTEL_RESOURCE_ATTRIBUTES` describe the service, `OTEL_SDK_DISABLED=true` turns export
    /// off, `OTEL_BSP_*` and `OTEL_METRIC_EXPORT_INTERVAL` set the batching.
    pub fn builder() -> OtelBuilder {
        OtelBuilder {
            service: None,
            prometheus: false,
            endpoint: None,
        }
    }

    /// The layer that makes the runtime's `tracing` spans OpenTelemetry spans, for the
    /// application's subscriber; `None` (a layer that does nothing) when no trace exporter
    /// is configured.
    pub fn layer<S>(
        &self,
    ) -> Option<tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>>
    where
        S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
    {
        use opentelemetry::trace::TracerProvider as _;
        let tracer = self.inner.tracer.as_ref()?.tracer(SCOPE);
        TRACES.store(true, std::sync::atomic::Ordering::Relaxed);
        // The spans carry the conventions' attributes only: not the source location, thread,
        // target or busy/idle times the bridge adds by default.
        Some(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_location(false)
                .with_threads(false)
                .with_target(false)
                .with_tracked_inactivity(false),
        )
    }

    /// Whether spans are exported.
    pub fn exports_traces(&self) -> bool {
        self.inner.tracer.is_some()
    }

    /// Exports what is buffered and stops the exporters: call it before the process ends.
    pub fn shutdown(&self) {
        if let Some(t) = &self.inner.tracer
            && let Err(e) = t.shutdown()
        {
            tracing::debug!(error = %e, "trace provider shutdown");
        }
        if let Err(e) = self.inner.meter.shutdown() {
            tracing::debug!(error = %e, "meter provider shutdown");
        }
    }

    /// Exports what is buffered now (spans and metrics), without stopping.
    pub fn flush(&self) {
        if let Some(t) = &self.inner.tracer {
            let _ = t.force_flush();
        }
        let _ = self.inner.meter.force_flush();
    }

    /// Metrics kept for a Prometheus scrape, and nothing else (no exporter, whatever the
    /// variables say): what a server given a metrics route and no [`Otel`] makes.
    pub(crate) fn prometheus_only() -> Result<Otel, OtelError> {
        let (registry, reader) = prometheus_reader()?;
        Ok(Otel {
            inner: Arc::new(Inner {
                tracer: None,
                meter: SdkMeterProvider::builder().with_reader(reader).build(),
                registry: Some(registry),
            }),
        })
    }

    /// The runtime's meter.
    pub(crate) fn meter(&self) -> opentelemetry::metrics::Meter {
        self.inner.meter.meter(SCOPE)
    }

    /// Whether the metrics are kept for a Prometheus scrape.
    pub(crate) fn has_prometheus(&self) -> bool {
        self.inner.registry.is_some()
    }

    /// The metrics in the Prometheus text exposition format (version 0.0.4).
    pub(crate) fn render_prometheus(&self) -> Result<String, String> {
        let Some(registry) = &self.inner.registry else {
            return Err("no Prometheus reader".to_owned());
        };
        use prometheus::Encoder as _;
        let mut out = Vec::with_capacity(16 * 1024);
        prometheus::TextEncoder::new()
            .encode(&registry.gather(), &mut out)
            .map_err(|e| e.to_string())?;
        String::from_utf8(out).map_err(|e| e.to_string())
    }
}

impl OtelBuilder {
    /// The `service.name` resource attribute, unless `OTEL_SERVICE_NAME` sets it.
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service = Some(name.into());
        self
    }

    /// Keeps the metrics for a Prometheus scrape ([`crate::ServerBuilder::metrics_route`]).
    pub fn prometheus(mut self) -> Self {
        self.prometheus = true;
        self
    }

    /// Exports spans and metrics over OTLP/HTTP to `endpoint` (`http://host:4318`, the
    /// signals' paths appended), whatever the variables say.
    pub fn otlp_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// The providers.
    pub fn build(self) -> Result<Otel, OtelError> {
        let disabled = env_is("OTEL_SDK_DISABLED", "true");
        let wants = |signal: &str| {
            !disabled
                && (self.endpoint.is_some()
                    || set("OTEL_EXPORTER_OTLP_ENDPOINT")
                    || set(&format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT")))
        };
        let resource = {
            let mut b = Resource::builder();
            if let Some(name) = &self.service
                && !set("OTEL_SERVICE_NAME")
            {
                b = b.with_service_name(name.clone());
            }
            b.build()
        };
        let client = || -> Result<ReqwestExporter, OtelError> {
            let runtime =
                tokio::runtime::Handle::try_current().map_err(|_| OtelError::NoRuntime)?;
            Ok(ReqwestExporter {
                client: reqwest::Client::new(),
                runtime,
            })
        };
        let tracer = if wants("TRACES") {
            use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
            let mut b = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_http_client(client()?);
            if let Some(e) = &self.endpoint {
                b = b.with_endpoint(format!("{}/v1/traces", e.trim_end_matches('/')));
            }
            let exporter = b.build().map_err(|e| OtelError::Exporter {
                signal: "traces",
                message: e.to_string(),
            })?;
            Some(
                SdkTracerProvider::builder()
                    .with_resource(resource.clone())
                    .with_batch_exporter(exporter)
                    .build(),
            )
        } else {
            None
        };
        let mut meter = SdkMeterProvider::builder().with_resource(resource);
        if wants("METRICS") {
            use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
            let mut b = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_http_client(client()?);
            if let Some(e) = &self.endpoint {
                b = b.with_endpoint(format!("{}/v1/metrics", e.trim_end_matches('/')));
            }
            let exporter = b.build().map_err(|e| OtelError::Exporter {
                signal: "metrics",
                message: e.to_string(),
            })?;
            meter = meter
                .with_reader(opentelemetry_sdk::metrics::PeriodicReader::builder(exporter).build());
        }
        let registry = if self.prometheus {
            let (registry, reader) = prometheus_reader()?;
            meter = meter.with_reader(reader);
            Some(registry)
        } else {
            None
        };
        Ok(Otel {
            inner: Arc::new(Inner {
                tracer,
                meter: meter.build(),
                registry,
            }),
        })
    }
}

/// A registry for the scrape, and the reader that fills it.
fn prometheus_reader() -> Result<
    (
        prometheus::Registry,
        opentelemetry_prometheus::PrometheusExporter,
    ),
    OtelError,
> {
    let registry = prometheus::Registry::new();
    let reader = opentelemetry_prometheus::exporter()
        .with_registry(registry.clone())
        .build()
        .map_err(|e| OtelError::Prometheus(e.to_string()))?;
    Ok((registry, reader))
}

fn set(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty())
}

fn env_is(var: &str, value: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v.trim().eq_ignore_ascii_case(value))
}

/// The OTLP exporters' HTTP client: the tree's reqwest (0.12; `opentelemetry-http` adapts only
/// 0.13, whose TLS backend would be a second one in the build), run on the server's Tokio
/// runtime (the SDK's batch processors export from threads of their own, where reqwest has no
/// reactor).
#[derive(Debug)]
struct ReqwestExporter {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

/// The most of a collector's answer read (it is a status and a small protobuf).
const ANSWER_BYTES: usize = 1 << 20;

impl opentelemetry_http::HttpClient for ReqwestExporter {
    fn send_bytes<'a, 'f>(
        &'a self,
        request: http::Request<bytes::Bytes>,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<
                    Output = Result<http::Response<bytes::Bytes>, opentelemetry_http::HttpError>,
                > + Send
                + 'f,
        >,
    >
    where
        'a: 'f,
        Self: 'f,
    {
        let client = self.client.clone();
        let sent = self.runtime.spawn(async move {
            let request = reqwest::Request::try_from(request)?;
            let mut response = client.execute(request).await?;
            let status = response.status();
            let headers = std::mem::take(response.headers_mut());
            let mut body = bytes::BytesMut::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > ANSWER_BYTES {
                    return Err::<_, opentelemetry_http::HttpError>(
                        "the collector's answer is over 1 MiB".into(),
                    );
                }
                body.extend_from_slice(&chunk);
            }
            let mut answer = http::Response::builder()
                .status(status)
                .body(body.freeze())?;
            *answer.headers_mut() = headers;
            Ok(answer)
        });
        Box::pin(async move {
            sent.await
                .map_err(|e| Box::new(e) as opentelemetry_http::HttpError)?
        })
    }
}
