//! Events: listeners around every call, ordered by priority, on both faces.
//!
//! | event | when | a listener may |
//! |---|---|---|
//! | `request` | before anything (before the cache) | reject the call, bypass the cache |
//! | `pre_execute` | after validation, before the lock and the call | change params, reject |
//! | `post_execute` | after a successful call | read the result |
//! | `response` | before the response is written | replace the result |
//! | `error` | when the call fails | replace the error |
//! | `post_response` | after the response was written; not for errors or cache hits | read |
//!
//! A listener that fails or panics after the call is logged and never breaks the response.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::value::RawValue;

pub use crate::background::{AfterResponse, Background};
use crate::context::{Face, RequestContext, RequestId};
use crate::error::RpcError;
use crate::output::Output;
use crate::record::Params;

/// The kinds of events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    /// Before anything.
    Request,
    /// Before the lock and the call.
    PreExecute,
    /// After a successful call.
    PostExecute,
    /// Before the response is written.
    Response,
    /// When the call fails.
    Error,
    /// After the response was written.
    PostResponse,
}

impl EventKind {
    /// Every kind, in pipeline order.
    pub const ALL: [EventKind; 6] = [
        EventKind::Request,
        EventKind::PreExecute,
        EventKind::PostExecute,
        EventKind::Response,
        EventKind::Error,
        EventKind::PostResponse,
    ];

    /// The name (`request`, `pre_execute`, ...).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Request => "request",
            EventKind::PreExecute => "pre_execute",
            EventKind::PostExecute => "post_execute",
            EventKind::Response => "response",
            EventKind::Error => "error",
            EventKind::PostResponse => "post_response",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What a listener sees of a call.
pub struct Event<'a> {
    kind: EventKind,
    ctx: &'a RequestContext,
    params: Option<&'a mut Params>,
    output: Option<&'a mut Output>,
    error: Option<&'a mut RpcError>,
    ignore_cache: Option<&'a mut bool>,
}

impl<'a> Event<'a> {
    pub(crate) fn new(kind: EventKind, ctx: &'a RequestContext) -> Self {
        Self {
            kind,
            ctx,
            params: None,
            output: None,
            error: None,
            ignore_cache: None,
        }
    }
    pub(crate) fn with_params(mut self, p: &'a mut Params) -> Self {
        self.params = Some(p);
        self
    }
    pub(crate) fn with_output(mut self, o: &'a mut Output) -> Self {
        self.output = Some(o);
        self
    }
    pub(crate) fn with_error(mut self, e: &'a mut RpcError) -> Self {
        self.error = Some(e);
        self
    }
    pub(crate) fn with_ignore_cache(mut self, flag: &'a mut bool) -> Self {
        self.ignore_cache = Some(flag);
        self
    }

    /// The kind.
    pub fn kind(&self) -> EventKind {
        self.kind
    }
    /// The call's context (method, group, version, internal request id, state).
    pub fn context(&self) -> &RequestContext {
        self.ctx
    }
    /// The method name.
    pub fn method(&self) -> &str {
        self.ctx.method()
    }
    /// The internal request id.
    pub fn request_id(&self) -> RequestId {
        self.ctx.request_id()
    }
    /// JSON-RPC or MCP.
    pub fn face(&self) -> Face {
        self.ctx.face()
    }
    /// The named params (`request`, `pre_execute`).
    pub fn params(&self) -> Option<&Params> {
        self.params.as_deref()
    }
    /// The params, to change them (`pre_execute`; changes are not validated again).
    pub fn params_mut(&mut self) -> Option<&mut Params> {
        self.params.as_deref_mut()
    }
    /// The result's JSON (`post_execute`, `response`, `post_response`).
    pub fn result(&self) -> Option<&RawValue> {
        self.output.as_deref().map(Output::as_json)
    }
    /// Replaces the result (`response`).
    pub fn set_result<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), RpcError> {
        if let Some(o) = self.output.as_deref_mut() {
            *o = Output::json(value)?;
        }
        Ok(())
    }
    /// The error (`error`).
    pub fn error(&self) -> Option<&RpcError> {
        self.error.as_deref()
    }
    /// Replaces the error (`error`).
    pub fn replace_error(&mut self, e: RpcError) {
        if let Some(slot) = self.error.as_deref_mut() {
            *slot = e;
        }
    }
    /// Skips the cache lookup of this call (`request`); the result is still stored.
    pub fn ignore_cache(&mut self) {
        if let Some(f) = self.ignore_cache.as_deref_mut() {
            *f = true;
        }
    }
}

/// A listener: async, may fail (which rejects the call on `request` and `pre_execute`).
///
/// A panic, in `handle` or in the future it returns, is an error like a failure: -32603
/// ``listener `NAME` panicked`` with `{"exception":"panic"}`.
pub trait Listener: Send + Sync + 'static {
    /// Handles one event.
    fn handle<'a, 'b: 'a>(
        &'a self,
        event: &'a mut Event<'b>,
    ) -> BoxFuture<'a, Result<(), RpcError>>;

    /// The outcome at once, for a listener that never waits: called before [`Self::handle`],
    /// which is not called when this answers `Some` (no future is built, nothing allocated
    /// per event). Default: `None`.
    fn handle_now(&self, _event: &mut Event<'_>) -> Option<Result<(), RpcError>> {
        None
    }

    /// Whether [`Self::handle_now`] always answers `Some`. When every listener a call awaits
    /// does, a call of a synchronous method (no cache, lock or time limit) runs on the spot,
    /// without a future of its own. A listener that says so and then waits fails the call
    /// (-32603). Default: `false`.
    fn answers_at_once(&self) -> bool {
        false
    }
}

/// A synchronous closure as a listener.
pub struct FnListener<F>(pub F);

impl<F> Listener for FnListener<F>
where
    F: Fn(&mut Event<'_>) -> Result<(), RpcError> + Send + Sync + 'static,
{
    fn handle<'a, 'b: 'a>(
        &'a self,
        event: &'a mut Event<'b>,
    ) -> BoxFuture<'a, Result<(), RpcError>> {
        Box::pin(async move { (self.0)(event) })
    }

    fn handle_now(&self, event: &mut Event<'_>) -> Option<Result<(), RpcError>> {
        Some((self.0)(event))
    }

    fn answers_at_once(&self) -> bool {
        true
    }
}

/// A listener registered by `#[rpc_listener]`, collected with `inventory`.
pub struct ListenerDef {
    /// The event.
    pub kind: EventKind,
    /// Higher runs first.
    pub priority: i32,
    /// The function.
    pub handler: ListenerFn,
    /// Its Rust path, for logs.
    pub name: &'static str,
}

/// The function of a `#[rpc_listener]`, as the macro found it.
#[derive(Debug, Clone, Copy)]
pub enum ListenerFn {
    /// A plain `fn`: it answers at once ([`Listener::answers_at_once`]).
    Sync(for<'a, 'b> fn(&'a mut Event<'b>) -> Result<(), RpcError>),
    /// An `async fn`.
    Async(for<'a, 'b> fn(&'a mut Event<'b>) -> BoxFuture<'a, Result<(), RpcError>>),
}

inventory::collect!(ListenerDef);

struct DefListener(&'static ListenerDef);

impl Listener for DefListener {
    fn handle<'a, 'b: 'a>(
        &'a self,
        event: &'a mut Event<'b>,
    ) -> BoxFuture<'a, Result<(), RpcError>> {
        match self.0.handler {
            ListenerFn::Sync(f) => Box::pin(std::future::ready(f(event))),
            ListenerFn::Async(f) => f(event),
        }
    }

    fn handle_now(&self, event: &mut Event<'_>) -> Option<Result<(), RpcError>> {
        match self.0.handler {
            ListenerFn::Sync(f) => Some(f(event)),
            ListenerFn::Async(_) => None,
        }
    }

    fn answers_at_once(&self) -> bool {
        matches!(self.0.handler, ListenerFn::Sync(_))
    }
}

#[derive(Clone)]
struct Entry {
    priority: i32,
    name: Arc<str>,
    listener: Arc<dyn Listener>,
}

/// The listeners of a server, per kind, highest priority first.
#[derive(Clone, Default)]
pub struct Listeners {
    by_kind: [Vec<Entry>; 6],
    /// Whether a call may wait on one (see [`Listeners::awaits_any`]), kept up to date by
    /// [`Listeners::add`]: read on every call.
    waits: bool,
}

impl std::fmt::Debug for Listeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counts: Vec<(&str, usize)> = EventKind::ALL
            .iter()
            .map(|k| (k.name(), self.by_kind[k.index()].len()))
            .collect();
        f.debug_struct("Listeners")
            .field("counts", &counts)
            .finish()
    }
}

impl Listeners {
    /// Adds a listener.
    pub fn add(
        &mut self,
        kind: EventKind,
        priority: i32,
        name: impl Into<Arc<str>>,
        listener: Arc<dyn Listener>,
    ) {
        // `post_response` runs after the response is written: never awaited by the call.
        self.waits |= kind != EventKind::PostResponse && !listener.answers_at_once();
        let list = &mut self.by_kind[kind.index()];
        list.push(Entry {
            priority,
            name: name.into(),
            listener,
        });
        // Stable: equal priorities keep registration order.
        list.sort_by_key(|e| std::cmp::Reverse(e.priority));
    }

    /// Adds the `#[rpc_listener]` functions (sorted by name first: inventory has no order).
    pub(crate) fn add_registered(&mut self) {
        let mut defs: Vec<&'static ListenerDef> =
            inventory::iter::<ListenerDef>.into_iter().collect();
        defs.sort_by_key(|d| d.name);
        for d in defs {
            self.add(d.kind, d.priority, d.name, Arc::new(DefListener(d)));
        }
    }

    /// Whether any listener handles `kind` (an unused stage costs nothing).
    pub fn has(&self, kind: EventKind) -> bool {
        !self.by_kind[kind.index()].is_empty()
    }

    /// Whether a call may have to wait on a listener: one of any kind but `post_response`
    /// (which runs after the response is written) that does not
    /// [answer at once](Listener::answers_at_once).
    pub fn awaits_any(&self) -> bool {
        self.waits
    }

    /// Runs the listeners of an event in order; the first failure (or panic) stops and is returned.
    pub async fn emit(&self, event: &mut Event<'_>) -> Result<(), RpcError> {
        for e in &self.by_kind[event.kind.index()] {
            // A listener that never waits answers at once; an `impl Listener` may panic
            // before it returns its future, or while it runs.
            let now = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                e.listener.handle_now(&mut *event)
            }));
            let r = match now {
                Ok(Some(r)) => Ok(r),
                Ok(None) => {
                    let ev = &mut *event;
                    super::unwind::catch_panics(move || e.listener.handle(ev)).await
                }
                Err(panic) => Err(panic),
            };
            match r {
                Ok(Ok(())) => {}
                Ok(Err(err)) => return Err(err),
                Err(_) => {
                    return Err(
                        RpcError::internal(format!("listener `{}` panicked", e.name))
                            .with_exception("panic"),
                    );
                }
            }
        }
        Ok(())
    }

    /// Runs the listeners of an event that must not break the response: failures are logged.
    pub async fn emit_logged(&self, event: &mut Event<'_>) {
        if let Err(e) = self.emit(event).await {
            tracing::warn!(event = event.kind.name(), method = event.method(), error = ?e.message(), "listener failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(_: &mut Event<'_>) -> Result<(), RpcError> {
        Ok(())
    }

    fn later<'a>(_: &'a mut Event<'_>) -> BoxFuture<'a, Result<(), RpcError>> {
        Box::pin(async { Ok(()) })
    }

    static PLAIN: ListenerDef = ListenerDef {
        kind: EventKind::Request,
        priority: 0,
        handler: ListenerFn::Sync(plain),
        name: "plain",
    };

    static LATER: ListenerDef = ListenerDef {
        kind: EventKind::Request,
        priority: 0,
        handler: ListenerFn::Async(later),
        name: "later",
    };

    #[test]
    fn calls_wait_only_for_an_awaited_listener_that_may_wait() {
        let mut l = Listeners::default();
        assert!(!l.awaits_any());
        // `post_response` runs after the write: never awaited by the call.
        l.add(
            EventKind::PostResponse,
            0,
            "later",
            Arc::new(DefListener(&LATER)),
        );
        assert!(!l.awaits_any());
        // Plain `#[rpc_listener]` functions and closures answer at once.
        l.add(
            EventKind::Request,
            0,
            "plain",
            Arc::new(DefListener(&PLAIN)),
        );
        let closure = FnListener(|_: &mut Event<'_>| Ok(()));
        l.add(EventKind::Response, 0, "closure", Arc::new(closure));
        assert!(!l.awaits_any());
        assert!(DefListener(&PLAIN).answers_at_once() && !DefListener(&LATER).answers_at_once());
        l.add(EventKind::Error, 0, "later", Arc::new(DefListener(&LATER)));
        assert!(l.awaits_any());
    }
}
