//! Optional sessions of the handshake era, and SSE event streams with resumption
//! (`Last-Event-ID`, SEP-1699).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use tokio::sync::watch;

use crate::context::Notifier;
use crate::error::RpcError;

/// Where sessions live: in memory for one instance, a shared store (e.g. Redis) for several.
pub trait SessionStore: std::any::Any + Send + Sync + 'static {
    /// Creates a session with this state (see [`SessionState`]) for `holder` (the share it
    /// counts against: the endpoint and the [`crate::Caller`]); returns its id. When the
    /// holder's share is full its own least recently used session goes (never-used ones
    /// first); when the store is full, one of the holder holding the most goes the same way.
    fn create<'a>(
        &'a self,
        state: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<String, RpcError>>;
    /// The negotiated revision of a live session, `None` if unknown or ended.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<String>, RpcError>>;
    /// Replaces a live session's state (the text `create` stored: see [`SessionState`]);
    /// returns whether the session existed.
    fn set<'a>(&'a self, id: &'a str, state: &'a str) -> BoxFuture<'a, Result<bool, RpcError>>;
    /// Ends a session; returns whether it existed.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, RpcError>>;

    /// The Redis connection the sessions live on, if they do ([`super::RedisSessions`]): any
    /// instance can then serve a session's request, so its resumable SSE streams are copied to
    /// that Redis too (any instance can resume them). `None` (the default) keeps streams in
    /// the memory of the instance that opened them.
    #[cfg(feature = "redis")]
    fn redis_store(&self) -> Option<&crate::core::RedisStore> {
        None
    }
}

/// What a store keeps of a session, as one short text, so a request reads it in one round
/// trip: the negotiated revision on the first line, then what the client chose since, a line
/// each (`log=debug`, `sub=<uri>`). URIs never hold a line break.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionState {
    /// The negotiated revision.
    pub version: String,
    /// Whose it is: the endpoint and the identity that made it (`core::tasks::owner`); a
    /// request from another endpoint or identity does not find it.
    pub owner: Option<String>,
    /// The level `logging/setLevel` chose, if any.
    pub log_level: Option<super::LogLevel>,
    /// The resources `resources/subscribe` watches.
    pub subscriptions: Vec<String>,
    /// The client capabilities `initialize` declared that the server may use (elicitation,
    /// sampling, roots), as compact JSON; `None` when none were kept.
    pub capabilities: Option<String>,
    /// When the session began, in milliseconds since the Unix epoch: kept only when metrics
    /// are recorded, so that the instance that ends it (any of them) times it.
    pub opened_ms: Option<u64>,
}

impl SessionState {
    /// Reads a stored text (unknown lines are ignored).
    pub fn parse(text: &str) -> Self {
        let mut lines = text.split('\n');
        let mut state = SessionState {
            version: lines.next().unwrap_or_default().to_owned(),
            ..SessionState::default()
        };
        for line in lines {
            if let Some(o) = line.strip_prefix("own=") {
                state.owner = Some(o.to_owned());
            } else if let Some(l) = line.strip_prefix("log=") {
                state.log_level = l.parse().ok();
            } else if let Some(u) = line.strip_prefix("sub=") {
                state.subscriptions.push(u.to_owned());
            } else if let Some(c) = line.strip_prefix("caps=") {
                state.capabilities = Some(c.to_owned());
            } else if let Some(at) = line.strip_prefix("at=") {
                state.opened_ms = at.parse().ok();
            }
        }
        state
    }

    /// The `at=` line of a stored text (see [`SessionState::opened_ms`]), read in place.
    pub(crate) fn opened_ms_of(text: &str) -> Option<u64> {
        text.split('\n')
            .skip(1)
            .find_map(|l| l.strip_prefix("at="))
            .and_then(|at| at.parse().ok())
    }

    /// The `caps=` line of a stored text, read in place (see [`SessionState::capabilities`]).
    pub(crate) fn capabilities_of(text: &str) -> Option<&str> {
        text.split('\n')
            .skip(1)
            .find_map(|l| l.strip_prefix("caps="))
    }

    /// What every request of a session reads of its stored text (see [`Head`]).
    pub(crate) fn head(text: &str) -> Head<'_> {
        // The first lines are the revision, the owner and the log level, in the order
        // `to_text` writes them: the reading stops at the first other line. The lines are
        // short: a byte loop finds their ends in fewer instructions than `split`'s searcher
        // takes to set up, and this runs on every request of a session.
        let mut rest = Some(text);
        let mut lines = std::iter::from_fn(|| {
            let text = rest?;
            match text.bytes().position(|b| b == b'\n') {
                Some(end) => {
                    rest = Some(&text[end + 1..]);
                    Some(&text[..end])
                }
                None => rest.take(),
            }
        });
        let mut head = Head {
            version: lines.next().unwrap_or_default(),
            owner: None,
            log_level: None,
        };
        for line in lines {
            if let Some(owner) = line.strip_prefix("own=") {
                head.owner = Some(owner);
            } else if let Some(level) = line.strip_prefix("log=") {
                head.log_level = level.parse().ok();
                break;
            } else {
                break;
            }
        }
        head
    }

    /// The text to store.
    pub fn to_text(&self) -> String {
        let mut s = self.version.clone();
        if let Some(o) = &self.owner {
            s.push_str("\nown=");
            s.push_str(o);
        }
        if let Some(l) = self.log_level {
            s.push_str("\nlog=");
            s.push_str(l.as_str());
        }
        for u in &self.subscriptions {
            s.push_str("\nsub=");
            s.push_str(u);
        }
        if let Some(c) = &self.capabilities {
            s.push_str("\ncaps=");
            s.push_str(c);
        }
        if let Some(at) = self.opened_ms {
            s.push_str("\nat=");
            s.push_str(&at.to_string());
        }
        s
    }
}

/// What every request of a session reads of its stored text, in place and in one pass over
/// its first lines: without the copies [`SessionState::parse`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head<'a> {
    /// The negotiated revision.
    pub version: &'a str,
    /// Whose it is (see [`SessionState::owner`]).
    pub owner: Option<&'a str>,
    /// The level `logging/setLevel` chose, if any.
    pub log_level: Option<super::LogLevel>,
}

impl Head<'_> {
    /// Whether the session belongs to the endpoint of `group` and `version` and to this
    /// identity: what every request of a session checks before anything else.
    pub(crate) fn owned_by(
        &self,
        group: &str,
        version: u32,
        identity: Option<&crate::context::Identity>,
    ) -> bool {
        let Some(rest) = self
            .owner
            .and_then(|o| o.strip_prefix(group))
            .and_then(|r| r.strip_prefix("/v"))
        else {
            return false;
        };
        let end = rest.bytes().position(|b| b == b' ').unwrap_or(rest.len());
        if rest[..end].parse::<u32>() != Ok(version) {
            return false;
        }
        let who = &rest[end..];
        match identity {
            Some(i) => who.strip_prefix(" sub:") == Some(i.subject.as_str()),
            None => who.is_empty(),
        }
    }
}

pub use crate::ids::random_id;

/// Sessions in this process's memory, bounded in number ([`crate::Limits::sessions`], 10 000
/// by default: when that many are live, [`SessionStore::create`] ends one of the holder
/// holding the most, never-used first, then the least recently used) and expiring after
/// [`crate::Limits::session_idle`] without use (1 hour by default; every request on a
/// session, every [`SessionStore::get`], starts it again).
///
/// Every operation is O(log n), amortized: sessions are indexed by id and by last use, and
/// expired ones are dropped from the least recently used end as new work comes in.
pub struct MemorySessions {
    max: usize,
    /// One holder's share of `max`.
    share: usize,
    idle_ttl: Duration,
    inner: Mutex<SessionMap>,
    /// Where the sessions that expire or give way are counted and timed, when telemetry is on
    /// (a count that a panic interrupts breaks nothing: the store stays unwind-safe).
    telemetry: Option<std::panic::AssertUnwindSafe<crate::core::telemetry::Telemetry>>,
}

#[derive(Default)]
struct SessionMap {
    by_id: HashMap<String, Session>,
    /// Use → id, oldest first. A session's key here can be older than its last use: a use
    /// only stamps the session, and the index catches up when the key reaches the front (see
    /// `expire`). Every call of a session then costs one lookup, not a remove and an insert.
    by_use: BTreeMap<Used, String>,
    /// Makes every `Used` unique.
    tick: u64,
    /// Each holder's session ids (at most its share).
    held: HashMap<Arc<str>, Vec<String>>,
    /// (sessions held, holder): who holds the most, found in O(log n).
    by_count: std::collections::BTreeSet<(usize, Arc<str>)>,
    /// The states of the sessions that expired or gave way since they were last counted
    /// (`None`: not counted).
    gone: Option<Vec<Arc<str>>>,
}

struct Session {
    /// The stored text (see [`SessionState`]), shared with the calls that read it.
    state: Arc<str>,
    last_use: Instant,
    /// Its key in `by_use`.
    key: Used,
    /// Whose share it counts against.
    holder: Arc<str>,
    /// Whether a request came after the one that made it.
    used: bool,
}

/// When a session was last used, as indexed (the tick breaks ties).
type Used = (Instant, u64);

impl SessionMap {
    fn stamp(&mut self, at: Instant) -> Used {
        self.tick = self.tick.wrapping_add(1);
        (at, self.tick)
    }

    /// Drops the sessions idle for `ttl` or longer, oldest first; stops at the first live one.
    /// A key older than `ttl` whose session was used since moves to that use: each key moves
    /// at most once per `ttl`, so the work is paid for by the uses that made it stale.
    fn expire(&mut self, now: Instant, ttl: Duration) {
        while let Some(entry) = self.by_use.first_entry() {
            if now.saturating_duration_since(entry.key().0) < ttl {
                break;
            }
            let id = entry.remove();
            let last_use = match self.by_id.get(&id) {
                Some(s) if now.saturating_duration_since(s.last_use) < ttl => s.last_use,
                _ => {
                    if let Some(s) = self.forget(&id) {
                        self.gone(s);
                    }
                    continue;
                }
            };
            let key = self.stamp(last_use);
            if let Some(s) = self.by_id.get_mut(&id) {
                s.key = key;
            }
            self.by_use.insert(key, id);
        }
    }
}

impl SessionMap {
    /// Drops a session from the id index and its holder's share (its `by_use` key is the
    /// caller's to remove).
    fn forget(&mut self, id: &str) -> Option<Session> {
        let s = self.by_id.remove(id)?;
        if let Some(ids) = self.held.get_mut(&s.holder) {
            let before = ids.len();
            ids.retain(|i| i != id);
            self.by_count.remove(&(before, s.holder.clone()));
            if ids.is_empty() {
                self.held.remove(&s.holder);
            } else {
                self.by_count.insert((ids.len(), s.holder.clone()));
            }
        }
        Some(s)
    }

    /// Ends the session of `holder` that matters least: never used first, then the least
    /// recently used. O(its share).
    fn evict_one_of(&mut self, holder: &Arc<str>) -> bool {
        let Some(ids) = self.held.get(holder) else {
            return false;
        };
        let victim = ids
            .iter()
            .filter_map(|id| self.by_id.get(id).map(|s| (s.used, s.last_use, id)))
            .min()
            .map(|(_, _, id)| id.clone());
        match victim.and_then(|id| self.forget(&id)) {
            Some(s) => {
                self.by_use.remove(&s.key);
                self.gone(s);
                true
            }
            None => false,
        }
    }

    /// A session ended without a `DELETE`: kept to be counted, when sessions are.
    fn gone(&mut self, s: Session) {
        if let Some(gone) = &mut self.gone {
            gone.push(s.state);
        }
    }

    /// The holder holding the most sessions.
    fn biggest(&self) -> Option<Arc<str>> {
        self.by_count.last().map(|(_, h)| h.clone())
    }
}

impl Default for MemorySessions {
    /// The default [`crate::Limits::sessions`] sessions, each expiring after the default
    /// [`crate::Limits::session_idle`] idle.
    fn default() -> Self {
        Self::new(
            crate::Limits::DEFAULT_SESSIONS,
            crate::Limits::DEFAULT_SESSION_IDLE,
        )
    }
}

impl MemorySessions {
    /// At most `max_sessions` live sessions (at least 1), each ending after `idle_ttl`
    /// without a request.
    pub fn new(max_sessions: usize, idle_ttl: Duration) -> Self {
        Self {
            max: max_sessions.max(1),
            share: max_sessions.max(1),
            idle_ttl,
            inner: Mutex::default(),
            telemetry: None,
        }
    }

    /// Counts and times the sessions that expire or give way (`mcp.server.session.duration`),
    /// as a `DELETE` is: with telemetry on only.
    pub(crate) fn counted(mut self, telemetry: &crate::core::telemetry::Telemetry) -> Self {
        if telemetry.is_on() {
            self.telemetry = Some(std::panic::AssertUnwindSafe(telemetry.clone()));
            if let Ok(m) = self.inner.get_mut() {
                m.gone = Some(Vec::new());
            }
        }
        self
    }

    /// Counts the sessions that ended since the last count (see [`Self::counted`]).
    fn count_gone(&self, m: &mut SessionMap) {
        let (Some(t), Some(gone)) = (&self.telemetry, &mut m.gone) else {
            return;
        };
        for state in gone.drain(..) {
            use crate::mcp::protocol::Era;
            let version = Era::handshake(&SessionState::parse(&state).version)
                .unwrap_or_else(Era::assumed)
                .version();
            let seconds = SessionState::opened_ms_of(&state).and_then(seconds_since);
            t.session_closed(version, "tcp", seconds);
        }
    }

    /// At most `per_holder` sessions of one holder (an endpoint's caller; at least 1, at most
    /// the store's bound).
    pub fn with_share(mut self, per_holder: usize) -> Self {
        self.share = per_holder.clamp(1, self.max);
        self
    }

    /// How many sessions are live (expired ones not yet dropped excluded).
    pub fn len(&self) -> usize {
        self.len_at(Instant::now())
    }

    /// Whether no session is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn len_at(&self, now: Instant) -> usize {
        self.inner
            .lock()
            .map(|mut m| {
                m.expire(now, self.idle_ttl);
                self.count_gone(&mut m);
                m.by_id.len()
            })
            .unwrap_or(0)
    }

    fn create_at(&self, state: &str, holder: &str, now: Instant) -> Result<String, RpcError> {
        let mut m = self
            .inner
            .lock()
            .map_err(|_| RpcError::internal("the session store is unavailable"))?;
        m.expire(now, self.idle_ttl);
        let holder: Arc<str> = match m.held.get_key_value(holder) {
            Some((k, _)) => k.clone(),
            None => Arc::from(holder),
        };
        // Its own share first, then the store's bound: whoever holds the most gives way.
        if m.held.get(&holder).map_or(0, Vec::len) >= self.share {
            m.evict_one_of(&holder);
        }
        if m.by_id.len() >= self.max {
            match m.biggest() {
                Some(big) => {
                    m.evict_one_of(&big);
                }
                None => return Err(too_many_sessions()),
            }
        }
        self.count_gone(&mut m);
        if m.by_id.len() >= self.max {
            return Err(too_many_sessions());
        }
        let id = random_id();
        let key = m.stamp(now);
        m.by_use.insert(key, id.clone());
        let ids = m.held.entry(holder.clone()).or_default();
        let before = ids.len();
        ids.push(id.clone());
        m.by_count.remove(&(before, holder.clone()));
        m.by_count.insert((before + 1, holder.clone()));
        m.by_id.insert(
            id.clone(),
            Session {
                state: Arc::from(state),
                last_use: now,
                key,
                holder,
                used: false,
            },
        );
        Ok(id)
    }

    /// A live session's state, shared (no copy); the use starts its idle time again.
    pub(crate) fn state_at(&self, id: &str, now: Instant) -> Option<Arc<str>> {
        let mut m = self.inner.lock().ok()?;
        m.expire(now, self.idle_ttl);
        self.count_gone(&mut m);
        // Live (`expire` dropped it otherwise).
        let s = m.by_id.get_mut(id)?;
        s.last_use = s.last_use.max(now);
        s.used = true;
        Some(s.state.clone())
    }

    fn set_now(&self, id: &str, state: &str) -> bool {
        self.inner
            .lock()
            .is_ok_and(|mut m| match m.by_id.get_mut(id) {
                Some(s) => {
                    s.state = Arc::from(state);
                    true
                }
                None => false,
            })
    }

    fn remove_now(&self, id: &str) -> bool {
        let Ok(mut m) = self.inner.lock() else {
            return false;
        };
        match m.forget(id) {
            Some(s) => {
                m.by_use.remove(&s.key);
                true
            }
            None => false,
        }
    }
}

/// The seconds from `opened_ms` (milliseconds since the epoch) to now: a session's duration.
pub(crate) fn seconds_since(opened_ms: u64) -> Option<f64> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(now.as_millis().saturating_sub(u128::from(opened_ms)) as f64 / 1000.0)
}

/// The error of a `create` on a full store (the transport answers 503 with its message).
pub(crate) fn too_many_sessions() -> RpcError {
    RpcError::internal("Service Unavailable: too many sessions, try again later")
}

/// A session's stored state: read in place from [`MemorySessions`] (no future, no copy),
/// else through [`SessionStore::get`].
pub(crate) async fn state_of(
    store: &dyn SessionStore,
    id: &str,
) -> Result<Option<Arc<str>>, RpcError> {
    let any: &dyn std::any::Any = store;
    match any.downcast_ref::<MemorySessions>() {
        Some(memory) => Ok(memory.state_at(id, Instant::now())),
        None => Ok(store.get(id).await?.map(Arc::from)),
    }
}

impl SessionStore for MemorySessions {
    fn create<'a>(
        &'a self,
        state: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<String, RpcError>> {
        Box::pin(std::future::ready(self.create_at(
            state,
            holder,
            Instant::now(),
        )))
    }
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<String>, RpcError>> {
        let state = self.state_at(id, Instant::now());
        Box::pin(std::future::ready(Ok(state.map(|s| s.to_string()))))
    }
    fn set<'a>(&'a self, id: &'a str, state: &'a str) -> BoxFuture<'a, Result<bool, RpcError>> {
        Box::pin(std::future::ready(Ok(self.set_now(id, state))))
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, RpcError>> {
        Box::pin(std::future::ready(Ok(self.remove_now(id))))
    }
}

#[derive(Default)]
struct StreamState {
    /// The last [`MAX_STREAM_EVENTS`] events; `frames[0]` is event number `first`.
    frames: std::collections::VecDeque<Bytes>,
    first: usize,
    done_at: Option<Instant>,
    /// Bumped when the server closes the client's current connection (SSE polling).
    disconnects: u64,
}

/// How many events a resumable stream keeps for `Last-Event-ID` (the newest): a long call's
/// progress cannot grow a stream without bound. A resumption from before them is refused.
pub const MAX_STREAM_EVENTS: usize = 1024;

/// One SSE response stream: frames are kept so a client can resume after a disconnect.
pub struct EventStream {
    id: Option<String>,
    retry_ms: u64,
    state: Mutex<StreamState>,
    changed: watch::Sender<u64>,
}

impl EventStream {
    /// A stream; with an id its events carry ids and it starts with a priming event.
    pub fn new(id: Option<String>, retry_ms: u64) -> Arc<Self> {
        let s = Arc::new(Self {
            id,
            retry_ms,
            state: Mutex::default(),
            changed: watch::channel(0).0,
        });
        if let Some(sid) = &s.id {
            let frame = format!("id: {sid}_0\nretry: {}\ndata: \n\n", s.retry_ms);
            s.push_frame(Bytes::from(frame));
        }
        s
    }

    fn push_frame(&self, frame: Bytes) {
        if let Ok(mut st) = self.state.lock() {
            if st.frames.len() == MAX_STREAM_EVENTS {
                st.frames.pop_front();
                st.first += 1;
            }
            st.frames.push_back(frame);
        }
        self.changed.send_modify(|v| *v += 1);
    }

    /// Appends one JSON-RPC message as an event.
    pub fn push_message(&self, json: &[u8]) {
        let seq = self.sent() as u64;
        let id = self.id.as_deref().map(|sid| (sid, seq));
        self.push_frame(crate::edge::write::sse_event(id, json));
    }

    /// Marks the stream complete: readers end after the last frame.
    pub fn finish(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.done_at = Some(Instant::now());
        }
        self.changed.send_modify(|v| *v += 1);
    }

    fn is_stale(&self, now: Instant) -> bool {
        self.state
            .lock()
            .map(|s| {
                s.done_at
                    .is_some_and(|d| now.saturating_duration_since(d) > STREAM_RETENTION)
            })
            .unwrap_or(true)
    }

    /// The number of the oldest event still kept.
    #[cfg(test)]
    fn oldest(&self) -> usize {
        self.state.lock().map(|s| s.first).unwrap_or(usize::MAX)
    }

    /// How many events (frames) the stream has sent so far.
    fn sent(&self) -> usize {
        self.state
            .lock()
            .map(|s| s.first + s.frames.len())
            .unwrap_or(0)
    }

    /// The stream's id (`None` for a stream that is not resumable).
    // Used by the Redis copy only.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Tells of every change (a frame, a closed connection, the end).
    // Used by the Redis copy only.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// What a copy of the stream elsewhere ([`SharedStreams`]) has to catch up on from event
    /// `from`: at most `max` of the kept frames with their numbers (starting past `from` when
    /// older ones were dropped from the window), how many times the server closed the client's
    /// connection, and whether the stream is done with nothing left after these frames.
    // Used by the Redis copy only.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn copy_from(&self, from: usize, max: usize) -> Copied {
        let Ok(st) = self.state.lock() else {
            // A poisoned stream has nothing more to give: the copy ends.
            return Copied {
                frames: Vec::new(),
                disconnects: 0,
                done: true,
            };
        };
        let start = from.max(st.first);
        let frames: Vec<(usize, Bytes)> = st
            .frames
            .iter()
            .enumerate()
            .skip(start - st.first)
            .take(max)
            .map(|(i, f)| (st.first + i, f.clone()))
            .collect();
        let end = start + frames.len();
        Copied {
            frames,
            disconnects: st.disconnects,
            done: st.done_at.is_some() && end >= st.first + st.frames.len(),
        }
    }

    /// The frames from index `from` on, until the stream is done or the server closes the
    /// connection.
    pub fn body(self: Arc<Self>, from: usize) -> axum::body::Body {
        let rx = self.changed.subscribe();
        let start = self.state.lock().map(|s| s.disconnects).unwrap_or(0);
        let stream =
            futures_util::stream::unfold((self, from, rx), move |(s, pos, mut rx)| async move {
                loop {
                    let next = {
                        let st = s.state.lock().ok()?;
                        // A reader more than the kept events behind skips to the oldest kept.
                        let pos = pos.max(st.first);
                        if let Some(f) = st.frames.get(pos - st.first) {
                            Some((f.clone(), pos))
                        } else if st.done_at.is_some() || st.disconnects != start {
                            return None;
                        } else {
                            None
                        }
                    };
                    if let Some((f, at)) = next {
                        return Some((Ok::<_, std::convert::Infallible>(f), (s, at + 1, rx)));
                    }
                    rx.changed().await.ok()?;
                }
            });
        axum::body::Body::from_stream(stream)
    }
}

impl Notifier for EventStream {
    fn notify(&self, message: Vec<u8>) {
        self.push_message(&message);
    }
    fn close_stream(&self) -> bool {
        if self.id.is_none() {
            return false;
        }
        if let Ok(mut st) = self.state.lock() {
            st.disconnects += 1;
        }
        self.changed.send_modify(|v| *v += 1);
        true
    }
}

/// A part of a stream for its copy elsewhere: see [`EventStream::copy_from`].
#[derive(Debug)]
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) struct Copied {
    /// Events with their numbers, oldest first.
    pub frames: Vec<(usize, Bytes)>,
    /// How many times the server closed the client's connection so far.
    pub disconnects: u64,
    /// The stream is finished and `frames` reach its last event.
    pub done: bool,
}

/// Where resumable streams are copied so that another instance can resume them (sessions in
/// Redis: their streams are too, see `mcp::redis_streams`). The call keeps running on the
/// instance that opened its stream; the copy serves resumptions that reach another one.
pub(crate) trait SharedStreams: Send + Sync + 'static {
    /// Starts copying a stream `session` just opened, in the background, until it finishes;
    /// never blocks or slows its writer.
    fn copy(&self, session: &str, stream: Arc<EventStream>);

    /// A stream this instance does not hold, from event `next` on (the events after a
    /// `Last-Event-ID`) and then its live events until it finishes: `None` when `session`
    /// does not own such a stream or `next` is refused (not sent yet, or out of the window
    /// of [`MAX_STREAM_EVENTS`]), an error when the shared store cannot be reached.
    fn resume<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        next: usize,
    ) -> BoxFuture<'a, Result<Option<axum::body::Body>, RpcError>>;
}

/// Reads a `Last-Event-ID` (`<stream>_<n>`): the stream id and the number of the next event.
/// `None` when it is not of that form or `n + 1` overflows.
pub(crate) fn parse_last_event_id(last_event_id: &str) -> Option<(&str, usize)> {
    let (sid, seq) = last_event_id.rsplit_once('_')?;
    let seq: usize = seq.parse().ok()?;
    Some((sid, seq.checked_add(1)?))
}

/// Whether a stream that has sent `sent` events can be resumed from event `next`: one it has
/// sent (or the next one), within the newest [`MAX_STREAM_EVENTS`] (what [`EventStream`]
/// keeps).
pub(crate) fn in_window(sent: usize, next: usize) -> bool {
    next <= sent && next >= sent.saturating_sub(MAX_STREAM_EVENTS)
}

/// What a `Last-Event-ID` finds: see [`EventStreams::find`].
pub(crate) enum Found<'a> {
    /// The stream is here: its events from this number on.
    Here(Arc<EventStream>, usize),
    /// The stream is not here: ask the shared copy for stream `.1` from event `.2` on.
    Elsewhere(Arc<dyn SharedStreams>, &'a str, usize),
    /// No resumption: another session's stream, an event out of the window or not sent, an
    /// id of another form, or (without a shared copy) a stream this instance does not hold.
    Refused,
}

/// What this instance knows of a `Last-Event-ID`.
enum Here {
    Found(Arc<EventStream>, usize),
    /// The stream is here, and the resumption refused (or the id is of no stream at all).
    Refused,
    /// No stream of that id here.
    Absent,
}

/// How long a finished stream can still be resumed: 5 minutes.
pub const STREAM_RETENTION: Duration = Duration::from_secs(300);

/// The resumable streams of an endpoint, by stream id, bounded per session
/// ([`crate::Limits::resumable_streams_per_session`]) and in total
/// ([`crate::Limits::resumable_streams`]).
///
/// Opening, resuming and forgetting a stream are O(1) (amortized): streams are found by id
/// and by session, never by a scan, and finished ones are dropped from the oldest end.
pub struct EventStreams {
    per_session: usize,
    total: usize,
    inner: Mutex<StreamMap>,
    /// Where streams are copied for other instances (sessions in Redis); `None` keeps them
    /// here only, at no cost.
    shared: Option<Arc<dyn SharedStreams>>,
}

#[derive(Default)]
struct StreamMap {
    /// Stream id → (owning session, stream).
    streams: HashMap<String, (String, Arc<EventStream>)>,
    /// Session → its stream ids, oldest first.
    by_session: HashMap<String, VecDeque<String>>,
    /// Every stream id, oldest first; ids already forgotten are skipped (and compacted away).
    order: VecDeque<String>,
}

impl StreamMap {
    /// Forgets one stream.
    fn forget(&mut self, id: &str) {
        let Some((session, _)) = self.streams.remove(id) else {
            return;
        };
        if let Some(ids) = self.by_session.get_mut(&session) {
            // At most `per_session` ids: a bounded search.
            if let Some(i) = ids.iter().position(|x| x == id) {
                ids.remove(i);
            }
            if ids.is_empty() {
                self.by_session.remove(&session);
            }
        }
    }

    /// Forgets the oldest stream; with `only_stale`, only if it finished long enough ago.
    fn forget_oldest(&mut self, now: Instant, only_stale: bool) -> bool {
        while let Some(id) = self.order.front() {
            match self.streams.get(id) {
                None => {
                    self.order.pop_front(); // already forgotten
                }
                Some((_, s)) if only_stale && !s.is_stale(now) => return false,
                Some(_) => {
                    if let Some(id) = self.order.pop_front() {
                        self.forget(&id);
                    }
                    return true;
                }
            }
        }
        false
    }
}

impl Default for EventStreams {
    /// The default [`crate::Limits::resumable_streams_per_session`] and
    /// [`crate::Limits::resumable_streams`].
    fn default() -> Self {
        Self::of(&crate::Limits::default())
    }
}

impl EventStreams {
    /// The bounds of `limits`.
    pub(crate) fn of(limits: &crate::Limits) -> Self {
        Self::with_limits(
            limits.resumable_streams_per_session,
            limits.resumable_streams,
        )
    }

    /// At most `per_session` resumable streams per session and `total` in all (each at
    /// least 1).
    pub fn with_limits(per_session: usize, total: usize) -> Self {
        Self {
            per_session: per_session.max(1),
            total: total.max(1),
            inner: Mutex::default(),
            shared: None,
        }
    }

    /// Also copies every stream to `shared`, so that other instances can resume it.
    pub(crate) fn with_shared(mut self, shared: Option<Arc<dyn SharedStreams>>) -> Self {
        self.shared = shared;
        self
    }

    /// How many streams can be resumed.
    pub fn len(&self) -> usize {
        self.inner.lock().map(|m| m.streams.len()).unwrap_or(0)
    }

    /// Whether no stream can be resumed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A new resumable stream owned by `session`.
    ///
    /// Past the bounds, the session's oldest stream (or the endpoint's oldest) is forgotten
    /// first: it runs on, but can no longer be resumed.
    pub fn open(&self, session: &str, retry_ms: u64) -> Arc<EventStream> {
        self.open_at(session, retry_ms, Instant::now())
    }

    fn open_at(&self, session: &str, retry_ms: u64, now: Instant) -> Arc<EventStream> {
        let id = random_id();
        let s = EventStream::new(Some(id.clone()), retry_ms);
        let Ok(mut m) = self.inner.lock() else {
            return s;
        };
        // Finished streams past their retention go first, oldest first (amortized O(1): each
        // stream is dropped once).
        while m.forget_oldest(now, true) {}
        let oldest_of_session = m
            .by_session
            .get(session)
            .filter(|ids| ids.len() >= self.per_session)
            .and_then(|ids| ids.front().cloned());
        if let Some(old) = oldest_of_session {
            m.forget(&old);
        }
        while m.streams.len() >= self.total && m.forget_oldest(now, false) {}
        // Ids forgotten by session live on in `order` until they reach its front: compact it
        // when they are half of it (amortized O(1)).
        if m.order.len() >= 2 * m.streams.len().max(self.total) {
            let StreamMap { streams, order, .. } = &mut *m;
            order.retain(|id| streams.contains_key(id));
        }
        m.order.push_back(id.clone());
        m.by_session
            .entry(session.to_owned())
            .or_default()
            .push_back(id.clone());
        m.streams.insert(id, (session.to_owned(), s.clone()));
        drop(m);
        if let Some(shared) = &self.shared {
            shared.copy(session, s.clone());
        }
        s
    }

    /// The stream and next frame index for a `Last-Event-ID`, if it belongs to `session` and
    /// names an event the stream has sent (`<stream>_<n>`; any other `n` is refused).
    pub fn resume(&self, session: &str, last_event_id: &str) -> Option<(Arc<EventStream>, usize)> {
        match self.find_here(session, last_event_id) {
            Here::Found(s, next) => Some((s, next)),
            Here::Refused | Here::Absent => None,
        }
    }

    /// Where a `Last-Event-ID` of `session` resumes: here when this instance holds the
    /// stream (answered as [`EventStreams::resume`] does), else from the shared copy if
    /// there is one.
    pub(crate) fn find<'a>(&self, session: &str, last_event_id: &'a str) -> Found<'a> {
        match self.find_here(session, last_event_id) {
            Here::Found(s, next) => Found::Here(s, next),
            Here::Refused => Found::Refused,
            Here::Absent => match (&self.shared, parse_last_event_id(last_event_id)) {
                (Some(shared), Some((sid, next))) => Found::Elsewhere(shared.clone(), sid, next),
                _ => Found::Refused,
            },
        }
    }

    fn find_here(&self, session: &str, last_event_id: &str) -> Here {
        let Some((sid, next)) = parse_last_event_id(last_event_id) else {
            return Here::Refused;
        };
        let s = {
            let Ok(m) = self.inner.lock() else {
                return Here::Absent;
            };
            let Some((owner, s)) = m.streams.get(sid) else {
                return Here::Absent;
            };
            if owner != session {
                return Here::Refused;
            }
            s.clone()
        };
        // Events already dropped from the window cannot be replayed: no resumption then.
        if in_window(s.sent(), next) {
            Here::Found(s, next)
        } else {
            Here::Refused
        }
    }

    /// Drops the streams of an ended session.
    pub fn end_session(&self, session: &str) {
        if let Ok(mut m) = self.inner.lock()
            && let Some(ids) = m.by_session.remove(session)
        {
            for id in ids {
                m.streams.remove(&id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_reads_the_stored_state_in_place_as_parse_does() {
        let state = SessionState {
            version: "2025-11-25".into(),
            owner: Some("mcp/v1 sub:ann".into()),
            log_level: Some(super::super::LogLevel::Warning),
            // A URI that looks like another line's key stays a subscription.
            subscriptions: vec!["caps=x".into(), "log=debug".into()],
            capabilities: Some(r#"{"elicitation":{}}"#.into()),
            opened_ms: Some(1_765_000_000_000),
        };
        let text = state.to_text();
        assert_eq!(SessionState::parse(&text), state);
        assert_eq!(SessionState::opened_ms_of(&text), Some(1_765_000_000_000));
        assert_eq!(
            SessionState::head(&text),
            Head {
                version: "2025-11-25",
                owner: Some("mcp/v1 sub:ann"),
                log_level: Some(super::super::LogLevel::Warning)
            }
        );
        assert_eq!(
            SessionState::capabilities_of(&text),
            Some(r#"{"elicitation":{}}"#)
        );
        let bare = Head {
            version: "2025-06-18",
            owner: None,
            log_level: None,
        };
        assert_eq!(SessionState::head("2025-06-18"), bare);
        // No owner line: nobody's.
        assert!(!bare.owned_by("mcp", 1, None));
        let head = SessionState::head(&text);
        let ann = crate::context::Identity::new("ann", [""; 0]);
        assert!(head.owned_by("mcp", 1, Some(&ann)));
        assert!(
            !head.owned_by("mcp", 1, None),
            "made by ann, asked anonymously"
        );
        assert!(
            !head.owned_by("mcp", 2, Some(&ann)),
            "another version's endpoint"
        );
        assert!(!head.owned_by("mc", 1, Some(&ann)), "another group");
        assert!(!head.owned_by(
            "mcp",
            1,
            Some(&crate::context::Identity::new("an", [""; 0]))
        ));
        assert_eq!(SessionState::capabilities_of("2025-06-18"), None);
    }

    const MIN: Duration = Duration::from_secs(60);

    #[test]
    fn sessions_expire_when_idle_and_every_get_restarts_the_clock() {
        let s = MemorySessions::new(10, MIN);
        let t0 = Instant::now();
        let id = s.create_at("2025-06-18", "h", t0).unwrap();
        assert_eq!(
            s.state_at(&id, t0 + 50 * SEC).as_deref(),
            Some("2025-06-18")
        );
        // Idle 50 s since the last get: alive, though 100 s old.
        assert_eq!(
            s.state_at(&id, t0 + 100 * SEC).as_deref(),
            Some("2025-06-18")
        );
        // Idle 60 s: gone, and dropped from both indexes.
        assert_eq!(s.state_at(&id, t0 + 160 * SEC), None);
        assert_eq!(s.len_at(t0 + 160 * SEC), 0);
        let m = s.inner.lock().unwrap();
        assert!(m.by_id.is_empty() && m.by_use.is_empty());
    }

    const SEC: Duration = Duration::from_secs(1);

    /// Uses only stamp a session; the index catches up as stale keys reach its front, and
    /// every session still ends exactly `ttl` after its last use, each in one index entry.
    #[test]
    fn the_use_index_catches_up_with_uses_and_expires_each_at_its_own_time() {
        let s = MemorySessions::new(10, MIN);
        let t0 = Instant::now();
        let ids: Vec<_> = (0..4)
            .map(|i| s.create_at("v", "h", t0 + i * SEC).unwrap())
            .collect();
        // Sessions 0 and 2 used often; 1 and 3 never again.
        for t in (5..=55).step_by(5) {
            for i in [0, 2] {
                assert!(s.state_at(&ids[i], t0 + t * SEC).is_some());
            }
        }
        // At 62 s: 1 (idle since 1 s) is gone, 3 (since 3 s) has a second left; 0 and 2 live.
        assert_eq!(s.len_at(t0 + 62 * SEC), 3);
        assert!(s.state_at(&ids[1], t0 + 62 * SEC).is_none());
        assert!(s.state_at(&ids[3], t0 + 62 * SEC).is_some());
        // At 114 s: 0 and 2 (last used at 55 s) have a second left; at 115 s they end, and 3,
        // used at 62 s, lives on.
        assert_eq!(s.len_at(t0 + 114 * SEC), 3);
        assert_eq!(s.len_at(t0 + 115 * SEC), 1);
        let m = s.inner.lock().unwrap();
        assert_eq!((m.by_id.len(), m.by_use.len()), (1, 1));
        assert!(m.by_id.contains_key(&ids[3]));
    }

    #[test]
    fn sessions_are_capped_and_an_end_or_expiry_frees_a_place() {
        let s = MemorySessions::new(2, MIN);
        let t0 = Instant::now();
        let a = s.create_at("v", "h", t0).unwrap();
        let b = s.create_at("v", "h", t0 + SEC).unwrap();
        assert_eq!(s.len_at(t0 + 2 * SEC), 2);
        // An ended session frees its place.
        assert!(s.remove_now(&a) && !s.remove_now(&a));
        let c = s.create_at("v", "h", t0 + 3 * SEC).unwrap();
        // So does an expired one (`b`, idle since t0 + 1 s); `c` is kept alive by a get.
        assert!(s.state_at(&c, t0 + 50 * SEC).is_some());
        assert!(s.create_at("v", "h", t0 + 61 * SEC).is_ok());
        assert!(s.state_at(&b, t0 + 61 * SEC).is_none());
        assert_eq!(s.len_at(t0 + 61 * SEC), 2);
    }

    #[test]
    fn a_flood_of_sessions_ends_only_the_flooders_own() {
        // 4 in all, 3 a holder.
        let s = MemorySessions::new(4, MIN).with_share(3);
        let t0 = Instant::now();
        let mine = s.create_at("v", "user", t0).unwrap();
        assert!(s.state_at(&mine, t0 + SEC).is_some(), "in use");
        let flood: Vec<_> = (0..50)
            .map(|i| s.create_at("v", "flood", t0 + SEC + i * SEC / 100).unwrap())
            .collect();
        // The flooder keeps its newest three; the user's session lives.
        assert!(s.state_at(&mine, t0 + 2 * SEC).is_some());
        let alive: Vec<_> = flood
            .iter()
            .filter(|id| s.state_at(id, t0 + 2 * SEC).is_some())
            .collect();
        assert_eq!(alive, flood[47..].iter().collect::<Vec<_>>());
        // At the ceiling (4), a newcomer takes a place from whoever holds the most: the
        // flooder's least recently used one, never the user's.
        let other = s.create_at("v", "other", t0 + 3 * SEC).unwrap();
        assert!(s.state_at(&other, t0 + 3 * SEC).is_some());
        assert!(s.state_at(&mine, t0 + 3 * SEC).is_some());
        assert_eq!(s.len_at(t0 + 3 * SEC), 4);
        // A holder's own: never-used first, then the least recently used.
        let s = MemorySessions::new(10, MIN).with_share(2);
        let used = s.create_at("v", "h", t0).unwrap();
        let fresh = s.create_at("v", "h", t0 + SEC).unwrap();
        assert!(s.state_at(&used, t0 + 2 * SEC).is_some());
        s.create_at("v", "h", t0 + 3 * SEC).unwrap();
        assert!(
            s.state_at(&fresh, t0 + 3 * SEC).is_none(),
            "never used: first to go"
        );
        assert!(s.state_at(&used, t0 + 3 * SEC).is_some());
        let m = s.inner.lock().unwrap();
        assert_eq!(
            (m.by_id.len(), m.by_use.len(), m.held["h"].len()),
            (2, 2, 2)
        );
    }

    #[test]
    fn the_defaults_are_documented_ones() {
        let s = MemorySessions::default();
        assert_eq!((s.max, s.idle_ttl), (10_000, Duration::from_secs(3600)));
        let e = EventStreams::default();
        assert_eq!((e.per_session, e.total), (16, 1_000));
    }

    #[tokio::test]
    async fn the_store_trait_creates_reads_and_ends() {
        let s: &dyn SessionStore = &MemorySessions::new(1, MIN);
        let id = s.create("2025-03-26", "h").await.unwrap();
        assert_eq!(s.get(&id).await.unwrap().as_deref(), Some("2025-03-26"));
        assert_eq!(s.get("nope").await.unwrap(), None);
        assert!(s.remove(&id).await.unwrap());
        assert_eq!(s.get(&id).await.unwrap(), None);
    }

    fn id_of(s: &EventStream) -> &str {
        s.id.as_deref().unwrap()
    }

    #[test]
    fn streams_per_session_are_bounded_oldest_forgotten_first() {
        let e = EventStreams::with_limits(2, 100);
        let t0 = Instant::now();
        let first = e.open_at("s1", 0, t0);
        let second = e.open_at("s1", 0, t0);
        let third = e.open_at("s1", 0, t0);
        let other = e.open_at("s2", 0, t0);
        assert_eq!(e.len(), 3);
        assert!(e.resume("s1", &format!("{}_0", id_of(&first))).is_none());
        for s in [&second, &third] {
            assert!(e.resume("s1", &format!("{}_0", id_of(s))).is_some());
        }
        // Another session's stream is not this one's.
        assert!(e.resume("s1", &format!("{}_0", id_of(&other))).is_none());
        assert!(e.resume("s2", &format!("{}_0", id_of(&other))).is_some());
        e.end_session("s1");
        assert_eq!(e.len(), 1);
        assert!(e.resume("s1", &format!("{}_0", id_of(&third))).is_none());
    }

    #[test]
    fn streams_are_bounded_in_total_and_the_queue_stays_compact() {
        let e = EventStreams::with_limits(1, 4);
        let t0 = Instant::now();
        let first = e.open_at("a", 0, t0);
        for i in 0..3 {
            e.open_at(&format!("s{i}"), 0, t0);
        }
        assert_eq!(e.len(), 4);
        let last = e.open_at("b", 0, t0);
        assert_eq!(e.len(), 4);
        assert!(e.resume("a", &format!("{}_0", id_of(&first))).is_none());
        assert!(e.resume("b", &format!("{}_0", id_of(&last))).is_some());
        // One session replacing its stream again and again: the order queue is compacted.
        for _ in 0..1000 {
            e.open_at("b", 0, t0);
        }
        let m = e.inner.lock().unwrap();
        assert_eq!(m.streams.len(), 4);
        assert!(m.order.len() <= 2 * 4 + 1, "{}", m.order.len());
        assert_eq!(m.by_session.len(), 4);
        assert!(m.by_session.values().all(|ids| ids.len() == 1));
    }

    #[test]
    fn finished_streams_are_forgotten_after_their_retention() {
        let e = EventStreams::default();
        let t0 = Instant::now();
        let done = e.open_at("s", 0, t0);
        let running = e.open_at("s", 0, t0);
        done.finish();
        // Within the retention, a finished stream can be resumed.
        e.open_at("t", 0, Instant::now() + STREAM_RETENTION / 2);
        assert!(e.resume("s", &format!("{}_0", id_of(&done))).is_some());
        e.open_at("t", 0, Instant::now() + STREAM_RETENTION + SEC);
        assert!(e.resume("s", &format!("{}_0", id_of(&done))).is_none());
        assert!(e.resume("s", &format!("{}_0", id_of(&running))).is_some());
    }

    #[test]
    fn last_event_ids_past_what_was_sent_are_refused() {
        let e = EventStreams::default();
        let s = e.open("s", 0);
        s.push_message(b"{}");
        let sid = id_of(&s).to_owned();
        // Sent: the priming event (0) and one message (1).
        assert_eq!(e.resume("s", &format!("{sid}_0")).map(|r| r.1), Some(1));
        assert_eq!(e.resume("s", &format!("{sid}_1")).map(|r| r.1), Some(2));
        for bad in [
            format!("{sid}_2"),
            format!("{sid}_{}", usize::MAX),
            format!("{sid}_18446744073709551615"),
            format!("{sid}_99999999999999999999999"),
            format!("{sid}_-1"),
            format!("{sid}_"),
            sid.clone(),
            "_0".to_owned(),
        ] {
            assert!(e.resume("s", &bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_stream_keeps_only_its_newest_events() {
        let e = EventStreams::default();
        let s = e.open("s", 0);
        for _ in 0..MAX_STREAM_EVENTS + 10 {
            s.push_message(b"{}");
        }
        let sid = id_of(&s).to_owned();
        // Events 0..=10 (the priming one and the first ten messages) are gone.
        assert_eq!(s.sent(), MAX_STREAM_EVENTS + 11);
        assert_eq!(s.oldest(), 11);
        assert!(e.resume("s", &format!("{sid}_9")).is_none());
        assert_eq!(e.resume("s", &format!("{sid}_10")).map(|r| r.1), Some(11));
        let last = MAX_STREAM_EVENTS + 9;
        assert_eq!(
            e.resume("s", &format!("{sid}_{last}")).map(|r| r.1),
            Some(last + 1)
        );
        // The newest event still carries its own number.
        let newest = s.state.lock().unwrap().frames.back().cloned().unwrap();
        let text = String::from_utf8(newest.to_vec()).unwrap();
        assert!(
            text.starts_with(&format!("id: {sid}_{}\n", last + 1)),
            "{text}"
        );
    }

    #[test]
    fn last_event_ids_parse_to_the_stream_and_the_next_event() {
        assert_eq!(parse_last_event_id("abc_0"), Some(("abc", 1)));
        assert_eq!(parse_last_event_id("a_b_7"), Some(("a_b", 8)));
        for bad in [
            "abc",
            "abc_",
            "abc_-1",
            "abc_x",
            &format!("abc_{}", usize::MAX),
        ] {
            assert_eq!(parse_last_event_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_window_is_what_a_stream_keeps() {
        // The same answers as a stream's own bounds, around both edges.
        let e = EventStreams::default();
        let s = e.open("s", 0);
        for _ in 0..MAX_STREAM_EVENTS + 10 {
            s.push_message(b"{}");
        }
        let sent = s.sent();
        for next in [0, 1, 10, 11, 12, sent - 1, sent, sent + 1] {
            let kept = next <= s.sent() && next >= s.oldest();
            assert_eq!(in_window(sent, next), kept, "{next}");
        }
        assert!(in_window(0, 0) && in_window(3, 0) && !in_window(3, 4));
    }

    #[test]
    fn a_copy_reads_the_kept_frames_in_parts_and_sees_closes_and_the_end() {
        let s = EventStream::new(Some("x".into()), 0);
        for _ in 0..4 {
            s.push_message(b"{}");
        }
        let part = s.copy_from(0, 3);
        let numbers: Vec<usize> = part.frames.iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers, [0, 1, 2]);
        assert!(part.frames[0].1.starts_with(b"id: x_0\n"));
        assert!(!part.done);
        s.close_stream();
        s.finish();
        // Done only with the last frame in the part.
        let part = s.copy_from(3, 1);
        assert_eq!(
            (part.frames.len(), part.disconnects, part.done),
            (1, 1, false)
        );
        let part = s.copy_from(3, 10);
        assert_eq!((part.frames.len(), part.done), (2, true));
        assert!(s.copy_from(5, 10).done);
        // Past the window, a copy starts at the oldest kept frame.
        let s = EventStream::new(Some("y".into()), 0);
        for _ in 0..MAX_STREAM_EVENTS + 5 {
            s.push_message(b"{}");
        }
        assert_eq!(s.copy_from(2, 1).frames[0].0, 6);
    }

    /// A shared store that remembers what it was given and holds no stream.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<(String, String)>>);

    impl SharedStreams for Recorder {
        fn copy(&self, session: &str, stream: Arc<EventStream>) {
            let id = stream.id().unwrap_or_default().to_owned();
            self.0.lock().unwrap().push((session.to_owned(), id));
        }
        fn resume<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: usize,
        ) -> BoxFuture<'a, Result<Option<axum::body::Body>, RpcError>> {
            Box::pin(std::future::ready(Ok(None)))
        }
    }

    #[test]
    fn streams_here_resume_here_and_others_go_to_the_shared_copy() {
        let shared = Arc::new(Recorder::default());
        let e = EventStreams::default().with_shared(Some(shared.clone()));
        let s = e.open("s", 0);
        let sid = id_of(&s).to_owned();
        assert_eq!(*shared.0.lock().unwrap(), [("s".to_owned(), sid.clone())]);
        assert!(matches!(
            e.find("s", &format!("{sid}_0")),
            Found::Here(_, 1)
        ));
        // Here but refused: not asked elsewhere.
        for refused in [format!("{sid}_1"), format!("{sid}_")] {
            assert!(matches!(e.find("s", &refused), Found::Refused), "{refused}");
        }
        assert!(matches!(e.find("t", &format!("{sid}_0")), Found::Refused));
        // Not here: the shared copy is asked, from the next event.
        match e.find("s", "other_4") {
            Found::Elsewhere(_, stream, next) => assert_eq!((stream, next), ("other", 5)),
            _ => panic!("not asked elsewhere"),
        }
        assert!(matches!(e.find("s", "other_x"), Found::Refused));
        // Without a shared copy, a stream not here is refused.
        assert!(matches!(
            EventStreams::default().find("s", "other_4"),
            Found::Refused
        ));
    }
}
