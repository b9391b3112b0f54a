//! The span of an MCP request, by the OpenTelemetry semantic conventions for MCP: named
//! `{mcp.method.name} {target}` (the tool's or prompt's name), kind server, with the method,
//! the revision, the session, the request id, the tool, prompt or resource, the transport and
//! who called (`enduser.id`, the identity's subject; never a token), and on failure
//! `error.type` and `rpc.response.status_code`. Its parent is the trace context the request
//! carried (`params._meta.traceparent`, else the HTTP headers'). Arguments and results are
//! not recorded.

use serde_json::Value;
use tracing::field::Empty;

use super::meta::Meta;
use super::protocol::Era;
use crate::catalog::Catalog;
use crate::context::CallExtras;
use crate::core::telemetry::{Outcome, mcp_method_label};

/// `network.transport` of a request: `pipe` on stdio (its one local peer), else `tcp`.
pub(crate) fn transport_of(extras: &CallExtras) -> &'static str {
    if extras.caller.as_ref().is_some_and(crate::Caller::is_local) {
        "pipe"
    } else {
        "tcp"
    }
}

/// What a request says of itself, for its span.
pub(crate) struct Request<'a> {
    pub method: &'a str,
    pub id: Option<&'a Value>,
    pub params: Option<&'a Value>,
    pub meta: &'a Meta,
}

/// The span of `req`, made only when spans are exported (a process that only logs has the
/// call's `rpc.call` span, as before).
pub(crate) fn request_span(
    catalog: &Catalog,
    req: Request<'_>,
    era: Era,
    extras: &mut CallExtras,
) -> tracing::Span {
    if let Some(tp) = req.meta.trace() {
        extras.trace = Some(tp);
    }
    if !crate::core::telemetry::traces_on() {
        return tracing::Span::none();
    }
    let method = mcp_method_label(req.method);
    let span = tracing::info_span!(
        "mcp.server",
        otel.name = Empty,
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = method,
        mcp.protocol.version = era.version(),
        mcp.session.id = extras.session.as_deref(),
        jsonrpc.request.id = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        mcp.resource.uri = Empty,
        network.transport = transport_of(extras),
        enduser.id = extras.identity.as_deref().map(|w| w.subject.as_str()),
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    match req.id {
        Some(Value::String(id)) => span.record("jsonrpc.request.id", id.as_str()),
        Some(id) => span.record("jsonrpc.request.id", tracing::field::display(id)),
        None => &span,
    };
    let param = |name: &str| req.params.and_then(|p| p.get(name)).and_then(Value::as_str);
    let named = param("name");
    let target = match method {
        "tools/call" => {
            let tool = named.and_then(|n| catalog.get(n)).map(|i| i.def.name);
            if let Some(t) = tool {
                span.record("gen_ai.tool.name", t);
                span.record("gen_ai.operation.name", "execute_tool");
            }
            tool
        }
        "prompts/get" => {
            let prompt = named.and_then(|n| catalog.prompt(n)).map(|p| p.def.name);
            if let Some(p) = prompt {
                span.record("gen_ai.prompt.name", p);
            }
            prompt
        }
        "resources/read" => {
            if let Some(uri) = param("uri") {
                span.record("mcp.resource.uri", crate::error::shown(uri).as_ref());
            }
            None
        }
        _ => None,
    };
    match target {
        Some(t) => span.record("otel.name", format!("{method} {t}")),
        None => span.record("otel.name", method),
    };
    crate::core::telemetry::set_parent(&span, extras.trace.as_ref());
    span
}

/// Records how the request ended on its span.
pub(crate) fn record_outcome(span: &tracing::Span, outcome: Outcome) {
    if span.is_disabled() {
        return;
    }
    if let Some(e) = outcome.error_type() {
        span.record("error.type", e);
        span.record("otel.status_code", "ERROR");
        if let Outcome::Code(_) = outcome {
            span.record("rpc.response.status_code", e);
        }
    }
}
