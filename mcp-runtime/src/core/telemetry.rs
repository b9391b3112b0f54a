//! What a server measures, in one place: the instruments of the OpenTelemetry semantic
//! conventions for MCP (`mcp.server.operation.duration`, `mcp.server.session.duration`) and for
//! RPC (`rpc.server.call.duration`), and the runtime's own (`mcp_runtime.*`: calls in flight,
//! errors by code, cache lookups, rate-limit refusals, sessions, streams, tasks, webhook
//! deliveries, queue lag, lock waits).
//!
//! [`Telemetry`] is a handle every layer records through. Without the `otel` feature it is
//! empty and each method is a no-op; with it, a server that was given no meter records nothing
//! either (one branch per call). Every label value is one the server chose (a method or tool
//! of the catalog, a status, a code of a fixed list), never text a client sent: an unknown
//! method is `other`, so no client can grow the number of series.

/// How a request ended, as the metrics and spans label it (`error.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Outcome {
    /// Answered with a result.
    #[default]
    Ok,
    /// A JSON-RPC error with this code.
    Code(i32),
    /// A tool's result with `isError: true` (the tool failed, the protocol did not).
    ToolError,
}

impl Outcome {
    /// The `error.type` value: the JSON-RPC code of a fixed list (the specification's and this
    /// runtime's), `tool_error`, else `_OTHER` (the conventions' fallback); `None` when it
    /// succeeded.
    pub(crate) fn error_type(self) -> Option<&'static str> {
        match self {
            Outcome::Ok => None,
            Outcome::ToolError => Some("tool_error"),
            Outcome::Code(c) => Some(code_label(c)),
        }
    }
}

/// A JSON-RPC code as a label: one of a fixed list, else `_OTHER` (a method may return any
/// code it likes; the series it makes stay bounded).
pub(crate) fn code_label(code: i32) -> &'static str {
    use crate::error::codes::*;
    match code {
        PARSE_ERROR => "-32700",
        INVALID_REQUEST => "-32600",
        METHOD_NOT_FOUND => "-32601",
        INVALID_PARAMS => "-32602",
        INTERNAL_ERROR => "-32603",
        RUNTIME_ERROR => "-32500",
        LOGIC_ERROR => "-32400",
        TOKEN_NOT_SENT => "-32401",
        INVALID_TOKEN => "-32403",
        DATA_NOT_FOUND => "-32404",
        ASYNC_REQUEST => "-32300",
        BATCH_ERROR => "-32301",
        RESOURCE_NOT_FOUND => "-32002",
        HEADER_MISMATCH => "-32020",
        MISSING_CLIENT_CAPABILITY => "-32021",
        UNSUPPORTED_PROTOCOL_VERSION => "-32022",
        RATE_LIMITED => "-32429",
        _ => "_OTHER",
    }
}

/// An MCP method name as a label: the methods of the specification's revisions, else
/// `other` (a client may send any method name).
pub(crate) fn mcp_method_label(method: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "subscriptions/listen",
        "server/discover",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
        "tasks/update",
        "notifications/initialized",
        "notifications/cancelled",
    ];
    KNOWN
        .iter()
        .find(|m| **m == method)
        .copied()
        .unwrap_or("other")
}

/// Which face a call came in on, as a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FaceLabel {
    /// MCP (`tools/call`, `resources/read`, `prompts/get`).
    Mcp,
    /// JSON-RPC (`/rpc`).
    JsonRpc,
}

impl FaceLabel {
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    fn name(self) -> &'static str {
        match self {
            FaceLabel::Mcp => "mcp",
            FaceLabel::JsonRpc => "jsonrpc",
        }
    }
}

impl From<crate::context::Face> for FaceLabel {
    fn from(f: crate::context::Face) -> Self {
        match f {
            crate::context::Face::Mcp => FaceLabel::Mcp,
            crate::context::Face::JsonRpc => FaceLabel::JsonRpc,
        }
    }
}

/// One MCP request, measured: what `mcp.server.operation.duration` records.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) struct Operation {
    /// `mcp.method.name` (a label of [`mcp_method_label`]).
    pub method: &'static str,
    /// `gen_ai.tool.name` of a `tools/call` of a tool of the catalog.
    pub tool: Option<&'static str>,
    /// `gen_ai.prompt.name` of a `prompts/get` of a prompt of the catalog.
    pub prompt: Option<&'static str>,
    /// `mcp.protocol.version`.
    pub version: &'static str,
    /// `network.transport`: `tcp` (HTTP) or `pipe` (stdio).
    pub transport: &'static str,
    /// How it ended.
    pub outcome: Outcome,
}

/// The handle every layer records through (cheap to clone; empty when nothing is measured).
#[derive(Clone, Default)]
pub(crate) struct Telemetry {
    #[cfg(feature = "otel")]
    on: Option<std::sync::Arc<imp::Instruments>>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("on", &self.is_on())
            .finish()
    }
}

/// A place counted while it is held (a call in flight, a session, a stream): given back on drop.
#[must_use]
pub(crate) struct Held {
    #[cfg(feature = "otel")]
    on: Option<(std::sync::Arc<imp::Instruments>, imp::Gauge)>,
}

impl Drop for Held {
    fn drop(&mut self) {
        #[cfg(feature = "otel")]
        if let Some((i, g)) = self.on.take() {
            i.gauge(g, -1);
        }
    }
}

impl Telemetry {
    /// Instruments made from `meter` (the `otel` feature's [`crate::otel::Otel`]).
    #[cfg(feature = "otel")]
    pub(crate) fn new(meter: &opentelemetry::metrics::Meter) -> Self {
        Telemetry {
            on: Some(std::sync::Arc::new(imp::Instruments::new(meter))),
        }
    }

    /// Whether anything is recorded (callers skip reading a clock when not).
    #[inline]
    pub(crate) fn is_on(&self) -> bool {
        #[cfg(feature = "otel")]
        {
            self.on.is_some()
        }
        #[cfg(not(feature = "otel"))]
        {
            false
        }
    }

    /// An MCP request that took `seconds`.
    #[inline]
    pub(crate) fn operation(&self, _op: &Operation, _seconds: f64) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.on {
            i.operation(_op, _seconds);
        }
    }

    /// A `/rpc` call of `method` (the catalog's name) that took `seconds`.
    #[inline]
    pub(crate) fn rpc_call(&self, _method: &'static str, _outcome: Outcome, _seconds: f64) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.on {
            i.rpc_call(_method, _outcome, _seconds);
        }
    }

    /// A call that failed with `code` on `face`.
    #[inline]
    pub(crate) fn error(&self, _face: FaceLabel, _code: i32) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.on {
            i.error(_face, _code);
        }
    }

    /// A call in flight on `face`, until the guard drops.
    #[inline]
    pub(crate) fn call(&self, _face: FaceLabel) -> Held {
        #[cfg(feature = "otel")]
        {
            self.hold(imp::Gauge::Calls(_face))
        }
        #[cfg(not(feature = "otel"))]
        Held {}
    }

    /// An open SSE stream, until the guard drops.
    #[inline]
    pub(crate) fn stream(&self) -> Held {
        #[cfg(feature = "otel")]
        {
            self.hold(imp::Gauge::Streams)
        }
        #[cfg(not(feature = "otel"))]
        Held {}
    }

    /// A session opened (an `initialize` on a stateful endpoint, a stdio connection).
    #[inline]
    pub(crate) fn session_opened(&self) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.on {
            i.session_event("opened");
        }
    }

    /// A session of `version` over `transport` closed (a `DELETE`, the end of a stdio
    /// connection), after `seconds` when its start is known.
    #[inline]
    pub(crate) fn session_closed(
        &self,
        _version: &'static str,
        _transport: &'static str,
        _seconds: Option<f64>,
    ) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.on {
            i.session_event("closed");
            if let Some(s) = _seconds {
                i.session(_version, _transport, s);
            }
        }
    }

    /// A cached method's lookup: a hit or a miss.
    #[inline]
    pub(crate) fn cache(&self, _hit: bool) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.on {
            i.cache(_hit);
        }
    }

    /// A call refused by its rate limit on `face`.
    #[inline]
    pub(crate) fn rate_refused(&self, _face: FaceLabel) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.on {
            i.rate_refused(_face);
        }
    }

    /// A task that reached `status` (`working`, `input_required`, `completed`, `failed`,
    /// `cancelled`).
    #[inline]
    pub(crate) fn task(&self, _status: &'static str) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.on {
            i.task(_status);
        }
    }

    /// A webhook delivery's try: `delivered`, `refused` (answered, not 2xx), `failed` (not sent),
    /// or `dead` (given up, with Redis).
    #[inline]
    pub(crate) fn webhook(&self, _outcome: &'static str) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.on {
            i.webhook(_outcome);
        }
    }

    /// Work taken from the durable queue `seconds` after it was queued.
    #[inline]
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn queue_lag(&self, _seconds: f64) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.on {
            i.queue_lag(_seconds);
        }
    }

    /// A method's lock taken after waiting `seconds`.
    #[inline]
    pub(crate) fn lock_wait(&self, _seconds: f64) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.on {
            i.lock_wait(_seconds);
        }
    }

    #[cfg(feature = "otel")]
    fn hold(&self, g: imp::Gauge) -> Held {
        match &self.on {
            Some(i) => {
                i.gauge(g, 1);
                Held {
                    on: Some((i.clone(), g)),
                }
            }
            None => Held { on: None },
        }
    }
}

/// Whether the spans made only for traces are made: an [`Otel`](crate::otel::Otel) layer
/// exports them (never without the `otel` feature).
#[inline]
pub(crate) fn traces_on() -> bool {
    #[cfg(feature = "otel")]
    {
        crate::otel::traces_on()
    }
    #[cfg(not(feature = "otel"))]
    {
        false
    }
}

/// Makes `tp` (a request's remote trace context) the parent of `span`, a span just made: its
/// spans continue the caller's trace. Only at the root: a span made inside another (a batch
/// item in its batch's span, a call in the application's own HTTP span) stays that one's
/// child. Nothing without the `otel` feature or when `span` is not recorded.
pub(crate) fn set_parent(_span: &tracing::Span, _tp: Option<&crate::context::TraceParent>) {
    #[cfg(feature = "otel")]
    if let Some(tp) = _tp
        && !_span.is_disabled()
        && tracing::Span::current().is_none()
    {
        use opentelemetry::propagation::TextMapPropagator as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let carrier = Carrier(tp);
        let cx = opentelemetry_sdk::propagation::TraceContextPropagator::new().extract(&carrier);
        let _ = _span.set_parent(cx);
    }
}

/// The W3C trace context of `span` (its `traceparent`, and `tracestate` when it has one), to
/// send on: a webhook's headers, a server-to-client request's `_meta`, a task's record. `None`
/// without the `otel` feature or when the span is not exported.
pub(crate) fn context_of(_span: &tracing::Span) -> Option<crate::context::TraceParent> {
    #[cfg(feature = "otel")]
    {
        use opentelemetry::trace::TraceContextExt as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        if _span.is_disabled() {
            return None;
        }
        let cx = _span.context();
        let sc = cx.span().span_context().clone();
        if !sc.is_valid() {
            return None;
        }
        let parent = format!(
            "00-{}-{}-{:02x}",
            sc.trace_id(),
            sc.span_id(),
            sc.trace_flags().to_u8()
        );
        let state = sc.trace_state().header();
        crate::context::TraceParent::new(&parent, Some(&state))
    }
    #[cfg(not(feature = "otel"))]
    None
}

/// A trace context as the propagator reads it.
#[cfg(feature = "otel")]
struct Carrier<'a>(&'a crate::context::TraceParent);

#[cfg(feature = "otel")]
impl opentelemetry::propagation::Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => Some(self.0.traceparent()),
            "tracestate" => self.0.tracestate(),
            _ => None,
        }
    }
    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

#[cfg(feature = "otel")]
mod imp {
    use opentelemetry::KeyValue;
    use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};

    use super::{FaceLabel, Operation, Outcome};

    /// The buckets the MCP conventions give `mcp.server.operation.duration` and
    /// `mcp.server.session.duration`, in seconds.
    const DURATION_BUCKETS: [f64; 14] = [
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];
    /// Finer buckets for what is usually short (a `/rpc` call, a lock wait, the queue's lag).
    const SHORT_BUCKETS: [f64; 15] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0,
    ];

    #[derive(Debug, Clone, Copy)]
    pub(super) enum Gauge {
        Calls(FaceLabel),
        Streams,
    }

    pub(super) struct Instruments {
        operation: Histogram<f64>,
        session: Histogram<f64>,
        rpc: Histogram<f64>,
        calls: UpDownCounter<i64>,
        sessions: Counter<u64>,
        streams: UpDownCounter<i64>,
        errors: Counter<u64>,
        cache: Counter<u64>,
        refusals: Counter<u64>,
        tasks: Counter<u64>,
        webhooks: Counter<u64>,
        queue_lag: Histogram<f64>,
        lock_wait: Histogram<f64>,
    }

    impl Instruments {
        pub(super) fn new(m: &Meter) -> Self {
            let hist = |name: &'static str, what: &'static str, buckets: &[f64]| {
                m.f64_histogram(name)
                    .with_unit("s")
                    .with_description(what)
                    .with_boundaries(buckets.to_vec())
                    .build()
            };
            let gauge = |name: &'static str, what: &'static str| {
                m.i64_up_down_counter(name)
                    .with_unit("{item}")
                    .with_description(what)
                    .build()
            };
            let counter = |name: &'static str, what: &'static str| {
                m.u64_counter(name).with_description(what).build()
            };
            Instruments {
                operation: hist(
                    "mcp.server.operation.duration",
                    "The duration of an MCP request as the server handled it",
                    &DURATION_BUCKETS,
                ),
                session: hist(
                    "mcp.server.session.duration",
                    "The duration of an MCP session as the server saw it",
                    &DURATION_BUCKETS,
                ),
                rpc: hist(
                    "rpc.server.call.duration",
                    "The duration of a JSON-RPC call (`/rpc`)",
                    &SHORT_BUCKETS,
                ),
                calls: gauge("mcp_runtime.calls.active", "Calls running now, by face"),
                sessions: counter(
                    "mcp_runtime.sessions",
                    "MCP sessions opened and closed (by DELETE or the end of a connection), by event",
                ),
                streams: gauge("mcp_runtime.streams.active", "SSE streams open now"),
                errors: counter(
                    "mcp_runtime.errors",
                    "Calls that failed, by face and JSON-RPC code",
                ),
                cache: counter(
                    "mcp_runtime.cache.lookups",
                    "Lookups of cached methods' results, by result (hit, miss)",
                ),
                refusals: counter(
                    "mcp_runtime.rate_limit.refusals",
                    "Calls refused by a rate limit, by face",
                ),
                tasks: counter(
                    "mcp_runtime.tasks.transitions",
                    "Tasks that reached a status, by status",
                ),
                webhooks: counter(
                    "mcp_runtime.webhook.deliveries",
                    "Webhook delivery attempts' ends, by outcome (delivered, retried, failed)",
                ),
                queue_lag: hist(
                    "mcp_runtime.queue.lag",
                    "The time from queueing durable work to an instance taking it",
                    &SHORT_BUCKETS,
                ),
                lock_wait: hist(
                    "mcp_runtime.lock.wait",
                    "The time a call waited for its method's lock",
                    &SHORT_BUCKETS,
                ),
            }
        }

        pub(super) fn operation(&self, op: &Operation, seconds: f64) {
            let mut attrs = Vec::with_capacity(7);
            attrs.extend([
                KeyValue::new("mcp.method.name", op.method),
                KeyValue::new("mcp.protocol.version", op.version),
                KeyValue::new("network.transport", op.transport),
            ]);
            if let Some(t) = op.tool {
                attrs.push(KeyValue::new("gen_ai.tool.name", t));
            }
            if let Some(p) = op.prompt {
                attrs.push(KeyValue::new("gen_ai.prompt.name", p));
            }
            if let Some(e) = op.outcome.error_type() {
                attrs.push(KeyValue::new("error.type", e));
                if let Outcome::Code(_) = op.outcome {
                    attrs.push(KeyValue::new("rpc.response.status_code", e));
                }
            }
            self.operation.record(seconds, &attrs);
        }

        pub(super) fn rpc_call(&self, method: &'static str, outcome: Outcome, seconds: f64) {
            let system = KeyValue::new("rpc.system.name", "jsonrpc");
            let method = KeyValue::new("rpc.method", method);
            match outcome.error_type() {
                None => self.rpc.record(seconds, &[system, method]),
                Some(e) => self.rpc.record(
                    seconds,
                    &[
                        system,
                        method,
                        KeyValue::new("error.type", e),
                        KeyValue::new("rpc.response.status_code", e),
                    ],
                ),
            }
        }

        pub(super) fn session(&self, version: &'static str, transport: &'static str, seconds: f64) {
            self.session.record(
                seconds,
                &[
                    KeyValue::new("mcp.protocol.version", version),
                    KeyValue::new("network.transport", transport),
                ],
            );
        }

        pub(super) fn gauge(&self, g: Gauge, by: i64) {
            match g {
                Gauge::Calls(face) => self.calls.add(by, &[KeyValue::new("face", face.name())]),
                Gauge::Streams => self.streams.add(by, &[]),
            }
        }

        pub(super) fn session_event(&self, event: &'static str) {
            self.sessions.add(1, &[KeyValue::new("event", event)]);
        }

        pub(super) fn error(&self, face: FaceLabel, code: i32) {
            self.errors.add(
                1,
                &[
                    KeyValue::new("face", face.name()),
                    KeyValue::new("error.type", super::code_label(code)),
                ],
            );
        }

        pub(super) fn cache(&self, hit: bool) {
            let result = if hit { "hit" } else { "miss" };
            self.cache.add(1, &[KeyValue::new("result", result)]);
        }

        pub(super) fn rate_refused(&self, face: FaceLabel) {
            self.refusals.add(1, &[KeyValue::new("face", face.name())]);
        }

        pub(super) fn task(&self, status: &'static str) {
            self.tasks.add(1, &[KeyValue::new("status", status)]);
        }

        pub(super) fn webhook(&self, outcome: &'static str) {
            self.webhooks.add(1, &[KeyValue::new("outcome", outcome)]);
        }

        pub(super) fn queue_lag(&self, seconds: f64) {
            self.queue_lag.record(seconds, &[]);
        }

        pub(super) fn lock_wait(&self, seconds: f64) {
            self.lock_wait.record(seconds, &[]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_a_fixed_set() {
        assert_eq!(mcp_method_label("tools/call"), "tools/call");
        assert_eq!(mcp_method_label("tools/call2"), "other");
        assert_eq!(code_label(-32602), "-32602");
        assert_eq!(code_label(-1), "_OTHER");
        assert_eq!(Outcome::Ok.error_type(), None);
        assert_eq!(Outcome::ToolError.error_type(), Some("tool_error"));
    }
}
