//! Every bound on what a client can make the server hold or do, in one object.
//!
//! The [`Limits`] a server is built with are read by the reader, the batch executor, the
//! HTTP policy, the MCP face and stdio alike: a bound is set once and holds on every face.
//! `docs/reliability.md` lists each with the test that proves it.

use std::time::Duration;

/// The bounds of a server, each with a documented default.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::{Limits, Server};
///
/// let mut limits = Limits::default();
/// limits.batch_items = 50;
/// limits.call_timeout = Some(Duration::from_secs(5));
/// let server = Server::builder().limits(limits).build();
/// # let _ = server;
/// ```
///
/// Start from [`Limits::default()`] and set what differs: a new bound in a later version is
/// not a breaking change (`#[non_exhaustive]`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The largest request body (or stdio line) accepted, in bytes. Default 4 MiB; larger:
    /// HTTP 413, or a -32600 error on stdio.
    pub body_bytes: usize,
    /// The most items a batch may have (JSON-RPC, and MCP 2025-03-26). Default 100; a larger
    /// batch is refused whole with one -32600 error.
    pub batch_items: usize,
    /// How many items of one batch run at the same time. Default 8.
    pub batch_concurrency: usize,
    /// How deep JSON values (params, ids) may nest. Default 64, at most 128 (serde_json's own
    /// bound); deeper params are a -32602 error.
    pub depth: usize,
    /// The most bytes of request headers (request line included). Default 64 KiB, at least
    /// 8 KiB; more: the connection is answered 431 and closed.
    pub header_bytes: usize,
    /// How many `Accept-Language` ranges are read; the rest are ignored. Default 32.
    pub language_ranges: usize,
    /// The largest MCP progress token (a string or an integer, as the specification says), in
    /// bytes of JSON. Default 256; larger or another type: -32602.
    pub progress_token_bytes: usize,
    /// How many resources one session (`resources/subscribe`) or one `subscriptions/listen`
    /// stream may watch. Default 100; past it: -32602.
    pub subscriptions: usize,
    /// The most bytes of URIs one session or one `subscriptions/listen` stream may watch in
    /// all (each URI is also at most [`Limits::uri_bytes`]). Default 64 KiB; past it: -32602.
    pub subscription_bytes: usize,
    /// How many resumable SSE streams (handshake era, `Last-Event-ID`) one session keeps.
    /// Default 16; when a session opens one more, its oldest is forgotten (it keeps running;
    /// it can no longer be resumed).
    pub resumable_streams_per_session: usize,
    /// How many resumable SSE streams an endpoint keeps, all sessions together (on Redis, all
    /// instances together). Default 1 000; past it the oldest of all is forgotten.
    pub resumable_streams: usize,
    /// The longest URI a request may name (reads, subscriptions, completion references), in
    /// bytes. Default 8 KiB; a longer one is -32602 at once, never matched nor echoed.
    pub uri_bytes: usize,
    /// How many schema violations an error reports; the rest are counted in a last entry
    /// ("... and N more"). Default 20.
    pub violations: usize,
    /// The most live MCP sessions (stateful groups). Default 10 000; an `initialize` past it
    /// is answered 503.
    pub sessions: usize,
    /// The most live sessions one caller holds on one endpoint: its share of
    /// [`Limits::sessions`]. Default 32; an `initialize` past it ends that caller's own least
    /// recently used session (never-used ones first). At the ceiling, the caller holding the
    /// most gives one up the same way, so a flood of `initialize` ends only the flooder's
    /// sessions.
    pub sessions_per_caller: usize,
    /// How long an idle MCP session lives. Default 1 hour.
    pub session_idle: Duration,
    /// The most SSE streams open at once (resumable or not). Default 1 000; a call that would
    /// open one more is answered with a -32603 "server busy" error.
    pub sse_streams: usize,
    /// The most SSE streams one caller ([`crate::Caller`]) holds open at once: its share of
    /// [`Limits::sse_streams`]. Default 16; past it that caller is answered 503 while the
    /// others are served.
    pub sse_streams_per_caller: usize,
    /// The most MCP calls running detached from their request (answered on an SSE stream, or
    /// in flight on a stdio connection) at once. Default 256; past it a call is answered with a
    /// -32603 "server busy" error (HTTP 503).
    pub detached_calls: usize,
    /// The most detached calls of one caller at once: its share of
    /// [`Limits::detached_calls`]. Default 32; past it, as for the ceiling, for that caller
    /// only.
    pub detached_calls_per_caller: usize,
    /// How long a client may take to send a request's headers. Default 10 s; then the
    /// connection is closed.
    pub header_timeout: Duration,
    /// How long a request may take from its headers to its response head, body upload
    /// included. Default 30 s; then 408. `None` disables it (SSE bodies are bounded by
    /// [`Limits::sse_timeout`] instead).
    pub request_timeout: Option<Duration>,
    /// How long one write to a client may stay blocked (the client stopped reading). Default
    /// 30 s; then the connection is closed. `None` disables it.
    pub write_timeout: Option<Duration>,
    /// A time limit for every method call. Default none; when set, a call past it fails with
    /// -32500 (per method: `ServerBuilder::call_timeout_for`).
    pub call_timeout: Option<Duration>,
    /// The longest an SSE stream (and the call it carries) may run. Default 5 minutes; then
    /// the call is cancelled and the stream ends.
    pub sse_timeout: Duration,
    /// The longest a change stream (a session's `GET` stream, a `subscriptions/listen`
    /// stream) stays open; then the server ends it and the client opens another. Default 30
    /// minutes.
    pub listen_timeout: Duration,
    /// How long a change stream stays silent before it writes an SSE comment (`:`). Default
    /// 15 s: a client that went away is noticed within it (its stream's place given back),
    /// and proxies do not drop the idle connection.
    pub sse_keep_alive: Duration,
    /// How long in-flight requests may take to finish after shutdown begins. Default 10 s.
    pub shutdown_grace: Duration,
    /// How long the server goes on serving, `/readyz` answering 503, between a shutdown
    /// signal and the drain, so that a load balancer stops sending it requests before it stops
    /// accepting them. Default 0 (a server with no balancer in front stops at once); behind
    /// one, at least its health-check interval times the failures it waits for.
    pub unready_delay: Duration,
    /// The most requests one call may put to its client in one round (elicitation, sampling,
    /// roots: the `inputRequests` of a 2026-07-28 `input_required` result, or requests
    /// waiting on a handshake-era stream). Default 16; past it the call fails with -32603.
    pub input_requests: usize,
    /// The most rounds of one 2026-07-28 multi-round-trip call. Default 16; a retry past it is
    /// refused with -32602.
    pub input_rounds: usize,
    /// The largest `requestState` accepted or issued, in bytes. Default 64 KiB; a larger one
    /// sent is refused with -32602 before it is read, a larger one to issue fails the call
    /// with -32603.
    pub input_state_bytes: usize,
    /// How long a `requestState` stays valid after it is issued. Default 10 minutes; an older
    /// one is refused with -32602.
    pub input_state_ttl: Duration,
    /// How long a handshake-era call waits for the client to answer one request on its
    /// stream. Default 2 minutes; then the request is cancelled (`notifications/cancelled`)
    /// and the method gets a -32500 error.
    pub input_wait: Duration,
    /// The most tasks kept at once, running or finished within their TTL. Default 1 000; a
    /// call that would start one more is answered with -32603 "server busy".
    pub tasks: usize,
    /// The most tasks running at once. Default 100; past it, as for [`Limits::tasks`].
    pub tasks_running: usize,
    /// The most tasks one caller keeps (running, or finished within their TTL), on one
    /// endpoint: its share of [`Limits::tasks`]. Default 100; when full, that caller's oldest
    /// finished task is forgotten first, and only when all of its tasks run is one more
    /// refused (-32603 "too many tasks for this caller").
    pub tasks_per_caller: usize,
    /// The most tasks of one caller running at once: its share of [`Limits::tasks_running`].
    /// Default 10; past it, refused as above. A task waiting for its client's answer runs
    /// (and holds its place) for at most [`Limits::input_wait`] per question, then fails.
    pub tasks_running_per_caller: usize,
    /// With Redis, the most tasks in the shared work queue (`mcp:work`), over every instance
    /// sharing it: each durable task has an entry from its acceptance to its end, whether an
    /// instance runs it or it waits for a worker (a front hands its tasks on, and keeps none of
    /// them). Default 10 000; past it a call is not queued: a 2026-07-28 call runs on as a
    /// plain one (as when [`Limits::tasks`] is reached), a task-augmented 2025-11-25 call or an
    /// asynchronous JSON-RPC call is refused with -32603 "too many tasks queued".
    pub tasks_queued: usize,
    /// The most entries of one caller in the work queue, over every instance: its share of
    /// [`Limits::tasks_queued`]. Default 100; past it, that caller's calls are not queued, as
    /// above (-32603 "too many tasks queued for this caller") until some of its tasks end.
    pub tasks_queued_per_caller: usize,
    /// How long a task is kept after its creation (its `ttlMs`; a running task is kept until
    /// it ends). Default 1 hour; then `tasks/get` answers -32602 for it.
    pub task_ttl: Duration,
    /// How often a client is told to poll a task (`pollIntervalMs`). Default 500 ms.
    pub task_poll_interval: Duration,
    /// The most asynchronous JSON-RPC calls (`$rpc.callback`) whose result is not yet
    /// delivered to one destination host, from every caller. Default 16; past it a call with
    /// a callback to that host is refused (-32602), so the server cannot be made to flood one
    /// host. Each such call is also a task of its caller ([`Limits::tasks_per_caller`]). With
    /// Redis, the deliveries to that host waiting for a later try count too.
    pub callbacks_per_host: usize,
    /// How long a webhook delivery is tried, from its first try, before it is given up and
    /// kept in the dead letters (with Redis, where deliveries survive their instance; without
    /// it, four tries within 7 s). Default 24 hours.
    pub callback_horizon: Duration,
    /// With Redis, the wait after a delivery's first failed try, doubled after each try up to
    /// an hour, within a quarter either way. Default 1 s.
    pub callback_first_retry: Duration,
    /// With Redis, the most webhook deliveries pending (stored, neither delivered nor given
    /// up yet), over every instance. Default 10 000; past it a delivery is tried as without
    /// Redis.
    pub callbacks_pending: usize,
    /// With Redis, the most pending deliveries of one caller, over every instance: its share
    /// of [`Limits::callbacks_pending`]. Default 100; past it that caller's next asynchronous
    /// call is refused (-32602) until some are delivered or given up.
    pub callbacks_pending_per_caller: usize,
    /// With Redis, the most deliveries kept in the dead letters; the oldest go first. Default
    /// 10 000.
    pub callbacks_dead: usize,
    /// The most callers whose rate-limit times one instance keeps in memory (about 100 bytes
    /// each). Default 100 000; past it, callers not yet known share one allowance per method
    /// until the times of callers back within their limit are swept (at most once a second),
    /// so a flood of new addresses neither grows the table nor escapes the limit.
    pub rate_limit_keys: usize,
    /// The proxies (and load balancers) whose `Forwarded` / `X-Forwarded-For` headers name
    /// the client's address ([`crate::Caller::address`]). Default none: the client is the
    /// socket's peer, and those headers are ignored (anyone can write them). With a proxy in
    /// front, list its addresses or networks (`"10.0.0.0/8".parse()?`); the client is then the
    /// nearest forwarded address that is not itself a trusted proxy.
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

impl Limits {
    /// [`Limits::violations`] by default: also the cap of an error built where no server's
    /// limits are at hand ([`crate::RpcError::violations`]).
    pub(crate) const DEFAULT_VIOLATIONS: usize = 20;
    /// [`Limits::sessions`] by default (also what a session store built alone keeps).
    pub(crate) const DEFAULT_SESSIONS: usize = 10_000;
    /// [`Limits::session_idle`] by default.
    pub(crate) const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(3600);
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            body_bytes: 4 * 1024 * 1024,
            batch_items: 100,
            batch_concurrency: 8,
            depth: 64,
            header_bytes: 64 * 1024,
            language_ranges: 32,
            progress_token_bytes: 256,
            subscriptions: 100,
            subscription_bytes: 64 * 1024,
            uri_bytes: 8 * 1024,
            resumable_streams_per_session: 16,
            resumable_streams: 1_000,
            violations: Self::DEFAULT_VIOLATIONS,
            sessions: Self::DEFAULT_SESSIONS,
            sessions_per_caller: 32,
            session_idle: Self::DEFAULT_SESSION_IDLE,
            sse_streams: 1000,
            sse_streams_per_caller: 16,
            detached_calls: 256,
            detached_calls_per_caller: 32,
            header_timeout: Duration::from_secs(10),
            request_timeout: Some(Duration::from_secs(30)),
            write_timeout: Some(Duration::from_secs(30)),
            call_timeout: None,
            sse_timeout: Duration::from_secs(300),
            listen_timeout: Duration::from_secs(1800),
            sse_keep_alive: Duration::from_secs(15),
            shutdown_grace: Duration::from_secs(10),
            unready_delay: Duration::ZERO,
            input_requests: 16,
            input_rounds: 16,
            input_state_bytes: 64 * 1024,
            input_state_ttl: Duration::from_secs(600),
            input_wait: Duration::from_secs(120),
            tasks: 1000,
            tasks_running: 100,
            tasks_per_caller: 100,
            tasks_running_per_caller: 10,
            tasks_queued: 10_000,
            tasks_queued_per_caller: 100,
            task_ttl: Duration::from_secs(3600),
            task_poll_interval: Duration::from_millis(500),
            callbacks_per_host: 16,
            callback_horizon: Duration::from_secs(24 * 3600),
            callback_first_retry: Duration::from_secs(1),
            callbacks_pending: 10_000,
            callbacks_pending_per_caller: 100,
            callbacks_dead: 10_000,
            rate_limit_keys: 100_000,
            trusted_proxies: Vec::new(),
        }
    }
}

impl Limits {
    /// The bounds clamped to what the layers below can honour (depth ≤ 128, header bytes ≥
    /// 8 KiB, at least one of everything counted).
    pub(crate) fn clamped(mut self) -> Self {
        self.depth = self.depth.clamp(1, 128);
        self.header_bytes = self.header_bytes.max(8 * 1024);
        self.batch_items = self.batch_items.max(1);
        self.batch_concurrency = self.batch_concurrency.max(1);
        self.language_ranges = self.language_ranges.max(1);
        self.sse_streams = self.sse_streams.max(1);
        // A zero period would spin (and `tokio::time::interval` refuses it).
        self.sse_keep_alive = self.sse_keep_alive.max(Duration::from_millis(10));
        self.detached_calls = self.detached_calls.max(1);
        self.sessions = self.sessions.max(1);
        self.input_requests = self.input_requests.max(1);
        self.input_rounds = self.input_rounds.max(1);
        self.tasks = self.tasks.max(1);
        self.tasks_running = self.tasks_running.max(1);
        // A share is at least one place and at most the ceiling it is a share of.
        self.sse_streams_per_caller = self.sse_streams_per_caller.clamp(1, self.sse_streams);
        self.sessions_per_caller = self.sessions_per_caller.clamp(1, self.sessions);
        self.detached_calls_per_caller =
            self.detached_calls_per_caller.clamp(1, self.detached_calls);
        self.tasks_per_caller = self.tasks_per_caller.clamp(1, self.tasks);
        self.tasks_running_per_caller = self.tasks_running_per_caller.clamp(1, self.tasks_running);
        self.tasks_queued = self.tasks_queued.max(1);
        self.tasks_queued_per_caller = self.tasks_queued_per_caller.clamp(1, self.tasks_queued);
        self
    }
}
