//! Asynchronous JSON-RPC calls: `params.$rpc.callback` (the reference core's rule).
//!
//! A call whose params carry `"$rpc": {"callback": URL}` is answered at once with
//! `{"async": true, "callback": URL}`; it then runs through the same pipeline (cache, lock,
//! events, `post_response` once) as a task of the server's task engine, and its JSON-RPC
//! response is POSTed to the URL with `Accept: application/json` and the request's
//! `x-request-id`, `x-correlation-id`, `traceparent`, `tracestate` and `baggage`. A callback
//! that answers outside 2xx is logged as -32300 `Callback endpoint returned HTTP status code:
//! N`. `$rpc.timeout` (10 to 120 s, default 10) bounds the call; `$rpc.rayId` is in the logs
//! and the context ([`crate::RequestContext::ray_id`]).
//!
//! Off unless configured: [`crate::ServerBuilder::callbacks`] with a [`CallbackClient`], or
//! `ServerBuilder::webhooks` (feature `webhooks`: [`HttpCallbacks`], over HTTPS).

use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "webhooks")]
use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::catalog::Catalog;
use crate::context::{CallExtras, CancelSignal, Face};
use crate::core::tasks::Delivery;
use crate::core::{CallRequest, Core, TaskOutcome};
use crate::error::RpcError;
use crate::wire::{self, Id};

pub use super::webhook::CallbackClient;
use super::webhook::{delivery_span, outgoing};

/// The request headers copied to the callback.
pub const TRACE_HEADERS: [&str; 5] = [
    "x-request-id",
    "x-correlation-id",
    "traceparent",
    "tracestate",
    "baggage",
];

/// Where a server keeps deliveries until they are delivered: Redis, when it has it.
#[cfg(feature = "redis")]
pub(crate) type Durable = Option<Arc<super::deliveries::Deliveries>>;
/// Where a server keeps deliveries until they are delivered: nowhere without Redis.
#[cfg(not(feature = "redis"))]
pub(crate) type Durable = Option<Arc<std::convert::Infallible>>;

#[cfg(feature = "redis")]
pub use super::deliveries::DeadDelivery;

/// What an endpoint needs to run asynchronous calls.
#[derive(Clone)]
pub(crate) struct Async {
    pub client: Arc<dyn CallbackClient>,
    pub catalog: Arc<Catalog>,
    /// The request's headers, moved here rather than searched: only a call that starts
    /// asynchronously copies its trace headers out of them (five lookups on every call of a
    /// server with webhooks were a tenth of the cost of a small call).
    pub headers: HeaderMap,
    /// The client's address (for the share of a caller known by nothing better).
    pub peer: Option<std::net::IpAddr>,
    /// The header the group's auth reads its token from, if the group is protected.
    pub token_header: Option<HeaderName>,
    /// The callbacks in flight per destination host.
    pub hosts: Arc<crate::edge::places::Places<Arc<str>>>,
    /// Where deliveries wait for their next try (with Redis).
    pub deliveries: Durable,
}

impl Async {
    /// Who an asynchronous call's task counts against: the subject, else the token's digest,
    /// else the client's address.
    fn caller(
        &self,
        identity: Option<&crate::context::Identity>,
    ) -> Option<crate::context::Caller> {
        let token = self
            .token_header
            .as_ref()
            .and_then(|name| crate::edge::caller::token_of(&self.headers, name));
        crate::edge::caller::choose(identity, token, self.peer)
    }
}

impl Async {
    /// The trace headers of a request.
    pub(crate) fn trace_headers(headers: &HeaderMap) -> Vec<(HeaderName, HeaderValue)> {
        // Looked up by `HeaderName`: a `&str` name would be parsed again for every request.
        static NAMES: [HeaderName; 5] = [
            HeaderName::from_static(TRACE_HEADERS[0]),
            HeaderName::from_static(TRACE_HEADERS[1]),
            HeaderName::from_static(TRACE_HEADERS[2]),
            HeaderName::from_static(TRACE_HEADERS[3]),
            HeaderName::from_static(TRACE_HEADERS[4]),
        ];
        NAMES
            .iter()
            .filter_map(|n| Some((n.clone(), headers.get(n)?.clone())))
            .collect()
    }
}

/// `$rpc`, read and checked.
#[derive(Debug, Default)]
pub(crate) struct RpcOptions {
    pub callback: Option<String>,
    pub timeout: Option<Duration>,
    pub ray_id: Option<String>,
}

fn bad(m: &str) -> RpcError {
    RpcError::invalid_params(format!("Invalid $rpc: {m}"))
}

/// Reads `params.$rpc` (the core removes it before the call); an invalid member is -32602.
pub(crate) fn options(params: Option<&Value>) -> Result<RpcOptions, RpcError> {
    let Some(rpc) = params.and_then(|p| p.get("$rpc")) else {
        return Ok(RpcOptions::default());
    };
    let Value::Object(rpc) = rpc else {
        return Err(bad("must be an object"));
    };
    let mut o = RpcOptions::default();
    for (k, v) in rpc {
        match (k.as_str(), v) {
            ("callback", Value::String(u)) => o.callback = Some(u.clone()),
            ("timeout", v) => match v.as_u64() {
                Some(t @ 10..=120) => o.timeout = Some(Duration::from_secs(t)),
                _ => {
                    return Err(bad(
                        "`timeout` must be an integer of seconds from 10 to 120",
                    ));
                }
            },
            ("rayId", Value::String(r)) if r.len() <= 128 => o.ray_id = Some(r.clone()),
            ("ignoreCache", Value::Bool(_)) => {}
            ("callback", _) => return Err(bad("`callback` must be a URL string")),
            ("rayId", _) => return Err(bad("`rayId` must be a string of at most 128 bytes")),
            ("ignoreCache", _) => return Err(bad("`ignoreCache` must be a boolean")),
            (other, _) => {
                let other: String = other.chars().take(64).collect();
                return Err(bad(&format!(
                    "unknown member `{other}` (expected callback, timeout, rayId, ignoreCache)"
                )));
            }
        }
    }
    Ok(o)
}

/// Whether `url` is an `http`/`https` URL with a host, at most 2 KiB.
fn well_formed(url: &str) -> bool {
    url.len() <= 2048
        && url.parse::<http::Uri>().is_ok_and(|u| {
            matches!(u.scheme_str(), Some("http" | "https"))
                && u.host().is_some_and(|h| !h.is_empty())
        })
}

/// Checks the callback and starts the call in the background; the acknowledgement's result
/// (`{"async":true,"callback":URL}`) or the error to answer.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn start(
    core: &Core,
    asyncs: Option<&Async>,
    identity: Option<&Arc<crate::context::Identity>>,
    caller: Option<&crate::Caller>,
    info_name: &str,
    id: Option<&RawValue>,
    params: Option<Value>,
    opts: RpcOptions,
    callback: String,
) -> Result<String, RpcError> {
    let Some(asyncs) = asyncs else {
        return Err(bad(
            "asynchronous calls (`callback`) are not enabled on this server",
        ));
    };
    if !well_formed(&callback) {
        return Err(bad("`callback` must be an http or https URL"));
    }
    // One place per destination host, held until the result is delivered (or given up).
    let host: Arc<str> = callback
        .parse::<http::Uri>()
        .ok()
        .and_then(|u| u.host().map(str::to_ascii_lowercase))
        .unwrap_or_default()
        .into();
    let Some(place) = asyncs.hosts.take(0, Some(&host)) else {
        return Err(bad(&format!(
            "too many callbacks to {} in flight; try again later",
            crate::error::shown(&host)
        )));
    };
    if let Err(why) = asyncs.client.check(&callback).await {
        return Err(bad(&format!("`callback` cannot be used: {why}")));
    }
    let cancel = CancelSignal::new();
    let tasks = core.tasks().clone();
    // An asynchronous call is a task of its caller (an operator sees them all); an anonymous
    // caller's are nobody's on MCP either.
    let owner = crate::core::tasks::owner(&asyncs.catalog, identity.map(|i| &**i), None, true);
    let caller = match caller {
        Some(c) => Some(c.clone()),
        None => asyncs.caller(identity.map(|i| &**i)),
    };
    // With Redis, the deliveries waiting for a later try count too: those to that host, and
    // the caller's own (its share of them).
    #[cfg(feature = "redis")]
    if let Some(d) = &asyncs.deliveries {
        let key = caller.as_ref().map(ToString::to_string);
        let (to_host, of_caller) = d.pending(&host, key.as_deref()).await.unwrap_or((0, 0));
        if to_host >= d.per_host() {
            return Err(bad(&format!(
                "too many callbacks to {} in flight; try again later",
                crate::error::shown(&host)
            )));
        }
        if of_caller >= d.per_caller() {
            return Err(bad(
                "too many of this caller's callbacks wait to be delivered; try again later",
            ));
        }
    }
    // Its rate limit is decided now: a refused call is answered so, never acknowledged.
    if let Some(info) = asyncs.catalog.get(info_name) {
        core.charge(&asyncs.catalog, info, caller.as_ref()).await?;
    }
    let trace = Async::trace_headers(&asyncs.headers);
    let limit = opts.timeout.unwrap_or(Duration::from_secs(10));
    let job = Delivery {
        method: info_name.to_owned(),
        url: callback.clone(),
        trace: trace
            .iter()
            .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect(),
        id: id.map(|i| i.get().to_owned()),
        ray_id: opts.ray_id,
        timeout_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
    };
    // Queued (with Redis) before it is acknowledged: if this instance stops, another runs the
    // call again and delivers it.
    let work = {
        let (catalog, job, params) = (asyncs.catalog.clone(), job.clone(), params.clone());
        let (owner, caller) = (owner.clone(), caller.as_ref().map(ToString::to_string));
        let identity = identity.map(|i| (i.subject.clone(), i.scopes.clone()));
        move |task: &str| crate::core::tasks::Work {
            caps: None,
            language: None,
            given: serde_json::Map::new(),
            task: task.to_owned(),
            group: catalog.group().name().to_owned(),
            version: catalog.version(),
            era: String::new(),
            params: params.unwrap_or(Value::Null),
            owner,
            caller,
            identity,
            callback: Some(job),
            trace: None,
            entry: String::new(),
            attempt: 1,
        }
    };
    let task = tasks
        .accept(&owner, caller.as_ref(), cancel.clone(), None, work)
        .await?;
    let ack = serde_json::json!({"async": true, "callback": callback}).to_string();
    let extras = CallExtras {
        cancel: Some(cancel),
        ray_id: job.ray_id.as_deref().map(Arc::from),
        identity: identity.cloned(),
        caller,
        ..CallExtras::default()
    };
    if !tasks.hands_off() {
        let run = deliver(
            core.clone(),
            asyncs.client.clone(),
            asyncs.deliveries.clone(),
            asyncs.catalog.clone(),
            params,
            extras,
            job,
            task.id,
        );
        tokio::spawn(async move {
            let _place = place;
            run.await;
        });
    }
    Ok(ack)
}

/// Runs the call of task `task` and POSTs its answer to the callback.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn deliver(
    core: Core,
    client: Arc<dyn CallbackClient>,
    deliveries: Durable,
    catalog: Arc<Catalog>,
    params: Option<Value>,
    extras: CallExtras,
    job: Delivery,
    task: String,
) {
    let tasks = core.tasks().clone();
    let Some(info) = catalog.get(&job.method) else {
        return;
    };
    // The call and its delivery continue the trace of the request that started it.
    let header = |name: &str| {
        job.trace
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let started_by = header("traceparent")
        .and_then(|p| crate::context::TraceParent::new(p, header("tracestate")));
    let mut extras = extras;
    if extras.trace.is_none() {
        extras.trace = started_by.clone();
    }
    // Whose delivery it is, counted while it waits (with Redis).
    #[cfg(feature = "redis")]
    let caller = extras.caller.as_ref().map(ToString::to_string);
    let (method, ray_id) = (job.method.as_str(), job.ray_id.as_deref());
    let limit = Duration::from_millis(job.timeout_ms);
    let call = core.call_charged(CallRequest {
        catalog: &catalog,
        info,
        params,
        face: Face::JsonRpc,
        extras,
    });
    let result = match tokio::time::timeout(limit, call).await {
        Ok(r) => r,
        Err(_) => Err(RpcError::internal(format!(
            "Method '{method}' timed out after {} ms",
            limit.as_millis()
        ))),
    };
    let raw = job.id.and_then(|i| RawValue::from_string(i).ok());
    let id = raw.as_deref().map_or(Id::Null, Id::Raw);
    let mut out = Vec::with_capacity(128);
    let outcome = match &result {
        Ok(o) => {
            wire::result(&mut out, id, o.as_json().get());
            TaskOutcome::Result(serde_json::from_str(o.as_json().get()).unwrap_or_default())
        }
        Err(e) => {
            wire::rpc_error(&mut out, id, e, core.env());
            TaskOutcome::Error(e.to_wire(core.env()))
        }
    };
    // With Redis, the answer is stored before its task ends (a task ends with its queued
    // work, which is then not run again), and tried until its horizon by any instance.
    #[cfg(feature = "redis")]
    if let Some(d) = &deliveries {
        let host = job
            .url
            .parse::<http::Uri>()
            .ok()
            .and_then(|u| u.host().map(str::to_ascii_lowercase))
            .unwrap_or_default();
        let pending = super::deliveries::Pending::new(
            &job.url,
            &host,
            caller.clone(),
            method,
            job.trace.clone(),
            out,
        );
        match d.accept(&pending).await {
            Ok(()) => {
                tasks.finish(&task, outcome);
                d.attempt(pending).await;
                return;
            }
            Err(e) => {
                tracing::warn!(%method, ray_id, error = %e.message(), "callback delivered without a store");
                out = pending.body.into_bytes();
            }
        }
    }
    #[cfg(not(feature = "redis"))]
    let _ = deliveries;
    tasks.finish(&task, outcome);
    // The delivery is a client span of the same trace; the receiver's parent is that span
    // (when spans are exported), else the request's own trace headers are passed on as sent.
    let span = delivery_span(&job.url, method);
    crate::core::telemetry::set_parent(&span, started_by.as_ref());
    let sent_as = crate::core::telemetry::context_of(&span);
    let trace = outgoing(&job.trace, sent_as.as_ref());
    let posted = {
        use tracing::Instrument as _;
        client
            .post(&job.url, &trace, out)
            .instrument(span.clone())
            .await
    };
    let telemetry = core.telemetry();
    match posted {
        Ok(status) if (200..300).contains(&status) => {
            span.record("http.response.status_code", status);
            telemetry.webhook("delivered");
            tracing::debug!(%method, ray_id, status, "callback delivered");
        }
        Ok(status) => {
            span.record("http.response.status_code", status);
            span.record("error.type", status.to_string().as_str());
            span.record("otel.status_code", "ERROR");
            telemetry.webhook("refused");
            let e = RpcError::new(
                crate::codes::ASYNC_REQUEST,
                format!("Callback endpoint returned HTTP status code: {status}"),
            );
            tracing::warn!(%method, ray_id, code = e.code(), error = %e.message(), "callback refused");
        }
        Err(why) => {
            span.record("error.type", "delivery_failed");
            span.record("otel.status_code", "ERROR");
            telemetry.webhook("failed");
            tracing::warn!(%method, ray_id, code = crate::codes::ASYNC_REQUEST, error = %why, "callback failed");
        }
    }
}

/// Runs an asynchronous call again, here, after the instance running it stopped, and
/// delivers its answer.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) async fn take_over(
    core: Core,
    client: Arc<dyn CallbackClient>,
    deliveries: Durable,
    catalog: Arc<Catalog>,
    mut work: crate::core::tasks::Work,
) {
    let Some(job) = work.callback.take() else {
        return;
    };
    let mut extras = match core.tasks().adopt(&work).await {
        Ok(extras) => extras,
        Err(e) => {
            tracing::debug!(task = work.task, error = %e.message(), "not taken over");
            return;
        }
    };
    extras.ray_id = job.ray_id.as_deref().map(Arc::from);
    let params = Some(work.params).filter(|p| !p.is_null());
    deliver(
        core, client, deliveries, catalog, params, extras, job, work.task,
    )
    .await;
}

/// Webhooks over HTTP and HTTPS (feature `webhooks`, with `reqwest` and rustls).
///
/// A callback must name a host by a domain name with a top-level domain (an IP address is
/// refused), and the client connects only to the public addresses that name resolves to:
/// the check is made by the client's own resolver, on the lookup whose addresses are
/// connected to, so a name rebound between a check and the connection reaches nothing.
/// Every IANA special-purpose range of IPv4 and IPv6 is refused (loopback, private,
/// link-local and the cloud metadata address, shared, benchmarking, documentation, reserved,
/// multicast ...), and so is an IPv4 address of those ranges inside an IPv6 one (mapped,
/// compatible, NAT64, 6to4, Teredo). [`HttpCallbacks::allow_hosts`] admits named hosts
/// whatever they resolve to. Environment proxies are not used and redirects are not followed.
/// A delivery answered 5xx, or that cannot connect, is tried again after 1 s, 2 s and 4 s
/// (four tries at most); each try times out after 10 s.
///
/// With [`HttpCallbacks::signing_secrets`], every delivery is signed as the Standard Webhooks
/// specification says (<https://www.standardwebhooks.com>): `webhook-id` (the same on every
/// try of one delivery), `webhook-timestamp` (seconds since the epoch, of the try) and
/// `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, one per
/// secret, so that a receiver can rotate its key).
#[cfg(feature = "webhooks")]
#[derive(Debug, Clone)]
pub struct HttpCallbacks {
    client: reqwest::Client,
    allowed: std::sync::Arc<[String]>,
    backoff: Duration,
    /// The signing keys (decoded), newest first.
    keys: Arc<[Vec<u8>]>,
}

#[cfg(feature = "webhooks")]
impl Default for HttpCallbacks {
    fn default() -> Self {
        Self::new()
    }
}

/// How many times a delivery is tried.
#[cfg(feature = "webhooks")]
const TRIES: u32 = 4;

#[cfg(feature = "webhooks")]
impl HttpCallbacks {
    /// The default client: public hosts only.
    pub fn new() -> Self {
        Self::with_allowed(Arc::from([]), Duration::from_secs(1))
    }

    fn with_allowed(allowed: Arc<[String]>, backoff: Duration) -> Self {
        let resolver = super::egress::PublicResolver {
            allowed: allowed.clone(),
        };
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve the name itself, past the resolver's check.
            .no_proxy()
            .dns_resolver(Arc::new(resolver))
            .build()
            .unwrap_or_default();
        Self {
            client,
            allowed,
            backoff,
            keys: Arc::from([]),
        }
    }

    /// Signs every delivery with these secrets, as the Standard Webhooks specification writes
    /// them (`whsec_` and the key in base64; the prefix may be left out): one signature per
    /// secret, so that during a rotation receivers holding either key verify it. An error
    /// names a secret that is not base64 or is empty.
    pub fn signing_secrets(
        mut self,
        secrets: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> Result<Self, String> {
        use base64::Engine as _;
        let mut keys = Vec::new();
        for (i, s) in secrets.into_iter().enumerate() {
            let s = s.as_ref().trim();
            let b64 = s.strip_prefix("whsec_").unwrap_or(s);
            let key = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .ok()
                .filter(|k| !k.is_empty())
                .ok_or_else(|| {
                    format!(
                        "webhook signing secret {} is not `whsec_` and a base64 key",
                        i + 1
                    )
                })?;
            keys.push(key);
        }
        self.keys = keys.into();
        Ok(self)
    }

    /// The Standard Webhooks headers of one try of delivery `id`.
    fn signature_headers(&self, id: &str, body: &[u8]) -> Vec<(HeaderName, HeaderValue)> {
        if self.keys.is_empty() {
            return Vec::new();
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let signatures = sign(&self.keys, id, now, body);
        [
            ("webhook-id", id.to_owned()),
            ("webhook-timestamp", now.to_string()),
            ("webhook-signature", signatures),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((HeaderName::from_static(k), HeaderValue::from_str(&v).ok()?)))
        .collect()
    }

    /// Also admits these hosts (names or IP addresses as written in the URL, e.g.
    /// `127.0.0.1`, `hooks.internal`) whatever they resolve to: for tests and private
    /// networks whose callers are trusted.
    pub fn allow_hosts(self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let mut allowed = self.allowed.to_vec();
        allowed.extend(hosts.into_iter().map(Into::into));
        Self {
            keys: self.keys,
            ..Self::with_allowed(allowed.into(), self.backoff)
        }
    }

    /// The first wait between tries (doubled each time; default 1 s).
    pub fn retry_backoff(mut self, first: Duration) -> Self {
        self.backoff = first;
        self
    }

    /// One try of delivery `id`: signed, through the checking resolver.
    async fn send(
        &self,
        url: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: bytes::Bytes,
        id: &str,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let mut req = self
            .client
            .post(url)
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::CONTENT_TYPE, "application/json");
        for (k, v) in headers {
            req = req.header(k, v);
        }
        for (k, v) in self.signature_headers(id, &body) {
            req = req.header(k, v);
        }
        req.body(body).send().await
    }

    /// Whether `url`'s host may be asked for: allowed, or a name with a top-level domain (its
    /// addresses are checked by the resolver, when the connection is made).
    fn admitted(&self, url: &str) -> Result<(), String> {
        let uri = url
            .parse::<http::Uri>()
            .map_err(|_| "not a URL".to_owned())?;
        let host = uri.host().unwrap_or_default().trim_matches(['[', ']']);
        if self.allowed.iter().any(|a| a.eq_ignore_ascii_case(host)) {
            return Ok(());
        }
        let tld = host.rsplit('.').next().unwrap_or("");
        let named =
            host.contains('.') && tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic());
        if !named {
            return Err(format!(
                "`{}` is not a public host name",
                crate::error::shown(host)
            ));
        }
        Ok(())
    }
}

/// `webhook-signature`: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` per key,
/// space-separated.
#[cfg(feature = "webhooks")]
fn sign(keys: &[Vec<u8>], id: &str, timestamp: u64, body: &[u8]) -> String {
    use base64::Engine as _;
    use hmac::Mac as _;
    keys.iter()
        .filter_map(|key| {
            let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).ok()?;
            mac.update(id.as_bytes());
            mac.update(b".");
            mac.update(timestamp.to_string().as_bytes());
            mac.update(b".");
            mac.update(body);
            let digest = mac.finalize().into_bytes();
            Some(format!(
                "v1,{}",
                base64::engine::general_purpose::STANDARD.encode(digest)
            ))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A failed request's message: the resolver's refusal when that is why, else reqwest's.
#[cfg(feature = "webhooks")]
fn why(e: reqwest::Error) -> String {
    super::egress::refusal(&e).unwrap_or_else(|| format!("not reachable ({})", e.without_url()))
}

#[cfg(feature = "webhooks")]
impl CallbackClient for HttpCallbacks {
    fn check<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.admitted(url)?;
            let options = self
                .client
                .request(reqwest::Method::OPTIONS, url)
                .send()
                .await;
            match options {
                Ok(r)
                    if r.status() == reqwest::StatusCode::OK
                        && r.headers()
                            .get(http::header::ALLOW)
                            .and_then(|v| v.to_str().ok())
                            .is_some_and(|a| {
                                a.split(',').any(|m| m.trim().eq_ignore_ascii_case("POST"))
                            }) =>
                {
                    return Ok(());
                }
                Err(e) if super::egress::refusal(&e).is_some() => return Err(why(e)),
                _ => {}
            }
            let probe = self
                .client
                .post(url)
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(r#"{"rpc.callback":"check real webhook url"}"#)
                .send()
                .await
                .map_err(why)?;
            if probe.status().as_u16() < 400 {
                Ok(())
            } else {
                Err(format!("answered HTTP {}", probe.status().as_u16()))
            }
        })
    }

    fn post<'a>(
        &'a self,
        url: &'a str,
        headers: &'a [(HeaderName, HeaderValue)],
        body: Vec<u8>,
    ) -> BoxFuture<'a, Result<u16, String>> {
        Box::pin(async move {
            self.admitted(url)?;
            let body = bytes::Bytes::from(body);
            // One delivery, one id, whatever the tries.
            let delivery = format!("msg_{}", crate::ids::random_id());
            let mut wait = self.backoff;
            let mut tries = 0;
            loop {
                tries += 1;
                let outcome = self.send(url, headers, body.clone(), &delivery).await;
                let retry = match &outcome {
                    Ok(r) => r.status().is_server_error(),
                    // A refused address stays refused: not tried again.
                    Err(e) => {
                        (e.is_connect() || e.is_timeout()) && super::egress::refusal(e).is_none()
                    }
                };
                if !retry || tries >= TRIES {
                    return outcome.map(|r| r.status().as_u16()).map_err(why);
                }
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
        })
    }

    fn post_once<'a>(
        &'a self,
        url: &'a str,
        headers: &'a [(HeaderName, HeaderValue)],
        body: Vec<u8>,
        id: &'a str,
    ) -> BoxFuture<'a, Result<u16, String>> {
        Box::pin(async move {
            self.admitted(url)?;
            self.send(url, headers, body.into(), id)
                .await
                .map(|r| r.status().as_u16())
                .map_err(why)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[cfg(feature = "webhooks")]
    #[test]
    fn deliveries_are_signed_as_standard_webhooks_says() {
        // The specification's own example.
        let hooks = HttpCallbacks::new()
            .signing_secrets(["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
            .unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            sign(
                &hooks.keys,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                body
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        // Two secrets (a rotation): two signatures; the prefix is optional.
        let both = HttpCallbacks::new()
            .signing_secrets(["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "c2Vjb25k"])
            .unwrap();
        let two = sign(
            &both.keys,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            body,
        );
        assert!(two.starts_with("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,"));
        // Kept when hosts are allowed after.
        assert_eq!(both.allow_hosts(["127.0.0.1"]).keys.len(), 2);
        assert_eq!(
            HttpCallbacks::new()
                .signing_secrets(["whsec_not base64!"])
                .unwrap_err(),
            "webhook signing secret 1 is not `whsec_` and a base64 key"
        );
        let headers = hooks.signature_headers("msg_1", body);
        let names: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["webhook-id", "webhook-timestamp", "webhook-signature"]
        );
        assert!(
            HttpCallbacks::new()
                .signature_headers("msg_1", body)
                .is_empty()
        );
    }

    #[test]
    fn rpc_options_are_checked() {
        let o = options(Some(&json!({"$rpc": {"callback": "https://a.example/cb", "timeout": 30, "rayId": "r1", "ignoreCache": true}}))).unwrap();
        assert_eq!(o.callback.as_deref(), Some("https://a.example/cb"));
        assert_eq!(o.timeout, Some(Duration::from_secs(30)));
        for (rpc, m) in [
            (json!(1), "Invalid $rpc: must be an object"),
            (
                json!({"timeout": 5}),
                "Invalid $rpc: `timeout` must be an integer of seconds from 10 to 120",
            ),
            (
                json!({"timeout": 121}),
                "Invalid $rpc: `timeout` must be an integer of seconds from 10 to 120",
            ),
            (
                json!({"callback": 1}),
                "Invalid $rpc: `callback` must be a URL string",
            ),
            (
                json!({"nope": 1}),
                "Invalid $rpc: unknown member `nope` (expected callback, timeout, rayId, ignoreCache)",
            ),
        ] {
            assert_eq!(
                options(Some(&json!({"$rpc": rpc}))).unwrap_err().message(),
                m
            );
        }
    }

    #[test]
    fn callbacks_must_be_http_urls() {
        assert!(well_formed("https://hooks.example.com/rpc"));
        assert!(well_formed("http://127.0.0.1:8080/x"));
        for u in [
            "ftp://x.example",
            "hooks.example.com",
            "https://",
            "mailto:a@b.c",
        ] {
            assert!(!well_formed(u), "{u}");
        }
    }

    #[cfg(feature = "webhooks")]
    #[tokio::test]
    async fn the_default_client_wants_a_public_host_name_and_address() {
        let c = HttpCallbacks::new();
        for (u, why) in [
            (
                "http://127.0.0.1/x",
                "`127.0.0.1` is not a public host name",
            ),
            (
                "http://localhost:8080/x",
                "`localhost` is not a public host name",
            ),
            ("http://[::1]/", "`::1` is not a public host name"),
            ("http://intranet/", "`intranet` is not a public host name"),
            (
                "http://169.254.169.254/latest",
                "`169.254.169.254` is not a public host name",
            ),
        ] {
            assert_eq!(c.check(u).await.unwrap_err(), why, "{u}");
        }
        let allowed = c.allow_hosts(["127.0.0.1"]);
        assert!(allowed.admitted("http://127.0.0.1:9/x").is_ok());
    }
}
