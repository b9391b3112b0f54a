//! The pipeline, identical for `/rpc` and MCP `tools/call`:
//!
//! look up → scopes and rate limit → prepare params → `request` → cache lookup (a hit returns here) → validate
//! (compiled schema) → `pre_execute` → lock → call (conversion, custom checks, the method;
//! panics caught) → unlock → `post_execute` → cache store → `response` → (after the response
//! is written) `post_response`; on failure `error`. A stage nobody configured costs nothing.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;

use super::cache::SharedCache;
use super::events::{Event, EventKind, Listeners};
use super::lock::{LockGuard, SharedLocks, lock_key};
use crate::catalog::{Catalog, MethodInfo};
use crate::context::RequestId;
use crate::context::{CallExtras, Face, RequestContext, StateMap};
use crate::env::Environment;
use crate::error::{RpcError, codes};
use crate::output::Output;
use crate::record::{Handler, Params};

/// One call, as every face hands it to the core: a method already looked up in the catalog
/// of the endpoint it came through.
#[derive(Debug)]
pub struct CallRequest<'a> {
    /// The catalog of the endpoint (group and version).
    pub catalog: &'a Catalog,
    /// The method (or tool), from [`Catalog::get`].
    pub info: &'a MethodInfo,
    /// The params (object or list), if any.
    pub params: Option<Value>,
    /// The face it came through.
    pub face: Face,
    /// Progress token, notifier and post-response queue, from the transport.
    pub extras: CallExtras,
}

/// A call in progress: a future of its result.
///
/// A call that cannot suspend (a synchronous method with no cache, lock, time limit or
/// awaited listener) has already run when [`Core::call`] returns: awaiting it costs nothing
/// and it carries no pipeline future. Any other call is the pipeline's future, boxed, so that
/// whatever awaits a `Calling` stays small either way.
#[must_use = "a call does nothing unless awaited"]
pub struct Calling<'a>(CallingState<'a>);

enum CallingState<'a> {
    Done(Option<Result<Output, RpcError>>),
    Running(futures_util::future::BoxFuture<'a, Result<Output, RpcError>>),
}

impl std::fmt::Debug for Calling<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            CallingState::Done(_) => "Calling(done)",
            CallingState::Running(_) => "Calling(running)",
        })
    }
}

impl std::future::Future for Calling<'_> {
    type Output = Result<Output, RpcError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        match &mut self.0 {
            CallingState::Done(r) => std::task::Poll::Ready(
                r.take()
                    .unwrap_or_else(|| Err(RpcError::internal("call polled after it finished"))),
            ),
            CallingState::Running(f) => f.as_mut().poll(cx),
        }
    }
}

/// The core: environment, state, listeners and stores shared by every call.
#[derive(Clone)]
pub struct Core {
    env: Environment,
    state: Arc<StateMap>,
    listeners: Arc<Listeners>,
    cache: SharedCache,
    locks: SharedLocks,
    background: super::events::Background,
    /// Per-method time limits, by name; and the default for the rest.
    timeouts: Arc<std::collections::HashMap<String, Duration>>,
    default_timeout: Option<Duration>,
    /// Schema violations reported per error ([`crate::Limits::violations`]).
    violations: usize,
    /// Calls that outlive their request.
    tasks: super::Tasks,
    /// Rate limits' times.
    rates: Arc<super::rate::Limiter>,
    /// What the server records (nothing unless the `otel` feature's instruments are given).
    telemetry: super::telemetry::Telemetry,
    /// The language of a call that names none: a cached result in another language has an
    /// entry of its own.
    default_language: Option<Arc<str>>,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("env", &self.env)
            .field("listeners", &self.listeners)
            .finish_non_exhaustive()
    }
}

impl Core {
    /// A core with in-memory stores and no listeners.
    pub fn new(env: Environment, state: Arc<StateMap>) -> Self {
        Self {
            env,
            state,
            listeners: Arc::default(),
            cache: Arc::new(super::cache::MemoryCache::default()),
            locks: Arc::new(super::lock::MemoryLocks::default()),
            background: super::events::Background::default(),
            timeouts: Arc::default(),
            default_timeout: None,
            violations: crate::Limits::DEFAULT_VIOLATIONS,
            tasks: tasks_of(&crate::Limits::default()),
            rates: Arc::new(super::rate::Limiter::new(
                crate::Limits::default().rate_limit_keys,
            )),
            telemetry: super::telemetry::Telemetry::default(),
            default_language: None,
        }
    }

    /// Names the server's default language: a cached call in any other language (a
    /// handler may answer in `ctx.language()`) is kept under a key of its own.
    pub(crate) fn with_default_language(mut self, lang: &str) -> Self {
        self.default_language = Some(Arc::from(lang));
        self
    }

    /// Keeps at most `keys` callers' rate-limit times in memory, and decides in `store`
    /// (shared by every instance) when there is one.
    pub(crate) fn with_rate_limits(
        mut self,
        keys: usize,
        store: Option<Arc<dyn super::RateStore>>,
    ) -> Self {
        let limiter = super::rate::Limiter::new(keys);
        self.rates = Arc::new(match store {
            Some(s) => limiter.with_store(s),
            None => limiter,
        });
        self
    }

    /// Sets the task engine's bounds from `limits`.
    pub fn with_task_limits(mut self, limits: &crate::Limits) -> Self {
        self.tasks = tasks_of(limits);
        self
    }

    /// Shares the task engine's tasks through `mirror` (another instance answers for them).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn with_task_mirror(mut self, mirror: Arc<dyn super::tasks::TaskMirror>) -> Self {
        self.tasks = self.tasks.with_mirror(mirror);
        self
    }

    /// Announces task changes on `changes`.
    pub(crate) fn with_task_changes(mut self, changes: super::Changes) -> Self {
        self.tasks = self.tasks.with_changes(changes);
        self
    }

    /// The task engine.
    pub fn tasks(&self) -> &super::Tasks {
        &self.tasks
    }

    /// How many schema violations an error reports (the rest are counted).
    pub fn with_violation_cap(mut self, cap: usize) -> Self {
        self.violations = cap.max(1);
        self
    }

    /// Sets the listeners.
    pub fn with_listeners(mut self, l: Listeners) -> Self {
        self.listeners = Arc::new(l);
        self
    }

    /// Records through `t` (the `otel` feature's instruments).
    #[cfg(feature = "otel")]
    pub(crate) fn with_telemetry(mut self, t: super::telemetry::Telemetry) -> Self {
        self.tasks = self.tasks.with_telemetry(t.clone());
        self.telemetry = t;
        self
    }

    /// What the server records through.
    pub(crate) fn telemetry(&self) -> &super::telemetry::Telemetry {
        &self.telemetry
    }

    /// Sets the cache backend.
    pub fn with_cache(mut self, c: SharedCache) -> Self {
        self.cache = c;
        self
    }
    /// Sets the lock backend.
    pub fn with_locks(mut self, l: SharedLocks) -> Self {
        self.locks = l;
        self
    }

    /// Sets time limits: a default for every method, and per method by name.
    pub fn with_timeouts(
        mut self,
        default: Option<Duration>,
        per_method: std::collections::HashMap<String, Duration>,
    ) -> Self {
        self.default_timeout = default;
        self.timeouts = Arc::new(per_method);
        self
    }

    /// The background work tracker (`post_response` jobs).
    pub fn background(&self) -> &super::events::Background {
        &self.background
    }

    /// A queue for work to run after a response is written.
    pub fn after_response(&self) -> super::events::AfterResponse {
        super::events::AfterResponse::new(&self.background)
    }

    /// The environment.
    pub fn env(&self) -> &Environment {
        &self.env
    }

    /// The shared state methods read (`State<T>`).
    pub fn state(&self) -> &Arc<StateMap> {
        &self.state
    }

    /// The server's change notices (a hub of its own when the state has none).
    pub fn changes(&self) -> super::Changes {
        self.state
            .get::<super::Changes>()
            .map(|c| (*c).clone())
            .unwrap_or_default()
    }

    /// Whether `post_response` listeners exist (transports then queue work after the write).
    pub fn has_post_response(&self) -> bool {
        self.listeners.has(EventKind::PostResponse)
    }

    /// Runs one call through the pipeline: the only way into a call, for every face.
    ///
    /// Each call runs in a `rpc.call` span with OpenTelemetry's JSON-RPC conventions
    /// (`rpc.system`, `rpc.method`, `rpc.jsonrpc.version`, `rpc.jsonrpc.error_code`) plus the group,
    /// version, internal request id, the caller's subject (`enduser.id`, when the token
    /// validator identified one), outcome and duration.
    pub fn call<'a>(&'a self, req: CallRequest<'a>) -> Calling<'a> {
        self.enter(req, true)
    }

    /// [`Self::call`] of a call already [charged](Self::charge) against its rate limit.
    pub(crate) fn call_charged<'a>(&'a self, req: CallRequest<'a>) -> Calling<'a> {
        self.enter(req, false)
    }

    /// [`Self::checked`], measured when the server records metrics (calls in flight, their
    /// duration on `/rpc`, errors by code, rate-limit refusals); as is when it does not.
    fn enter<'a>(&'a self, req: CallRequest<'a>, metered: bool) -> Calling<'a> {
        if !self.telemetry.is_on() {
            return self.checked(req, metered);
        }
        let (face, method) = (req.face, req.info.def.name);
        let held = self.telemetry.call(face.into());
        let started = std::time::Instant::now();
        let call = self.checked(req, metered);
        Calling(CallingState::Running(Box::pin(async move {
            let result = call.await;
            drop(held);
            self.measured(face, method, started, &result);
            result
        })))
    }

    /// Records a call's end.
    fn measured(
        &self,
        face: Face,
        method: &'static str,
        started: std::time::Instant,
        result: &Result<Output, RpcError>,
    ) {
        let t = &self.telemetry;
        let outcome = match result {
            Ok(_) => super::telemetry::Outcome::Ok,
            Err(e) => {
                t.error(face.into(), e.code());
                if e.code() == codes::RATE_LIMITED {
                    t.rate_refused(face.into());
                }
                super::telemetry::Outcome::Code(e.code())
            }
        };
        if face == Face::JsonRpc {
            t.rpc_call(method, outcome, started.elapsed().as_secs_f64());
        }
    }

    /// The checks before a call runs: its scopes, then (when `metered`) its rate limit.
    fn checked<'a>(&'a self, req: CallRequest<'a>, metered: bool) -> Calling<'a> {
        let CallRequest {
            catalog,
            info,
            params,
            face,
            extras,
        } = req;
        // Scopes first, like the token: a caller who may not call it sets nothing in motion.
        if let Err(e) = scoped(info, &extras) {
            return Calling(CallingState::Done(Some(Err(e))));
        }
        // Then the rate limit, before anything else is spent on the call.
        let limit = info.def.rate_limit.or(catalog.group().default_rate_limit());
        if let Some(limit) = limit.filter(|_| metered) {
            let (group, method) = (catalog.group().name(), info.def.name);
            if self.rates.is_shared() {
                // One round trip to the shared store first; the call is built only if it
                // passes (a call that runs at once would otherwise have run already).
                return Calling(CallingState::Running(Box::pin(async move {
                    let decided = self
                        .rates
                        .decide(group, method, &limit, extras.caller.as_ref())
                        .await;
                    match decided {
                        Ok(()) => self.admitted(catalog, info, params, face, extras).await,
                        Err(wait) => Err(rate_limited(method, extras.caller.as_ref(), wait)),
                    }
                })));
            }
            if let Err(wait) = self
                .rates
                .decide_here(group, method, &limit, extras.caller.as_ref())
            {
                return Calling(CallingState::Done(Some(Err(rate_limited(
                    method,
                    extras.caller.as_ref(),
                    wait,
                )))));
            }
        }
        self.admitted(catalog, info, params, face, extras)
    }

    /// Counts a call of `caller` against the method's rate limit now, for a call that will
    /// run later through [`Self::call_charged`] (an asynchronous JSON-RPC call: refused before
    /// it is acknowledged, not after).
    pub(crate) async fn charge(
        &self,
        catalog: &Catalog,
        info: &MethodInfo,
        caller: Option<&crate::Caller>,
    ) -> Result<(), RpcError> {
        let Some(limit) = info.def.rate_limit.or(catalog.group().default_rate_limit()) else {
            return Ok(());
        };
        let (group, method) = (catalog.group().name(), info.def.name);
        let decided = self.rates.decide(group, method, &limit, caller).await;
        decided.map_err(|wait| {
            self.telemetry
                .rate_refused(super::telemetry::FaceLabel::JsonRpc);
            rate_limited(method, caller, wait)
        })
    }

    /// [`Self::call`] once the caller may call.
    fn admitted<'a>(
        &'a self,
        catalog: &'a Catalog,
        info: &'a MethodInfo,
        params: Option<Value>,
        face: Face,
        extras: CallExtras,
    ) -> Calling<'a> {
        // The id is drawn here so the span gets it at creation: a `record` later costs a
        // subscriber that formats fields (tracing-subscriber's `fmt`) a second formatting pass.
        let id = RequestId::next();
        let span = call_span(catalog, info, face, id, extras.identity.as_deref());
        if face == Face::JsonRpc {
            // A `/rpc` call continues its caller's trace (an MCP call's parent is its request's
            // span, current here).
            super::telemetry::set_parent(&span, extras.trace.as_ref());
        }
        if let Some(cancel) = extras.cancel.clone()
            && !self.runs_now(info)
        {
            // A call its client can cancel: dropped (lock released, no `post_response`) when
            // the signal is set.
            let inner = self.call_traced(catalog, info, params, face, extras, (id, span));
            return Calling(CallingState::Running(Box::pin(async move {
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => Err(cancelled(info.def.name)),
                    r = inner => r,
                }
            })));
        }
        if self.runs_now(info) {
            // Nothing to wait for: run it here, without building the pipeline's future.
            if span.is_disabled() {
                return Calling(CallingState::Done(Some(
                    self.run_now(catalog, info, params, face, extras, id),
                )));
            }
            let started = std::time::Instant::now();
            let result = span.in_scope(|| self.run_now(catalog, info, params, face, extras, id));
            record_outcome(&span, started, &result);
            return Calling(CallingState::Done(Some(result)));
        }
        Calling(CallingState::Running(self.call_traced(
            catalog,
            info,
            params,
            face,
            extras,
            (id, span),
        )))
    }

    /// The pipeline's future, in its span when a subscriber wants it (else neither the clock
    /// nor the instrumented future is paid for).
    fn call_traced<'a>(
        &'a self,
        catalog: &'a Catalog,
        info: &'a MethodInfo,
        params: Option<Value>,
        face: Face,
        extras: CallExtras,
        (id, span): (RequestId, tracing::Span),
    ) -> futures_util::future::BoxFuture<'a, Result<Output, RpcError>> {
        use tracing::Instrument as _;
        if span.is_disabled() {
            let (ctx, after) = self.context(catalog, info, face, extras, id);
            return Box::pin(self.call_inner(catalog, info, params, face, ctx, after));
        }
        let (ctx, after) = self.context(catalog, info, face, extras, id);
        Box::pin(async move {
            let started = std::time::Instant::now();
            let result = self
                .call_inner(catalog, info, params, face, ctx, after)
                .instrument(span.clone())
                .await;
            record_outcome(&span, started, &result);
            result
        })
    }

    /// Whether a call of `info` can finish without suspending: a synchronous method with no
    /// cache, no lock, no time limit, and listeners (if any) that answer at once
    /// (`post_response` work is queued, not awaited).
    fn runs_now(&self, info: &MethodInfo) -> bool {
        matches!(info.def.handler, Handler::Sync(_))
            && info.def.lock.is_none()
            && self.limit(info).is_none()
            && !info.def.cache.is_some_and(|p| p.active_in(&self.env))
            && !self.listeners.awaits_any()
    }

    /// A call that [`Self::runs_now`] allows, run on the spot: the pipeline's future polled
    /// once where it stands, neither boxed nor spawned. Nothing in it can wait (a synchronous
    /// method, no cache, lock or limit, listeners that answer at once), so one poll finishes
    /// it; one that waits all the same (a listener broke its word) fails rather than stalls.
    fn run_now(
        &self,
        catalog: &Catalog,
        info: &MethodInfo,
        params: Option<Value>,
        face: Face,
        extras: CallExtras,
        id: RequestId,
    ) -> Result<Output, RpcError> {
        let (ctx, after) = self.context(catalog, info, face, extras, id);
        let call = std::pin::pin!(self.call_inner(catalog, info, params, face, ctx, after));
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match call.poll(&mut cx) {
            std::task::Poll::Ready(result) => result,
            std::task::Poll::Pending => Err(RpcError::internal(format!(
                "Method '{}' waited on a listener that says it answers at once",
                info.def.name
            ))),
        }
    }

    /// The call's context, and where its `post_response` work goes. Built before the
    /// pipeline's future, which then holds the context's pointer instead of the extras (twice:
    /// an `async fn` keeps its arguments as arguments and as locals).
    fn context(
        &self,
        catalog: &Catalog,
        info: &MethodInfo,
        face: Face,
        extras: CallExtras,
        id: RequestId,
    ) -> (RequestContext, Option<super::events::AfterResponse>) {
        let after = extras.after_response.clone();
        let ctx = RequestContext::new(
            id,
            info.def.name,
            catalog.group().name(),
            catalog.version(),
            face,
            self.env.clone(),
            self.state.clone(),
            extras,
        );
        (ctx, after)
    }

    /// The params with defaults applied, and whether `$rpc.ignoreCache` asked to skip the cache.
    fn prepare(
        &self,
        info: &MethodInfo,
        params: Option<Value>,
        face: Face,
    ) -> Result<(Params, bool), RpcError> {
        let mut params = super::params::prepare(info, params)?;
        let mut ignore_cache = false;
        // `$rpc` carries per-request options on JSON-RPC (MCP rejects it as an unknown argument).
        if face == Face::JsonRpc
            && let Some(Value::Object(opts)) = params.remove("$rpc")
        {
            ignore_cache = opts.get("ignoreCache") == Some(&Value::Bool(true));
        }
        Ok((params, ignore_cache))
    }

    /// Queues the `post_response` listeners, if any, with a copy of the output.
    fn queue_post_response(
        &self,
        ctx: RequestContext,
        out: &Output,
        after: Option<super::events::AfterResponse>,
    ) {
        if !self.listeners.has(EventKind::PostResponse) {
            return;
        }
        let listeners = self.listeners.clone();
        let mut copy = out.clone();
        let job = Box::pin(async move {
            let mut ev = Event::new(EventKind::PostResponse, &ctx).with_output(&mut copy);
            listeners.emit_logged(&mut ev).await;
        });
        match after {
            Some(a) => a.push(job),
            None => self.background.spawn(job),
        }
    }

    async fn call_inner(
        &self,
        catalog: &Catalog,
        info: &MethodInfo,
        params: Option<Value>,
        face: Face,
        ctx: RequestContext,
        after: Option<super::events::AfterResponse>,
    ) -> Result<Output, RpcError> {
        let (mut params, mut ignore_cache) = match self.prepare(info, params, face) {
            Ok(p) => p,
            Err(e) => return Err(self.failed(&ctx, e).await),
        };
        let l = &*self.listeners;
        if l.has(EventKind::Request) {
            let mut ev = Event::new(EventKind::Request, &ctx)
                .with_params(&mut params)
                .with_ignore_cache(&mut ignore_cache);
            if let Err(e) = l.emit(&mut ev).await {
                return Err(self.failed(&ctx, e).await);
            }
        }
        let cache = match info.def.cache {
            Some(policy) if policy.active_in(&self.env) => {
                let key = effective_key(info, catalog.group().name(), catalog.version(), &params);
                let key = match ctx.language() {
                    Some(l) if self.default_language.as_deref() != Some(l) => {
                        super::cache::for_language(key, l)
                    }
                    _ => key,
                };
                // A caller with an identity has its own entries: one caller's result is never
                // served to another.
                let key = match ctx.identity() {
                    Some(who) => super::cache::for_caller(key, &who.subject),
                    None => key,
                };
                Some((key, policy))
            }
            _ => None,
        };
        if let (Some((key, _)), false) = (&cache, ignore_cache) {
            match self.cache.get(key).await {
                // A hit runs nothing else: no events after `request`.
                Ok(Some(bytes)) => {
                    if let Some(out) = Output::from_cache(&bytes) {
                        self.telemetry.cache(true);
                        return Ok(out);
                    }
                    self.telemetry.cache(false);
                }
                Ok(None) => self.telemetry.cache(false),
                Err(e) => {
                    tracing::warn!(method = info.def.name, error = %e, "cache unavailable; calling uncached")
                }
            }
        }
        let mut out = match self.execute(info, &ctx, params).await {
            Ok(out) => out,
            Err(e) => return Err(self.failed(&ctx, e).await),
        };
        if l.has(EventKind::PostExecute) {
            l.emit_logged(&mut Event::new(EventKind::PostExecute, &ctx).with_output(&mut out))
                .await;
        }
        if let Some((key, policy)) = cache
            && let Err(e) = self
                .cache
                .set(&key, out.to_cache(), Duration::from_millis(policy.ttl_ms))
                .await
        {
            tracing::warn!(method = info.def.name, error = %e, "cache unavailable; result not stored");
        }
        if l.has(EventKind::Response) {
            l.emit_logged(&mut Event::new(EventKind::Response, &ctx).with_output(&mut out))
                .await;
        }
        self.queue_post_response(ctx, &out, after);
        Ok(out)
    }

    /// Validate, `pre_execute`, lock, call.
    async fn execute(
        &self,
        info: &MethodInfo,
        ctx: &RequestContext,
        params: Params,
    ) -> Result<Output, RpcError> {
        let mut params = validated(info, params, self.violations)?;
        if self.listeners.has(EventKind::PreExecute) {
            self.listeners
                .emit(&mut Event::new(EventKind::PreExecute, ctx).with_params(&mut params))
                .await?;
        }
        let mut guard = match &info.def.lock {
            Some(policy) => {
                let key = lock_key(info.def.name, policy, &params);
                let waited = self.telemetry.is_on().then(std::time::Instant::now);
                match LockGuard::acquire(&self.locks, key, policy).await {
                    Ok(Some(g)) => {
                        if let Some(w) = waited {
                            self.telemetry.lock_wait(w.elapsed().as_secs_f64());
                        }
                        Some(g)
                    }
                    Ok(None) => {
                        return Err(RpcError::logic(format!(
                            "Method '{}' is locked.",
                            info.def.name
                        )));
                    }
                    Err(e) => {
                        // The store's error (a Redis message, say) is logged, not sent.
                        tracing::warn!(method = info.def.name, error = %e, "lock store unavailable");
                        return Err(RpcError::runtime(format!(
                            "Method '{}' cannot take its lock: the lock store is unavailable",
                            info.def.name
                        )));
                    }
                }
            }
            None => None,
        };
        let result = match (self.limit(info), info.def.handler) {
            // A thread cannot be stopped: a sync method with a limit runs on the blocking pool,
            // so the call can answer when the limit passes while the method runs on.
            (Some(d), Handler::Sync(f)) => {
                let (span, ctx, env) = (tracing::Span::current(), ctx.clone(), self.env.clone());
                let mut job = tokio::task::spawn_blocking(move || {
                    let _span = span.enter();
                    invoke_sync(f, ctx, params, &env)
                });
                match tokio::time::timeout(d, &mut job).await {
                    Ok(joined) => joined.unwrap_or_else(|e| {
                        Err(RpcError::internal(format!(
                            "Method '{}' did not finish: {e}",
                            info.def.name
                        )))
                    }),
                    Err(_) => {
                        // The lock stays taken until the method really returns.
                        if let Some(g) = guard.take() {
                            self.background.spawn(Box::pin(async move {
                                let _ = job.await;
                                g.release().await;
                            }));
                        }
                        Err(timed_out(info.def.name, d))
                    }
                }
            }
            // The future is dropped on timeout (its lock guard is released below).
            (Some(d), handler) => {
                match tokio::time::timeout(d, invoke(handler, ctx.clone(), params, &self.env)).await
                {
                    Ok(r) => r,
                    Err(_) => Err(timed_out(info.def.name, d)),
                }
            }
            (None, handler) => invoke(handler, ctx.clone(), params, &self.env).await,
        };
        if let Some(g) = guard {
            g.release().await;
        }
        result
    }

    /// The time limit of a method, if any: its own, else the default.
    fn limit(&self, info: &MethodInfo) -> Option<Duration> {
        self.timeouts
            .get(info.def.name)
            .copied()
            .or(self.default_timeout)
    }

    async fn failed(&self, ctx: &RequestContext, mut e: RpcError) -> RpcError {
        if self.listeners.has(EventKind::Error) {
            self.listeners
                .emit_logged(&mut Event::new(EventKind::Error, ctx).with_error(&mut e))
                .await;
        }
        self.log_failure(ctx, &e);
        e
    }

    fn log_failure(&self, ctx: &RequestContext, e: &RpcError) {
        if e.code() == codes::INTERNAL_ERROR {
            // Debug-formatted (`?`): the message can quote the request, and a newline or an
            // escape sequence in it must not forge a log line or reach a terminal.
            tracing::error!(request_id = %ctx.request_id(), method = ctx.method(), code = e.code(), error = ?e.message(), sources = ?e.source_chain(), location = %e.location(), "call failed");
        } else {
            tracing::debug!(request_id = %ctx.request_id(), method = ctx.method(), code = e.code(), error = ?e.message(), "call failed");
        }
    }
}

/// The `rpc.call` span of a call (disabled when no subscriber wants it), with every field
/// known before the call at creation: a formatting subscriber formats them in one pass.
fn call_span(
    catalog: &Catalog,
    info: &MethodInfo,
    face: Face,
    id: RequestId,
    who: Option<&crate::context::Identity>,
) -> tracing::Span {
    let span = tracing::info_span!(
        "rpc.call",
        // The span name an exporter shows: the method (the RPC conventions' `{rpc.method}`),
        // recorded only when spans are exported (logs have `rpc.method`).
        otel.name = tracing::field::Empty,
        // A `/rpc` call is the server's span; an MCP call's is the MCP request's child.
        otel.kind = match face {
            Face::JsonRpc => "server",
            Face::Mcp => "internal",
        },
        otel.status_code = tracing::field::Empty,
        rpc.system = "jsonrpc",
        rpc.jsonrpc.version = "2.0",
        rpc.method = info.def.name,
        rpc.group = catalog.group().name(),
        rpc.api_version = catalog.version(),
        // Recorded as strings: a formatting subscriber writes them without `fmt`.
        rpc.face = face.name(),
        rpc.request_id = id.text().as_str(),
        // Who called (OpenTelemetry's `enduser.id`): the identity's subject, never the token;
        // absent (not empty) without one.
        enduser.id = who.map(|w| w.subject.as_str()),
        rpc.jsonrpc.error_code = tracing::field::Empty,
        outcome = tracing::field::Empty,
        duration_us = tracing::field::Empty,
    );
    if super::telemetry::traces_on() {
        span.record("otel.name", info.def.name);
    }
    span
}

/// The span's fields written when the call ends, found once: `rpc.call` has one callsite.
struct OutcomeFields {
    duration: tracing::field::Field,
    outcome: tracing::field::Field,
    code: tracing::field::Field,
    status: tracing::field::Field,
}

fn outcome_fields(span: &tracing::Span) -> Option<&'static OutcomeFields> {
    static FIELDS: std::sync::OnceLock<Option<OutcomeFields>> = std::sync::OnceLock::new();
    FIELDS
        .get_or_init(|| {
            let fields = span.metadata()?.fields();
            Some(OutcomeFields {
                duration: fields.field("duration_us")?,
                outcome: fields.field("outcome")?,
                code: fields.field("rpc.jsonrpc.error_code")?,
                status: fields.field("otel.status_code")?,
            })
        })
        .as_ref()
}

/// Records the outcome and duration of a call on its span, in one `record` (one pass of a
/// formatting subscriber, not one per field).
fn record_outcome(
    span: &tracing::Span,
    started: std::time::Instant,
    result: &Result<Output, RpcError>,
) {
    let (Some(meta), Some(f)) = (span.metadata(), outcome_fields(span)) else {
        return;
    };
    let duration = started.elapsed().as_micros() as u64;
    match result {
        Ok(_) => span.record_all(&meta.fields().value_set(&[
            (&f.duration, Some(&duration as &dyn tracing::field::Value)),
            (&f.outcome, Some(&"ok" as &dyn tracing::field::Value)),
        ])),
        Err(e) => span.record_all(&meta.fields().value_set(&[
            (&f.duration, Some(&duration as &dyn tracing::field::Value)),
            (&f.outcome, Some(&"error" as &dyn tracing::field::Value)),
            (&f.code, Some(&e.code() as &dyn tracing::field::Value)),
            (&f.status, Some(&"ERROR" as &dyn tracing::field::Value)),
        ])),
    };
}

/// The params checked against the method's compiled schema.
fn validated(info: &MethodInfo, params: Params, cap: usize) -> Result<Params, RpcError> {
    let value = Value::Object(params);
    super::validate::check(info, &value, cap)?;
    match value {
        Value::Object(params) => Ok(params),
        _ => Err(RpcError::internal("params are not an object")),
    }
}

/// The error of a call cut by its time limit.
fn tasks_of(l: &crate::Limits) -> super::Tasks {
    super::Tasks::new(l.tasks, l.tasks_running, l.task_ttl, l.task_poll_interval).with_shares(
        l.tasks_per_caller,
        l.tasks_running_per_caller,
        l.input_wait,
    )
}

/// Whether the caller's identity has the method's scopes (else the refusal, logged).
fn scoped(info: &MethodInfo, extras: &CallExtras) -> Result<(), RpcError> {
    if info.def.scopes.is_empty() {
        return Ok(());
    }
    info.check_scopes(extras.identity.as_deref())
        .inspect_err(|_| {
            tracing::debug!(
                method = info.def.name,
                subject = extras.identity.as_deref().map(|i| i.subject.as_str()),
                "refused: insufficient scope"
            );
        })
}

/// The refusal of a call past its rate limit (logged at `debug`: a flood must not flood logs).
fn rate_limited(method: &str, caller: Option<&crate::Caller>, wait: Duration) -> RpcError {
    tracing::debug!(
        method,
        caller = caller.map(tracing::field::display),
        wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        "refused: rate limited"
    );
    RpcError::rate_limited(method, wait)
}

/// The error of a call its client cancelled (the faces send no answer for it).
fn cancelled(method: &str) -> RpcError {
    RpcError::runtime(format!("Method '{method}' was cancelled by the client"))
}

fn timed_out(method: &str, limit: Duration) -> RpcError {
    RpcError::runtime(format!(
        "Method '{method}' timed out after {} ms",
        limit.as_millis()
    ))
}

/// Calls a synchronous handler; a panic becomes -32603.
fn invoke_sync(
    f: fn(RequestContext, Params) -> Result<Output, RpcError>,
    ctx: RequestContext,
    params: Params,
    env: &Environment,
) -> Result<Output, RpcError> {
    std::panic::catch_unwind(AssertUnwindSafe(|| f(ctx, params)))
        .unwrap_or_else(|p| Err(RpcError::from_panic(p, env)))
}

/// The cache key of the effective arguments: defaults filled in, so `{}` and `{"key":"a"}`
/// (with `key` defaulting to `"a"`) are one entry.
fn effective_key(info: &MethodInfo, group: &str, version: u32, params: &Params) -> String {
    use crate::record::ParamKind;
    // Most calls give every param a default would fill: their params are the key as they are.
    let filled = |p: &crate::record::ParamDef| {
        matches!(p.kind, ParamKind::Default(_) | ParamKind::Optional)
            && !params.contains_key(p.name)
    };
    if !info.def.params.iter().any(filled) {
        return super::cache::cache_key_of_map(group, info.def.name, version, params);
    }
    let mut effective = params.clone();
    for p in info.def.params {
        if let crate::record::ParamKind::Default(f) = p.kind {
            effective.entry(p.name).or_insert_with(f);
        } else if let crate::record::ParamKind::Optional = p.kind {
            effective.entry(p.name).or_insert(Value::Null);
        }
    }
    super::cache::cache_key_of_map(group, info.def.name, version, &effective)
}

/// Calls the handler; a panic becomes -32603 and the worker keeps serving.
async fn invoke(
    handler: Handler,
    ctx: RequestContext,
    params: Params,
    env: &Environment,
) -> Result<Output, RpcError> {
    match handler {
        Handler::Sync(f) => invoke_sync(f, ctx, params, env),
        Handler::Async(f) => super::unwind::catch_panics(|| f(ctx, params))
            .await
            .unwrap_or_else(|p| Err(RpcError::from_panic(p, env))),
    }
}

impl Output {
    /// The cache form: a kind byte, then the JSON.
    pub(crate) fn to_cache(&self) -> Bytes {
        let (tag, raw) = match self {
            Output::Json(r) => (b'J', r),
            Output::Tool(r) => (b'T', r),
        };
        let mut v = Vec::with_capacity(raw.get().len() + 1);
        v.push(tag);
        v.extend_from_slice(raw.get().as_bytes());
        Bytes::from(v)
    }

    pub(crate) fn from_cache(b: &[u8]) -> Option<Output> {
        let (tag, rest) = b.split_first()?;
        let raw = serde_json::value::RawValue::from_string(String::from_utf8(rest.to_vec()).ok()?)
            .ok()?;
        match tag {
            b'J' => Some(Output::Json(raw)),
            b'T' => Some(Output::Tool(raw)),
            _ => None,
        }
    }
}
