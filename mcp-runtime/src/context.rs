//! The request context and the values methods take from it, like axum extractors.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::env::Environment;
use crate::error::RpcError;

/// Shared values the server was built with, looked up by type.
#[derive(Default, Clone)]
pub struct StateMap {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl StateMap {
    /// Adds (or replaces) the value of type `T`.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// Adds (or replaces) a shared value of type `T`.
    pub fn insert_arc<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.values.insert(TypeId::of::<T>(), value);
    }

    /// Whether a value of the type with this id is there.
    pub(crate) fn contains(&self, id: TypeId) -> bool {
        self.values.contains_key(&id)
    }

    /// The value of type `T`.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.values
            .get(&TypeId::of::<T>())
            .cloned()
            .and_then(|v| v.downcast::<T>().ok())
    }
}

impl fmt::Debug for StateMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateMap")
            .field("len", &self.values.len())
            .finish()
    }
}

/// An internal request id: unique per call in this process, for logs and events.
///
/// It is never sent to clients (the JSON-RPC `id` belongs to the client).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId(u64);

impl RequestId {
    pub(crate) fn next() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        RequestId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl RequestId {
    /// `rpc-` and at least eight hex digits (`rpc-{:08x}`), written without the formatting
    /// machinery: every call's span records it.
    pub(crate) fn text(self) -> RequestIdText {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut buf = *b"rpc-0000000000000000";
        let digits = (64 - self.0.leading_zeros()).div_ceil(4).max(8) as usize;
        for (i, b) in buf[4..4 + digits].iter_mut().rev().enumerate() {
            *b = HEX[((self.0 >> (4 * i)) & 0xf) as usize];
        }
        RequestIdText {
            buf,
            len: 4 + digits,
        }
    }
}

/// A request id's text, on the stack.
pub(crate) struct RequestIdText {
    buf: [u8; 20],
    len: usize,
}

impl RequestIdText {
    pub(crate) fn as_str(&self) -> &str {
        // ASCII by construction; the check is on 12 to 20 bytes.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

impl fmt::Display for RequestId {
    /// `rpc-` and at least eight hex digits (`rpc-{:08x}`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text().as_str())
    }
}

/// Which face of the server a call came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Face {
    /// JSON-RPC over HTTP (`/rpc/{group}/v{N}`).
    JsonRpc,
    /// An MCP `tools/call`.
    Mcp,
}

impl Face {
    /// Its name, as `Debug` writes it (`JsonRpc`, `Mcp`): the `rpc.face` field of a call's
    /// span.
    pub fn name(self) -> &'static str {
        match self {
            Face::JsonRpc => "JsonRpc",
            Face::Mcp => "Mcp",
        }
    }
}

/// Where a call's notifications go: an SSE response stream or the stdio writer.
pub trait Notifier: Send + Sync {
    /// Sends one JSON-RPC notification (serialized).
    fn notify(&self, message: Vec<u8>);
    /// Closes the client's current stream while the call goes on (SSE polling, SEP-1699);
    /// returns whether there was such a stream.
    fn close_stream(&self) -> bool {
        false
    }
}

/// One request a call sends its client (elicitation, sampling, roots), built by the
/// `RequestContext` methods of [`crate::mcp::input`].
#[derive(Debug, Clone)]
pub struct InputRequest {
    /// The key naming it within the call: the `inputRequests` key of a 2026-07-28
    /// multi-round-trip result; stable across the call's rounds.
    pub key: String,
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: &'static str,
    /// The request's params.
    pub params: Value,
    /// The client capability it needs (`elicitation`, `sampling`, `roots`) and, if any, the
    /// member of that capability (`url` for URL-mode elicitation, `form` for a form).
    pub capability: (&'static str, Option<&'static str>),
}

/// How a call reaches its client while it runs: the call's SSE stream on the handshake era, a
/// multi-round-trip result on 2026-07-28 ([`crate::mcp::input`] has both).
pub trait ClientInput: Send + Sync {
    /// The capabilities the client declared (`{}` when none).
    fn capabilities(&self) -> &Value;
    /// Sends one request and waits for the client's result (or an error: the client lacks the
    /// capability (-32021), refused, did not answer in time, or must be asked first).
    fn request(&self, req: InputRequest) -> BoxFuture<'_, Result<Value, RpcError>>;
    /// What the face answers instead of a call that failed after asking: the members of an
    /// `input_required` result (`Ok`), or a protocol error (`Err`: a capability the client
    /// lacks, malformed input responses). `None`: the call's own error stands.
    fn interrupted(&self) -> Option<Result<Value, RpcError>> {
        None
    }
}

/// A call's cancellation: set when its client cancels it (`notifications/cancelled`, or a
/// 2026-07-28 client closing the response). The pipeline then drops the call's future (its
/// lock is released, no `post_response` fires, no answer is sent); work the method handed to
/// a thread or a task can watch [`RequestContext::is_cancelled`] to stop early.
///
/// ```
/// use mcp_runtime::{CancelSignal, RequestContext};
///
/// let signal = CancelSignal::new();
/// let ctx = RequestContext::builder().cancel(signal.clone()).build();
/// assert!(!ctx.is_cancelled());
/// signal.cancel();
/// assert!(ctx.is_cancelled());
/// ```
#[derive(Clone, Default)]
pub struct CancelSignal(Arc<CancelState>);

/// A flag and its waiters. Not `tokio_util`'s `CancellationToken`: that one keeps a tree of
/// child tokens behind a mutex, and every clone and drop of a handle takes the lock; a
/// session's call clones its signal several times and never needs a child.
#[derive(Default)]
struct CancelState {
    set: std::sync::atomic::AtomicBool,
    waiters: tokio::sync::Notify,
}

impl fmt::Debug for CancelSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CancelSignal")
            .field(&self.is_cancelled())
            .finish()
    }
}

impl CancelSignal {
    /// A signal not yet set.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets it: the call stops at its next suspension point.
    pub fn cancel(&self) {
        if !self.0.set.swap(true, Ordering::AcqRel) {
            self.0.waiters.notify_waiters();
        }
    }
    /// Whether it is set.
    pub fn is_cancelled(&self) -> bool {
        self.0.set.load(Ordering::Acquire)
    }
    /// Completes when it is set.
    pub async fn cancelled(&self) {
        loop {
            // Made before the flag is read: `notify_waiters` wakes every `Notified` that
            // exists when it runs, polled or not, so a `cancel` in between is not missed.
            let wake = self.0.waiters.notified();
            if self.is_cancelled() {
                return;
            }
            wake.await;
        }
    }
}

/// Who a per-caller share is counted against: computed once at the edge, from the best it
/// knows, in this order: the identity's subject (a protected group whose validator names one),
/// a digest of the bearer token (identified without a subject), the client's address (from
/// `Forwarded` / `X-Forwarded-For` only when the peer is one of
/// [`crate::Limits::trusted_proxies`]; an IPv6 client by its /64, which one host holds whole),
/// else the session, else the one peer of a stdio connection.
///
/// The address comes before the session: an anonymous client opens as many sessions as it
/// likes, so a share per session would be no share at all.
///
/// ```
/// use mcp_runtime::Caller;
///
/// let c = Caller::address("2001:db8:1:2:3:4:5:6".parse().unwrap());
/// assert_eq!(c.to_string(), "ip:2001:db8:1:2::/64");
/// assert_eq!(Caller::subject("ann").to_string(), "sub:ann");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caller(Who);

/// An address is kept as one (`Copy`, no allocation: most requests are of anonymous callers
/// known by their address, and most never need their caller written out).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Who {
    Key(Arc<str>),
    /// An IPv4 address, or an IPv6 /64 (its host bits zero).
    Address(std::net::IpAddr),
}

impl Caller {
    /// The caller an identity's subject names.
    pub fn subject(subject: &str) -> Self {
        Self(Who::Key(Arc::from(format!("sub:{subject}"))))
    }

    /// The caller a bearer token stands for (its digest: the token itself is never kept).
    pub fn token(token: &str) -> Self {
        use sha2::Digest as _;
        let d = sha2::Sha256::digest(token.as_bytes());
        let mut s = String::from("tok:");
        crate::ids::push_hex(&mut s, &d[..12]);
        Self(Who::Key(Arc::from(s)))
    }

    /// The caller at a client address (an IPv6 one by its /64).
    pub fn address(ip: std::net::IpAddr) -> Self {
        use std::net::{IpAddr, Ipv6Addr};
        let ip = match ip {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & (u128::MAX << 64))),
            },
            v4 => v4,
        };
        Self(Who::Address(ip))
    }

    /// The caller of a session (when nothing better is known).
    pub fn session(id: &str) -> Self {
        Self(Who::Key(Arc::from(format!("ses:{id}"))))
    }

    /// The one peer of a stdio connection.
    pub fn local() -> Self {
        Self(Who::Key(Arc::from("local")))
    }

    /// Whether it is the one peer of a stdio connection ([`Self::local`]).
    pub(crate) fn is_local(&self) -> bool {
        matches!(&self.0, Who::Key(k) if &**k == "local")
    }

    /// The caller a key written by [`Caller`]'s `Display` names (`ip:…` back to an address).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn from_key(key: &str) -> Self {
        let address = key
            .strip_prefix("ip:")
            .map(|a| a.strip_suffix("/64").unwrap_or(a))
            .and_then(|a| a.parse::<std::net::IpAddr>().ok());
        match address {
            Some(ip) => Self(Who::Address(ip)),
            None => Self(Who::Key(Arc::from(key))),
        }
    }
}

/// Its key, as logs show it: `sub:…`, `tok:…`, `ip:…`, `ses:…` or `local`.
impl fmt::Display for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Who::Key(k) => f.write_str(k),
            Who::Address(ip @ std::net::IpAddr::V4(_)) => write!(f, "ip:{ip}"),
            Who::Address(ip) => write!(f, "ip:{ip}/64"),
        }
    }
}

/// A W3C trace context (`traceparent`, and `tracestate` when sent), checked: a
/// `traceparent` of the version-00 form (`00-{32 hex}-{16 hex}-{2 hex}`, neither id all zeros)
/// and a `tracestate` of at most 512 characters. Anything else is no trace context at all, as
/// the W3C recommendation says a receiver treats it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent(Arc<TraceHeaders>);

/// One pointer in [`CallExtras`], which every call's future holds.
#[derive(Debug, PartialEq, Eq)]
struct TraceHeaders {
    parent: Box<str>,
    state: Option<Box<str>>,
}

impl TraceParent {
    /// The longest `tracestate` kept (the recommendation's bound for what a vendor must
    /// propagate).
    const STATE_CHARS: usize = 512;

    /// The context of a `traceparent` (and `tracestate`), if well formed.
    ///
    /// ```
    /// use mcp_runtime::TraceParent;
    /// let t = TraceParent::new("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Some("a=1"))
    ///     .expect("well formed");
    /// assert_eq!(t.trace_id(), "0af7651916cd43dd8448eb211c80319c");
    /// assert_eq!(t.tracestate(), Some("a=1"));
    /// // An unknown version, an all-zero id, upper-case hex: no context.
    /// assert!(TraceParent::new("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", None).is_none());
    /// assert!(TraceParent::new("00-00000000000000000000000000000000-b7ad6b7169203331-01", None).is_none());
    /// assert!(TraceParent::new("00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", None).is_none());
    /// ```
    pub fn new(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let t = traceparent.trim().as_bytes();
        let hex = |b: &[u8]| b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
        let ok = t.len() == 55
            && t[2] == b'-'
            && t[35] == b'-'
            && t[52] == b'-'
            && &t[..2] == b"00"
            && hex(&t[3..35])
            && hex(&t[36..52])
            && hex(&t[53..55])
            && t[3..35].iter().any(|c| *c != b'0')
            && t[36..52].iter().any(|c| *c != b'0');
        if !ok {
            return None;
        }
        let state = tracestate
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= Self::STATE_CHARS && s.is_ascii())
            .map(Box::from);
        Some(Self(Arc::new(TraceHeaders {
            parent: Box::from(traceparent.trim()),
            state,
        })))
    }

    /// The `traceparent`.
    pub fn traceparent(&self) -> &str {
        &self.0.parent
    }

    /// The `tracestate`, if one was sent (and kept).
    pub fn tracestate(&self) -> Option<&str> {
        self.0.state.as_deref()
    }

    /// The trace id (32 hex digits).
    pub fn trace_id(&self) -> &str {
        &self.0.parent[3..35]
    }
}

/// Who is calling: what the server's token validator found in the request's token
/// ([`crate::transport::auth::AuthDecision::Identified`]). Never the token itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Identity {
    /// The subject (a user or client id: the JWT `sub`).
    pub subject: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// Other claims, as the validator chose to keep them.
    pub claims: Value,
}

impl Identity {
    /// An identity with a subject and scopes, and no other claims.
    pub fn new(
        subject: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            subject: subject.into(),
            scopes: scopes.into_iter().map(Into::into).collect(),
            claims: Value::Null,
        }
    }

    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// What a transport gives a call besides its params.
#[derive(Clone, Default)]
pub struct CallExtras {
    /// The client's `_meta.progressToken`.
    pub progress_token: Option<serde_json::Value>,
    /// Where notifications go.
    pub notifier: Option<Arc<dyn Notifier>>,
    /// Where `post_response` work waits for the response to be written (else it runs at once).
    pub after_response: Option<crate::background::AfterResponse>,
    /// The negotiated language (`Accept-Language`), if the transport has one.
    pub language: Option<Arc<str>>,
    /// The least severe level the client asked to be sent ([`RequestContext::log`]); `None`:
    /// it did not ask, and nothing is sent.
    pub log_level: Option<crate::mcp::LogLevel>,
    /// How the call asks its client for input (elicitation, sampling, roots), if it can.
    pub input: Option<Arc<dyn ClientInput>>,
    /// How the client cancels the call, if it can.
    pub cancel: Option<CancelSignal>,
    /// The caller's ray id (`$rpc.rayId` of an asynchronous JSON-RPC call).
    pub ray_id: Option<Arc<str>>,
    /// Who is calling, when the group is protected and the validator says.
    pub identity: Option<Arc<Identity>>,
    /// The handshake-era session of the call, if it has one (its tasks are the session's).
    pub session: Option<Arc<str>>,
    /// Who the call's shares are counted against ([`Caller`]), when the transport knows.
    pub caller: Option<Caller>,
    /// The W3C trace context the request came with (its `traceparent` and `tracestate`
    /// headers, or the MCP `_meta` ones): the parent of the call's spans.
    pub trace: Option<TraceParent>,
    /// Which run of the call this is, when it is not the first: a task's call run again on
    /// another instance after the one running it stopped ([`RequestContext::attempt`]).
    pub attempt: u32,
}

impl fmt::Debug for CallExtras {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallExtras")
            .field("progress_token", &self.progress_token)
            .field("notifier", &self.notifier.is_some())
            .field("log_level", &self.log_level)
            .field("input", &self.input.is_some())
            .field("cancel", &self.cancel)
            .field("ray_id", &self.ray_id)
            .field("identity", &self.identity)
            .field("caller", &self.caller)
            .field("attempt", &self.attempt)
            .finish()
    }
}

struct Inner {
    id: RequestId,
    method: &'static str,
    group: &'static str,
    version: u32,
    face: Face,
    env: Environment,
    state: Arc<StateMap>,
    extras: CallExtras,
    started: std::time::Instant,
    /// How many input requests the call made (their automatic keys).
    asked: AtomicU32,
}

/// Builds a [`RequestContext`] outside a server, to call a function directly in a unit test
/// (the server's own calls get theirs from the pipeline).
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// fn whoami(ctx: &RequestContext) -> String {
///     format!("{} in {}", ctx.method(), ctx.language().unwrap_or("en"))
/// }
///
/// let ctx = RequestContext::builder().method("Shop.whoami").language("uk").build();
/// assert_eq!(whoami(&ctx), "Shop.whoami in uk");
/// ```
#[derive(Debug)]
pub struct ContextBuilder {
    method: &'static str,
    group: &'static str,
    version: u32,
    face: Face,
    env: Environment,
    state: StateMap,
    extras: CallExtras,
}

impl ContextBuilder {
    /// The method name (default `test`).
    pub fn method(mut self, method: &'static str) -> Self {
        self.method = method;
        self
    }
    /// The group and version (default `test`, 1).
    pub fn group(mut self, group: &'static str, version: u32) -> Self {
        self.group = group;
        self.version = version;
        self
    }
    /// The face (default JSON-RPC).
    pub fn face(mut self, face: Face) -> Self {
        self.face = face;
        self
    }
    /// The environment (default `test`).
    pub fn env(mut self, env: Environment) -> Self {
        self.env = env;
        self
    }
    /// Adds shared state of type `T` (what `State<T>` and `ctx.state::<T>()` read).
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }
    /// The negotiated language.
    pub fn language(mut self, lang: &str) -> Self {
        self.extras.language = Some(Arc::from(lang));
        self
    }
    /// Where notifications (progress, logs) go, and the least severe log level sent.
    pub fn notifier(
        mut self,
        notifier: Arc<dyn Notifier>,
        log_level: Option<crate::mcp::LogLevel>,
    ) -> Self {
        self.extras.notifier = Some(notifier);
        self.extras.log_level = log_level;
        self
    }
    /// How the call asks its client for input ([`crate::mcp::input`]).
    pub fn client_input(mut self, input: Arc<dyn ClientInput>) -> Self {
        self.extras.input = Some(input);
        self
    }
    /// Who is calling.
    pub fn identity(mut self, identity: Identity) -> Self {
        self.extras.identity = Some(Arc::new(identity));
        self
    }
    /// The call's cancellation, to cancel it from the test.
    pub fn cancel(mut self, signal: CancelSignal) -> Self {
        self.extras.cancel = Some(signal);
        self
    }
    /// Which run of the call this is (default 1; see [`RequestContext::attempt`]).
    pub fn attempt(mut self, attempt: u32) -> Self {
        self.extras.attempt = attempt;
        self
    }
    /// The context.
    pub fn build(self) -> RequestContext {
        RequestContext::new(
            RequestId::next(),
            self.method,
            self.group,
            self.version,
            self.face,
            self.env,
            Arc::new(self.state),
            self.extras,
        )
    }
}

/// The context of one call: its internal id, method, group, version and the server's state.
///
/// Take it as a parameter (`ctx: RequestContext` or `ctx: &RequestContext`); like the other
/// context types it is filled by the framework and never appears in any schema.
#[derive(Clone)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

impl RequestContext {
    /// A builder of a context for unit tests ([`ContextBuilder`]).
    pub fn builder() -> ContextBuilder {
        ContextBuilder {
            method: "test",
            group: "test",
            version: 1,
            face: Face::JsonRpc,
            env: Environment::TEST,
            state: StateMap::default(),
            extras: CallExtras::default(),
        }
    }

    #[allow(clippy::too_many_arguments)] // one per field of the context, all given by the core
    pub(crate) fn new(
        id: RequestId,
        method: &'static str,
        group: &'static str,
        version: u32,
        face: Face,
        env: Environment,
        state: Arc<StateMap>,
        extras: CallExtras,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                id,
                method,
                group,
                version,
                face,
                env,
                state,
                extras,
                started: std::time::Instant::now(),
                asked: AtomicU32::new(0),
            }),
        }
    }

    /// Reports progress of long work: over MCP a `notifications/progress` to the client (when
    /// it sent a progress token); over JSON-RPC nothing is sent. Returns whether it was sent.
    pub fn report_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> bool {
        let (Some(token), Some(n)) = (
            &self.inner.extras.progress_token,
            &self.inner.extras.notifier,
        ) else {
            tracing::debug!(request_id = %self.inner.id, progress, "progress not sent: no progress token");
            return false;
        };
        n.notify(crate::wire::progress(token, progress, total, message));
        true
    }

    /// Logs to the client: over MCP a `notifications/message` on the call's stream, when the
    /// client asked for `level` or a less severe one (`logging/setLevel` on a session, the
    /// request's `_meta` level on 2026-07-28); otherwise, and over JSON-RPC, nothing is sent.
    /// Returns whether it was sent. Never log secrets or personal data: the client sees it.
    ///
    /// ```
    /// # use mcp_runtime::prelude::*;
    /// fn work(ctx: &RequestContext) {
    ///     ctx.log(LogLevel::Info, serde_json::json!({"step": "indexing", "done": 10}));
    /// }
    /// ```
    pub fn log(&self, level: crate::mcp::LogLevel, data: impl serde::Serialize) -> bool {
        self.log_to(None, level, data)
    }

    /// [`RequestContext::log`] with a logger name (`"database"`).
    pub fn log_to(
        &self,
        logger: Option<&str>,
        level: crate::mcp::LogLevel,
        data: impl serde::Serialize,
    ) -> bool {
        let extras = &self.inner.extras;
        let (Some(min), Some(n)) = (extras.log_level, &extras.notifier) else {
            return false;
        };
        if level < min {
            return false;
        }
        let params = LogParams {
            level: level.as_str(),
            logger,
            data,
        };
        let mut message = Vec::with_capacity(128);
        if crate::wire::notification(&mut message, "notifications/message", Some(&params)).is_err()
        {
            tracing::warn!(request_id = %self.inner.id, "log not sent: the data does not serialize");
            return false;
        };
        n.notify(message);
        true
    }

    /// Closes the client's SSE stream while the call continues; the client reconnects with
    /// `Last-Event-ID` and gets the result there (SSE polling, SEP-1699). Returns whether a
    /// resumable stream was closed.
    pub fn close_sse_stream(&self) -> bool {
        self.inner
            .extras
            .notifier
            .as_ref()
            .is_some_and(|n| n.close_stream())
    }

    /// How the call asks its client for input, if it can.
    pub(crate) fn input_channel(&self) -> Option<&Arc<dyn ClientInput>> {
        self.inner.extras.input.as_ref()
    }

    /// The next automatic input key (`elicit-1`, `sample-2`, ...): the same on every round of
    /// a call that asks in the same order.
    pub(crate) fn next_input_key(&self, kind: &str) -> String {
        let n = self.inner.asked.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{kind}-{n}")
    }

    /// Whether the client cancelled the call. The pipeline stops an `async` method at its next
    /// `.await` by itself; check this in work that does not suspend (a loop in a synchronous
    /// method, a thread the method started).
    pub fn is_cancelled(&self) -> bool {
        self.inner
            .extras
            .cancel
            .as_ref()
            .is_some_and(CancelSignal::is_cancelled)
    }

    /// Completes when the client cancels the call; never, when it cannot (for a task the
    /// method spawned, to `select!` on).
    pub async fn cancelled(&self) {
        match &self.inner.extras.cancel {
            Some(c) => c.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// Who is calling: the identity the server's token validator found, on a protected group
    /// (`None` elsewhere, and when the validator gives none).
    pub fn identity(&self) -> Option<&Identity> {
        self.inner.extras.identity.as_deref()
    }

    /// The caller's ray id (`params.$rpc.rayId` of an asynchronous JSON-RPC call), to carry
    /// into logs and events.
    pub fn ray_id(&self) -> Option<&str> {
        self.inner.extras.ray_id.as_deref()
    }

    /// Which run of the call this is: 1, or more for a task's call run again because the
    /// instance running it stopped (with Redis, accepted tasks survive their instance: another
    /// one runs the call again from its start). A method with effects that must not happen
    /// twice can tell a re-run by it.
    pub fn attempt(&self) -> u32 {
        self.inner.extras.attempt.max(1)
    }

    /// How long ago the call started.
    pub fn elapsed(&self) -> std::time::Duration {
        self.inner.started.elapsed()
    }

    /// The language negotiated for this call (`Accept-Language`), if any.
    pub fn language(&self) -> Option<&str> {
        self.inner.extras.language.as_deref()
    }

    /// The internal request id.
    pub fn request_id(&self) -> RequestId {
        self.inner.id
    }
    /// The method name.
    pub fn method(&self) -> &'static str {
        self.inner.method
    }
    /// The group of the endpoint the call came through.
    pub fn group(&self) -> &'static str {
        self.inner.group
    }
    /// The API version of the endpoint.
    pub fn version(&self) -> u32 {
        self.inner.version
    }
    /// JSON-RPC or MCP.
    pub fn face(&self) -> Face {
        self.inner.face
    }
    /// The environment.
    pub fn env(&self) -> &Environment {
        &self.inner.env
    }
    /// A shared value the server was built with.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.inner.state.get::<T>()
    }
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.inner.id)
            .field("method", &self.inner.method)
            .field("group", &self.inner.group)
            .field("version", &self.inner.version)
            .field("face", &self.inner.face)
            .finish()
    }
}

/// A value a method parameter can take from the request context instead of the params.
///
/// Implemented by [`RequestContext`] and [`State`]; implement it for your own types and mark
/// the parameter `#[param(context)]`. A parameter whose type is named `State` or
/// `RequestContext` needs no mark: it is a context parameter when its type implements this
/// trait (decided by the compiler), so a JSON parameter type of yours with one of these names
/// stays a JSON parameter.
pub trait FromContext: Sized {
    /// Extracts the value; an error fails the call.
    fn from_context(ctx: &RequestContext) -> Result<Self, RpcError>;

    /// The shared state this value is taken from, if any: its type's id and name. `State<T>`
    /// answers `T`, so [`crate::ServerBuilder::build`] refuses a method taking a state no
    /// `.state(...)` provided. Default: none.
    fn needed_state() -> Option<(std::any::TypeId, &'static str)> {
        None
    }
}

impl FromContext for RequestContext {
    fn from_context(ctx: &RequestContext) -> Result<Self, RpcError> {
        Ok(ctx.clone())
    }
}

/// Shared state of type `T`, added with [`crate::ServerBuilder::state`].
///
/// ```
/// use mcp_runtime::State;
/// struct Db;
/// fn uses(db: State<Db>) { let _db: &Db = &db; }
/// ```
pub struct State<T>(pub Arc<T>);

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

/// What a `State<T>` parameter's `T` must be: shared by every call at once, so `Send + Sync +
/// 'static`. The macros check it first, so that a `RefCell` in a state is reported as such.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a method's shared state: `State<T>` is shared by every call at once, so `T` must be `Send + Sync + 'static`",
    label = "not `Send + Sync + 'static`",
    note = "keep what changes behind a `std::sync::Mutex` or `RwLock` (not a `RefCell` or `Cell`), and share with `Arc`, not `Rc`"
)]
pub trait SharedState {}
impl<T: Send + Sync + 'static> SharedState for T {}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(ctx: &RequestContext) -> Result<Self, RpcError> {
        ctx.state::<T>()
            .map(State)
            .ok_or_else(|| missing_state::<T>())
    }

    fn needed_state() -> Option<(std::any::TypeId, &'static str)> {
        Some((std::any::TypeId::of::<T>(), std::any::type_name::<T>()))
    }
}

#[track_caller]
pub(crate) fn missing_state<T>() -> RpcError {
    RpcError::internal(format!(
        "no state of type `{}`: add it with ServerBuilder::state",
        std::any::type_name::<T>()
    ))
}

/// A notification as it goes on the wire, serialized straight from its parts: no `Value` tree
/// (a map, a hash and an allocation per member), since a call may log many times.
/// `notifications/message` params.
#[derive(serde::Serialize)]
struct LogParams<'a, D> {
    level: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    logger: Option<&'a str>,
    data: D,
}

#[cfg(test)]
mod tests {
    use super::RequestId;

    /// A signal set before, while, or after `cancelled()` waits wakes it; each clone sees it.
    #[tokio::test]
    async fn a_cancel_signal_wakes_every_waiter_whenever_it_is_set() {
        use super::CancelSignal;
        use std::time::Duration;
        let early = CancelSignal::new();
        early.cancel();
        early.cancelled().await;
        let signal = CancelSignal::new();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let s = signal.clone();
                tokio::spawn(async move { s.cancelled().await })
            })
            .collect();
        tokio::task::yield_now().await;
        assert!(!signal.is_cancelled());
        assert_eq!(format!("{signal:?}"), "CancelSignal(false)");
        signal.cancel();
        signal.cancel(); // twice is once
        for w in waiters {
            tokio::time::timeout(Duration::from_secs(5), w)
                .await
                .expect("a waiter was not woken")
                .unwrap();
        }
        assert!(signal.clone().is_cancelled());
    }

    #[test]
    fn request_ids_read_as_rpc_and_at_least_eight_hex_digits() {
        for n in [0, 1, 0xabc, 0xdead_beef, 0x1_0000_0000, u64::MAX] {
            assert_eq!(RequestId(n).to_string(), format!("rpc-{n:08x}"), "{n}");
        }
    }
}
