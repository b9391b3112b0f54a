//! Resumable SSE streams copied to Redis, beside the sessions kept there, so that a
//! `Last-Event-ID` resumes a stream on any instance sharing the Redis. The call keeps running
//! on the instance that opened its stream; that instance also keeps serving resumptions from
//! its memory.
//!
//! Keys (under the store's prefix, after the sessions' hash tag `{<prefix>mcp:sessions}`):
//!
//! - `mcp:stream:<id>`: a Redis Stream of the stream's events. Event `n` is entry `n-1` (its
//!   SSE frame, field `m`); after event `n` come markers `n-2`, `n-3`…: `c` when the server
//!   closed the client's connection (SSE polling), `d` when the stream finished. Trimmed to the
//!   newest [`MAX_ENTRIES`] entries (`MAXLEN ~`), which keeps at least the
//!   [`MAX_STREAM_EVENTS`] newest events; it expires [`RUNNING_TTL`] after its last write while
//!   the call runs (so a crashed instance's streams go), [`STREAM_RETENTION`] after it finished.
//! - `mcp:session:<sid>:streams`: the session's stream ids, oldest first, at most
//!   [`crate::Limits::default().resumable_streams_per_session`]: a stream is resumed only by a session that lists it (past the
//!   bound, the oldest stream is deleted).
//! - `mcp:streams`: every stream id by the time it opened, at most [`MAX_STREAMS`] over all
//!   instances sharing the prefix (past it, the oldest stream is deleted).
//!
//! Writes are one Lua script per batch of events, run by one task per stream that reads the
//! stream as a client would (in order, never blocking the call that writes it); a Redis
//! failure only delays the copy (retried), or ends it, never the stream on its own instance.
//! The scripts touch several keys, and ending a session deletes its streams: on Redis Cluster
//! they are in the one slot of the sessions' hash tag.

use crate::core::redis::Group;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use bytes::Bytes;
use futures_util::future::BoxFuture;

use super::session::{
    Copied, EventStream, MAX_STREAM_EVENTS, STREAM_RETENTION, SharedStreams, in_window,
};
use crate::core::RedisStore;
use crate::error::RpcError;

/// How long a running stream's copy lives after its last write: its task writes at least
/// every [`HEARTBEAT`], so only the copy of a stream whose instance died expires.
pub(crate) const RUNNING_TTL: Duration = Duration::from_secs(30);

/// How often the copy of an idle running stream is kept alive.
const HEARTBEAT: Duration = Duration::from_secs(10);

/// How long a failed write waits before it is tried again (the events wait in the stream's
/// own window meanwhile).
const RETRY: Duration = Duration::from_secs(1);

/// The most events written in one round trip.
const BATCH: usize = 128;

/// The most entries read in one round trip.
const PAGE: usize = 128;

/// How long one read of a followed stream waits for news in Redis before checking that the
/// stream still exists.
const FOLLOW_BLOCK: Duration = Duration::from_secs(5);

/// How long a resumption waits for an event its client has already seen (sent by the owning
/// instance) to reach Redis: the copy runs a few milliseconds behind the stream.
const LAG_WAIT: Duration = Duration::from_secs(1);

/// How often a resumption waiting for such an event looks again.
const LAG_POLL: Duration = Duration::from_millis(50);

/// How many entries a stream keeps (`MAXLEN ~`, so at least that many): a close marker is
/// written at most once after each event and the done marker once, so this keeps at least the
/// newest [`MAX_STREAM_EVENTS`] events.
pub(crate) const MAX_ENTRIES: usize = 2 * MAX_STREAM_EVENTS + 2;

/// Writes one batch of a stream: KEYS = stream, session's list, index; ARGV = stream id,
/// `1` on the first write (opens the stream: listed for its session and in the index, the
/// oldest ones past the bounds deleted), TTL in milliseconds, per-session bound, total
/// bound, a stream's longest life in milliseconds, the stream keys' prefix, `MAXLEN`, then
/// (entry id, field, value) triples. Entries not after the stream's last one (a batch sent
/// again after a lost reply) are skipped. Returns 0 when the stream is gone (deleted past a
/// bound, expired, or Redis lost it): the copy stops.
const WRITE_STREAM: &str = r"
if redis.replicate_commands then redis.replicate_commands() end
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[2] ~= '1' then return 0 end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local life = tonumber(ARGV[6])
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. (now - life))
  redis.call('RPUSH', KEYS[2], ARGV[1])
  while redis.call('LLEN', KEYS[2]) > tonumber(ARGV[4]) do
    local old = redis.call('LPOP', KEYS[2])
    redis.call('DEL', ARGV[7] .. old)
    redis.call('ZREM', KEYS[3], old)
  end
  while redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) do
    local old = redis.call('ZPOPMIN', KEYS[3])
    redis.call('DEL', ARGV[7] .. old[1])
  end
  redis.call('ZADD', KEYS[3], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[3], life)
  redis.call('PEXPIRE', KEYS[2], life)
end
local function split(id)
  local dash = string.find(id, '-', 1, true)
  return tonumber(string.sub(id, 1, dash - 1)), tonumber(string.sub(id, dash + 1))
end
local lms, lseq = -1, 0
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if top[1] then lms, lseq = split(top[1][1]) end
for i = 9, #ARGV, 3 do
  local ms, seq = split(ARGV[i])
  if ms > lms or (ms == lms and seq > lseq) then
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[8], ARGV[i], ARGV[i + 1], ARGV[i + 2])
    lms, lseq = ms, seq
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

/// The field of an event's entry (its SSE frame).
const EVENT: &str = "m";
/// The field of a marker: the server closed the client's connection.
const CLOSE: &str = "c";
/// The field of the last marker: the stream finished.
const DONE: &str = "d";

/// Resumable streams copied to Redis (see the module documentation for the keys).
#[derive(Clone)]
pub(crate) struct RedisStreams {
    store: RedisStore,
    write: Arc<redis::Script>,
    per_session: usize,
    total: usize,
    /// A stream's longest life from its opening: its call's ([`crate::Limits::sse_timeout`]),
    /// a late write's, then its retention. The session lists and the index live that long
    /// after their last opening.
    life_ms: u64,
}

impl RedisStreams {
    /// Streams on `store`'s connection and prefix, within `limits` (resumable streams per
    /// session and in all; `sse_timeout`, how long a call may run).
    pub(crate) fn new(store: RedisStore, limits: &crate::Limits) -> Self {
        let life = limits
            .sse_timeout
            .saturating_add(RUNNING_TTL)
            .saturating_add(STREAM_RETENTION);
        Self {
            store,
            write: Arc::new(redis::Script::new(WRITE_STREAM)),
            per_session: limits.resumable_streams_per_session,
            total: limits.resumable_streams,
            life_ms: millis(life),
        }
    }

    /// A key of the sessions' group (streams are ended with their session, in one script).
    fn k(&self, name: &str) -> String {
        self.store.grouped(Group::Sessions, name)
    }

    fn stream_key(&self, id: &str) -> String {
        self.k(&format!("mcp:stream:{id}"))
    }

    fn list_key(&self, session: &str) -> String {
        self.k(&format!("mcp:session:{session}:streams"))
    }

    /// Writes one batch; `Ok(false)` when the stream is gone from Redis.
    async fn write(
        &self,
        id: &str,
        session: &str,
        open: bool,
        ttl: Duration,
        entries: &[Entry],
    ) -> redis::RedisResult<bool> {
        let mut con = self.store.connection();
        let mut call = self.write.key(self.stream_key(id));
        call.key(self.list_key(session))
            .key(self.k(STREAM_INDEX))
            .arg(id)
            .arg(u8::from(open))
            .arg(millis(ttl))
            .arg(self.per_session)
            .arg(self.total)
            .arg(self.life_ms)
            .arg(self.k("mcp:stream:"))
            .arg(MAX_ENTRIES);
        for e in entries {
            call.arg(e.id.to_string())
                .arg(e.field)
                .arg(e.value.as_ref());
        }
        let written: i64 = call.invoke_async(&mut con).await?;
        Ok(written == 1)
    }

    /// Copies `stream` until it finishes (and is written whole), its copy is gone from Redis,
    /// or Redis fails for longer than a running copy lives.
    async fn run_copy(self, session: String, id: String, stream: Arc<EventStream>) {
        let mut changes = stream.subscribe();
        let mut at = Copier::default();
        let mut failing: Option<Instant> = None;
        let mut heartbeat = false;
        loop {
            // Seen before reading, so a change after the read wakes the wait below.
            changes.borrow_and_update();
            let part = stream.copy_from(at.next, BATCH);
            let full = part.frames.len() == BATCH;
            let (entries, after) = at.plan(&part);
            if !entries.is_empty() || heartbeat || !at.opened {
                let ttl = if after.done {
                    STREAM_RETENTION
                } else {
                    RUNNING_TTL
                };
                match self.write(&id, &session, !at.opened, ttl, &entries).await {
                    Ok(true) => {
                        at = after;
                        at.opened = true;
                        failing = None;
                        heartbeat = false;
                    }
                    Ok(false) => return,
                    Err(e) => {
                        let since = *failing.get_or_insert_with(|| {
                            tracing::warn!(error = %e, stream = %id, "SSE stream not copied to Redis (retrying)");
                            Instant::now()
                        });
                        // Past this, the copy has expired: another instance cannot resume
                        // it anyway.
                        if since.elapsed() > RUNNING_TTL {
                            tracing::warn!(stream = %id, "SSE stream no longer copied to Redis");
                            return;
                        }
                        tokio::time::sleep(RETRY).await;
                        continue;
                    }
                }
            } else {
                at = after;
            }
            if at.done {
                return;
            }
            if full {
                continue;
            }
            match tokio::time::timeout(HEARTBEAT, changes.changed()).await {
                Ok(Ok(())) => {}
                // The stream is held here, so its sender lives: this does not happen.
                Ok(Err(_)) => return,
                Err(_) => heartbeat = true,
            }
        }
    }

    async fn resume_inner(
        &self,
        session: &str,
        stream: &str,
        next: usize,
    ) -> Result<Option<Body>, RpcError> {
        // Only ids this runtime makes name a stream (and only a stream's key is read).
        if !is_stream_id(stream) {
            return Ok(None);
        }
        let key = self.stream_key(stream);
        let list = self.list_key(session);
        let mut con = self.store.connection();
        // The client may have read an event (or the stream's first) from the owning instance
        // a moment before its copy reached Redis: a stream not there yet, or not that far, is
        // looked at again for a while.
        let until = Instant::now() + LAG_WAIT;
        let tail = loop {
            let (owned, top): (Option<i64>, Vec<RawEntry>) = redis::pipe()
                .cmd("LPOS")
                .arg(&list)
                .arg(stream)
                .cmd("XREVRANGE")
                .arg(&key)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(1)
                .query_async(&mut con)
                .await
                .map_err(stream_err)?;
            let tail = top.first().and_then(Tail::of);
            match tail {
                // Listed with its first write: a stream there but not listed is another
                // session's (or was dropped past the session's bound).
                Some(_) if owned.is_none() => return Ok(None),
                Some(t) if next <= t.sent() || t.done => break t,
                _ if Instant::now() >= until => match tail {
                    Some(t) => break t,
                    None => return Ok(None),
                },
                _ => tokio::time::sleep(LAG_POLL).await,
            }
        };
        if !in_window(tail.sent(), next) {
            return Ok(None);
        }
        // From the markers after the client's last event: a stream that finished right
        // after it ends the response at once.
        let seen = next.saturating_sub(1);
        let from = EntryId { event: seen, k: 2 };
        let page: Vec<RawEntry> = redis::cmd("XRANGE")
            .arg(&key)
            .arg(from.to_string())
            .arg("+")
            .arg("COUNT")
            .arg(PAGE)
            .query_async(&mut con)
            .await
            .map_err(stream_err)?;
        let entries: VecDeque<Entry> = page.iter().filter_map(Entry::of).collect();
        // Event `next` must be there (unless nothing was sent after the id): when the window
        // lost it (trimmed, or a failed copy left a gap), the stream cannot be resumed.
        match entries.iter().find(|e| e.field == EVENT) {
            Some(e) if e.id != EntryId::event(next) => return Ok(None),
            None if next < tail.sent() => return Ok(None),
            _ => {}
        }
        let follow = Follow {
            reader: Reader::new(next, tail.id),
            more: page.len() == PAGE,
            // Read after: XREAD is exclusive, and the client has event `next - 1`.
            cursor: page
                .last()
                .map_or_else(|| EntryId::event(seen).to_string(), |(id, _)| id.clone()),
            queue: entries,
            store: self.store.clone(),
            key,
            live: None,
        };
        Ok(Some(follow.body()))
    }
}

impl SharedStreams for RedisStreams {
    fn copy(&self, session: &str, stream: Arc<EventStream>) {
        // Outside a runtime nothing can be written (streams open within requests).
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Some(id) = stream.id().map(str::to_owned) else {
            return;
        };
        rt.spawn(self.clone().run_copy(session.to_owned(), id, stream));
    }

    fn resume<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        next: usize,
    ) -> BoxFuture<'a, Result<Option<Body>, RpcError>> {
        Box::pin(self.resume_inner(session, stream, next))
    }
}

/// Every stream id by opening time (Redis `TIME`, milliseconds).
pub(crate) const STREAM_INDEX: &str = "mcp:streams";

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// Whether `id` can be a stream id ([`crate::ids::random_id`]: hex).
fn is_stream_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

fn stream_err(e: redis::RedisError) -> RpcError {
    // The Redis error goes to the log; the client learns only that the store is down.
    tracing::warn!(error = %e, "MCP stream store unavailable");
    RpcError::internal("Stream store unavailable, try again later")
}

/// An entry as Redis returns it: its id and its fields and values, flat.
type RawEntry = (String, Vec<Vec<u8>>);

/// A stream entry's id: event `n` is `n-1`, the markers after it `n-2`, `n-3`…
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct EntryId {
    event: usize,
    k: u64,
}

impl EntryId {
    fn event(n: usize) -> Self {
        Self { event: n, k: 1 }
    }

    fn parse(s: &str) -> Option<Self> {
        let (event, k) = s.split_once('-')?;
        Some(Self {
            event: event.parse().ok()?,
            k: k.parse().ok()?,
        })
    }
}

impl std::fmt::Display for EntryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.event, self.k)
    }
}

/// One entry, written or read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    id: EntryId,
    field: &'static str,
    value: Bytes,
}

impl Entry {
    /// An entry read from Redis; `None` for one this runtime does not write.
    fn of(raw: &RawEntry) -> Option<Self> {
        let id = EntryId::parse(&raw.0)?;
        let mut fields = raw.1.iter();
        let field = match fields.next()?.as_slice() {
            b"m" => EVENT,
            b"c" => CLOSE,
            b"d" => DONE,
            _ => return None,
        };
        let value = Bytes::from(fields.next().cloned().unwrap_or_default());
        Some(Self { id, field, value })
    }
}

/// The newest entry of a stream.
#[derive(Debug, Clone, Copy)]
struct Tail {
    id: EntryId,
    done: bool,
}

impl Tail {
    fn of(raw: &RawEntry) -> Option<Self> {
        let e = Entry::of(raw)?;
        Some(Self {
            id: e.id,
            done: e.field == DONE,
        })
    }

    /// How many events the stream has sent (every entry follows an event).
    fn sent(&self) -> usize {
        self.id.event.saturating_add(1)
    }
}

/// Where a copy stands: which entries the next part of its stream becomes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Copier {
    /// The next event to copy.
    next: usize,
    /// The last event copied and the number of the next marker after it.
    last: Option<(usize, u64)>,
    /// The server's closes of the client's connection seen so far.
    disconnects: u64,
    /// The first write (which opens the stream in Redis) succeeded.
    opened: bool,
    /// The stream finished and is copied whole.
    done: bool,
}

impl Copier {
    /// The entries of `part` and where the copy stands once they are written. Closes since
    /// the last part become one marker (a reader only needs to know that its connection was
    /// closed), after the part's events.
    fn plan(&self, part: &Copied) -> (Vec<Entry>, Copier) {
        let mut after = self.clone();
        let mut entries = Vec::with_capacity(part.frames.len() + 2);
        for (n, frame) in &part.frames {
            if *n < self.next {
                continue;
            }
            entries.push(Entry {
                id: EntryId::event(*n),
                field: EVENT,
                value: frame.clone(),
            });
            after.next = n + 1;
            after.last = Some((*n, 2));
        }
        let mut marker = |field: &'static str, after: &mut Copier| {
            if let Some((n, k)) = after.last {
                entries.push(Entry {
                    id: EntryId { event: n, k },
                    field,
                    value: Bytes::new(),
                });
                after.last = Some((n, k + 1));
            }
        };
        if part.disconnects != self.disconnects {
            after.disconnects = part.disconnects;
            marker(CLOSE, &mut after);
        }
        if part.done {
            marker(DONE, &mut after);
            after.done = true;
        }
        (entries, after)
    }
}

/// What a resumed reader does with an entry.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// Sends this frame.
    Send(Bytes),
    /// Goes on to the next entry.
    Skip,
    /// Ends the response: the stream finished, the server closed the connection, or an event
    /// is missing (the client resumes again, or learns that it cannot).
    End,
}

/// A resumption on another instance: which events it sends, and when it ends.
#[derive(Debug)]
struct Reader {
    /// The next event to send.
    expected: usize,
    /// The newest entry when the resumption began: closes up to it are older than this
    /// connection.
    began: EntryId,
}

impl Reader {
    fn new(next: usize, began: EntryId) -> Self {
        Self {
            expected: next,
            began,
        }
    }

    /// Entries come in order, each once.
    fn step(&mut self, e: Entry) -> Step {
        match e.field {
            EVENT if e.id.event == self.expected => {
                self.expected += 1;
                Step::Send(e.value)
            }
            EVENT if e.id.event < self.expected => Step::Skip,
            // A gap: the copy lost events.
            EVENT => Step::End,
            CLOSE if e.id > self.began => Step::End,
            DONE => Step::End,
            _ => Step::Skip,
        }
    }
}

/// The body of a resumption on another instance: the events read so far, then the stream's
/// live events (read with `XREAD BLOCK` on a connection of its own, since a blocked read
/// would hold up every command on the shared one).
struct Follow {
    reader: Reader,
    queue: VecDeque<Entry>,
    /// The last read filled a page: more is there, read without waiting.
    more: bool,
    /// The id of the last entry read (or, before any, of the first one to read).
    cursor: String,
    store: RedisStore,
    key: String,
    live: Option<crate::core::redis_conn::Conn>,
}

impl Follow {
    fn body(self) -> Body {
        let stream = futures_util::stream::unfold(self, |mut f| async move {
            loop {
                if let Some(e) = f.queue.pop_front() {
                    match f.reader.step(e) {
                        Step::Send(frame) => {
                            return Some((Ok::<_, std::convert::Infallible>(frame), f));
                        }
                        Step::Skip => continue,
                        Step::End => return None,
                    }
                }
                if let Err(e) = f.fetch().await {
                    // The client sees its stream end, and resumes again.
                    tracing::warn!(error = %e, "resumed SSE stream ended: Redis failed");
                    return None;
                }
                if f.queue.is_empty() && !f.more && !f.exists().await {
                    return None;
                }
            }
        });
        Body::from_stream(stream)
    }

    /// Reads the entries after the last one read: at once while pages are full, else
    /// waiting up to [`FOLLOW_BLOCK`] for news.
    async fn fetch(&mut self) -> redis::RedisResult<()> {
        let cursor = self.cursor.clone();
        let mut cmd = redis::cmd("XREAD");
        cmd.arg("COUNT").arg(PAGE);
        let got: Option<Vec<(Vec<u8>, Vec<RawEntry>)>> = if self.more {
            cmd.arg("STREAMS").arg(&self.key).arg(&cursor);
            cmd.query_async(&mut self.store.connection()).await?
        } else {
            let con = match &mut self.live {
                Some(con) => con,
                None => {
                    let con = self
                        .store
                        .dedicated(FOLLOW_BLOCK + Duration::from_secs(2))
                        .await?;
                    self.live.insert(con)
                }
            };
            cmd.arg("BLOCK")
                .arg(millis(FOLLOW_BLOCK))
                .arg("STREAMS")
                .arg(&self.key)
                .arg(&cursor);
            cmd.query_async(con).await?
        };
        let raw: Vec<RawEntry> = got
            .into_iter()
            .flatten()
            .flat_map(|(_, entries)| entries)
            .collect();
        self.more = raw.len() == PAGE;
        if let Some((id, _)) = raw.last() {
            self.cursor.clone_from(id);
        }
        self.queue.extend(raw.iter().filter_map(Entry::of));
        Ok(())
    }

    /// Whether the stream is still in Redis (a stream whose instance died expires).
    async fn exists(&self) -> bool {
        let n: redis::RedisResult<i64> = redis::cmd("EXISTS")
            .arg(&self.key)
            .query_async(&mut self.store.connection())
            .await;
        matches!(n, Ok(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key of the sessions' group, as an unprefixed store names it.
    fn sk(name: &str) -> String {
        RedisStore::connect("redis://127.0.0.1:1")
            .unwrap()
            .grouped(Group::Sessions, name)
    }
    use crate::context::Notifier as _;
    use crate::mcp::redis_sessions::tests::Redis;
    use crate::mcp::session::{EventStreams, Found};

    /// The default bounds, calls running at most 5 minutes.
    fn test_limits() -> crate::Limits {
        crate::Limits {
            sse_timeout: Duration::from_secs(300),
            ..crate::Limits::default()
        }
    }

    #[test]
    fn entry_ids_read_write_and_sort_as_redis_does() {
        let id = EntryId { event: 12, k: 3 };
        assert_eq!(id.to_string(), "12-3");
        assert_eq!(EntryId::parse("12-3"), Some(id));
        for bad in ["12", "-3", "12-", "a-1", "1-b"] {
            assert_eq!(EntryId::parse(bad), None, "{bad}");
        }
        // An event, then the markers after it, then the next event.
        assert!(EntryId::event(12) < id && id < EntryId::event(13));
        assert!(EntryId { event: 9, k: 9 } < EntryId::event(10));
    }

    fn frame(n: usize) -> Bytes {
        Bytes::from(format!("id: s_{n}\n\n"))
    }

    fn part(from: usize, to: usize, disconnects: u64, done: bool) -> Copied {
        Copied {
            frames: (from..to).map(|n| (n, frame(n))).collect(),
            disconnects,
            done,
        }
    }

    fn ids(entries: &[Entry]) -> Vec<(String, &'static str)> {
        entries
            .iter()
            .map(|e| (e.id.to_string(), e.field))
            .collect()
    }

    fn owned(v: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
        v.iter().map(|(i, f)| ((*i).to_owned(), *f)).collect()
    }

    #[test]
    fn a_copy_writes_events_in_order_then_one_marker_per_close_and_the_end() {
        let at = Copier::default();
        let (entries, at) = at.plan(&part(0, 2, 0, false));
        assert_eq!(ids(&entries), owned(&[("0-1", EVENT), ("1-1", EVENT)]));
        assert_eq!(entries[1].value, frame(1));
        assert_eq!((at.next, at.last), (2, Some((1, 2))));
        // Three closes since: one marker, after the part's events.
        let (entries, at) = at.plan(&part(2, 3, 3, false));
        assert_eq!(ids(&entries), owned(&[("2-1", EVENT), ("2-2", CLOSE)]));
        // Nothing new: nothing written.
        let (entries, same) = at.plan(&part(3, 3, 3, false));
        assert!(entries.is_empty());
        assert_eq!(same, at);
        // A close with no event since, then the end: markers after the same event.
        let (entries, at) = at.plan(&part(3, 3, 4, true));
        assert_eq!(ids(&entries), owned(&[("2-3", CLOSE), ("2-4", DONE)]));
        assert!(at.done);
        // Frames already copied are not written again; a lost stretch leaves a gap.
        let at = Copier {
            next: 5,
            ..Copier::default()
        };
        let (entries, _) = at.plan(&part(3, 6, 0, false));
        assert_eq!(ids(&entries), owned(&[("5-1", EVENT)]));
        let (entries, _) = at.plan(&part(8, 9, 0, false));
        assert_eq!(ids(&entries), owned(&[("8-1", EVENT)]));
    }

    fn entry(event: usize, k: u64, field: &'static str) -> Entry {
        Entry {
            id: EntryId { event, k },
            field,
            value: frame(event),
        }
    }

    #[test]
    fn a_reader_sends_the_events_in_order_and_ends_at_the_end_a_new_close_or_a_gap() {
        // Resumed after event 3, when the newest entry was 4-2 (a close the client saw).
        let mut r = Reader::new(4, EntryId { event: 4, k: 2 });
        assert_eq!(r.step(entry(3, 2, CLOSE)), Step::Skip);
        assert_eq!(r.step(entry(4, 1, EVENT)), Step::Send(frame(4)));
        assert_eq!(r.step(entry(4, 2, CLOSE)), Step::Skip);
        assert_eq!(r.step(entry(5, 1, EVENT)), Step::Send(frame(5)));
        // A close after the resumption began ends this connection.
        assert_eq!(r.step(entry(5, 2, CLOSE)), Step::End);
        let mut r = Reader::new(4, EntryId::event(3));
        assert_eq!(r.step(entry(4, 1, EVENT)), Step::Send(frame(4)));
        assert_eq!(r.step(entry(4, 2, DONE)), Step::End);
        // An event missing: the response ends there.
        let mut r = Reader::new(4, EntryId::event(3));
        assert_eq!(r.step(entry(5, 1, EVENT)), Step::End);
    }

    #[test]
    fn entries_of_other_writers_are_ignored() {
        let raw = |id: &str, field: &[u8]| (id.to_owned(), vec![field.to_vec(), b"v".to_vec()]);
        assert_eq!(Entry::of(&raw("3-1", b"m")).map(|e| e.field), Some(EVENT));
        assert_eq!(Entry::of(&raw("3-2", b"d")).map(|e| e.field), Some(DONE));
        assert_eq!(Entry::of(&raw("3-2", b"x")), None);
        assert_eq!(
            Entry::of(&raw("1700000000000-0", b"m")).map(|e| e.id.event),
            Some(1_700_000_000_000)
        );
        assert_eq!(Entry::of(&("3-1".to_owned(), Vec::new())), None);
        assert!(is_stream_id(&crate::ids::random_id()));
        for bad in ["", "a-b", "a:b", "a b", &"a".repeat(65)] {
            assert!(!is_stream_id(bad), "{bad}");
        }
    }

    #[tokio::test]
    async fn streams_are_copied_where_sessions_are_kept() {
        use crate::mcp::{MemorySessions, RedisSessions, SessionStore};
        // Connected lazily: no Redis needed to build it.
        let store = RedisStore::connect("redis://127.0.0.1:1")
            .unwrap()
            .with_prefix("shop:");
        let redis: &dyn SessionStore = &RedisSessions::new(store);
        assert_eq!(
            redis
                .redis_store()
                .map(|s| s.grouped(Group::Sessions, "mcp:stream:x"))
                .as_deref(),
            Some("{shop:mcp:sessions}mcp:stream:x")
        );
        assert!(MemorySessions::default().redis_store().is_none());
    }

    // With Redis: two instances (two `EventStreams` on one Redis).

    fn instance(redis: &Redis) -> EventStreams {
        let shared = RedisStreams::new(redis.store(), &test_limits());
        EventStreams::default().with_shared(Some(Arc::new(shared)))
    }

    async fn text(body: Body) -> String {
        let bytes = tokio::time::timeout(
            Duration::from_secs(10),
            axum::body::to_bytes(body, usize::MAX),
        )
        .await
        .expect("the body ends")
        .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    /// A resumption on an instance that does not hold the stream.
    async fn elsewhere(
        on: &EventStreams,
        session: &str,
        last: &str,
    ) -> Result<Option<Body>, RpcError> {
        match on.find(session, last) {
            Found::Elsewhere(shared, stream, next) => shared.resume(session, stream, next).await,
            Found::Refused => Ok(None),
            Found::Here(..) => panic!("the stream is here"),
        }
    }

    /// The stream's newest entry in Redis, once its copy has `field` (waits up to 5 s).
    async fn copied(redis: &Redis, id: &str, field: &str) {
        let store = redis.store();
        let key = store.grouped(Group::Sessions, &format!("mcp:stream:{id}"));
        for _ in 0..100 {
            let top: Vec<RawEntry> = redis::cmd("XREVRANGE")
                .arg(&key)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(1)
                .query_async(&mut store.connection())
                .await
                .unwrap();
            if top
                .first()
                .and_then(Entry::of)
                .is_some_and(|e| e.field == field)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("stream {id} was not copied");
    }

    fn id_of(s: &EventStream) -> String {
        s.id().unwrap().to_owned()
    }

    #[tokio::test]
    #[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
    async fn a_stream_resumes_on_another_instance_and_follows_it_live() {
        let redis = Redis::start();
        let (a, b) = (instance(&redis), instance(&redis));
        let s = a.open("s", 1000);
        let id = id_of(&s);
        s.push_message(br#"{"n":1}"#);
        s.push_message(br#"{"n":2}"#);
        // The client read events 0 and 1 from `a`; resumed on `b` at once (the copy may lag).
        let body = elsewhere(&b, "s", &format!("{id}_1"))
            .await
            .unwrap()
            .expect("resumed");
        let writer = {
            let s = s.clone();
            tokio::spawn(async move {
                for n in 3..=5 {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    s.push_message(format!(r#"{{"n":{n}}}"#).as_bytes());
                }
                s.finish();
            })
        };
        let remote = text(body).await;
        writer.await.unwrap();
        let here = text(s.clone().body(2)).await;
        assert_eq!(remote, here);
        let want: String = (2..=5)
            .map(|n| format!("id: {id}_{n}\nevent: message\ndata: {{\"n\":{n}}}\n\n"))
            .collect();
        assert_eq!(remote, want);
        // Once finished, the copy expires after the retention.
        copied(&redis, &id, DONE).await;
        let ttl: i64 = redis::cmd("PTTL")
            .arg(sk(&format!("mcp:stream:{id}")))
            .query_async(&mut redis.store().connection())
            .await
            .unwrap();
        assert!(ttl > 290_000 && ttl <= 300_000, "{ttl}");
    }

    #[tokio::test]
    #[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
    async fn ending_a_session_deletes_its_stream_copies() {
        use crate::mcp::{RedisSessions, SessionStore};
        let redis = Redis::start();
        let sessions = RedisSessions::new(redis.store());
        let sid = sessions.create("2025-11-25", "h").await.unwrap();
        let (a, b) = (instance(&redis), instance(&redis));
        let (mine, other) = (a.open(&sid, 0), a.open("other", 0));
        for s in [&mine, &other] {
            s.push_message(b"{}");
            copied(&redis, &id_of(s), EVENT).await;
        }
        let (id, kept) = (id_of(&mine), id_of(&other));
        assert!(sessions.remove(&sid).await.unwrap());
        let mut con = redis.store().connection();
        let left: i64 = redis::cmd("EXISTS")
            .arg(sk(&format!("mcp:stream:{id}")))
            .arg(sk(&format!("mcp:session:{sid}:streams")))
            .query_async(&mut con)
            .await
            .unwrap();
        assert_eq!(left, 0, "the session's stream and its list are gone");
        let indexed: Vec<String> = redis::cmd("ZRANGE")
            .arg(sk(STREAM_INDEX))
            .arg(0)
            .arg(-1)
            .query_async(&mut con)
            .await
            .unwrap();
        assert_eq!(indexed, std::slice::from_ref(&kept));
        assert!(
            elsewhere(&b, &sid, &format!("{id}_0"))
                .await
                .unwrap()
                .is_none()
        );
        // Another session's stream stays resumable.
        assert!(
            elsewhere(&b, "other", &format!("{kept}_0"))
                .await
                .unwrap()
                .is_some()
        );
        // The running stream's next events are not copied back.
        mine.push_message(b"{}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let back: i64 = redis::cmd("EXISTS")
            .arg(sk(&format!("mcp:stream:{id}")))
            .query_async(&mut con)
            .await
            .unwrap();
        assert_eq!(back, 0);
    }

    #[tokio::test]
    #[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
    async fn refusals_elsewhere_are_those_of_the_owning_instance() {
        let redis = Redis::start();
        let (a, b) = (instance(&redis), instance(&redis));
        let s = a.open("s", 0);
        let id = id_of(&s);
        for _ in 0..3 {
            s.push_message(b"{}");
        }
        s.finish();
        copied(&redis, &id, DONE).await;
        for (session, last, resumed) in [
            ("s", format!("{id}_1"), true),
            // After the last event: an empty, finished stream.
            ("s", format!("{id}_3"), true),
            // Not sent.
            ("s", format!("{id}_4"), false),
            // Another session's stream.
            ("t", format!("{id}_1"), false),
            ("s", format!("{id}_x"), false),
        ] {
            let here = matches!(a.find(session, &last), Found::Here(..));
            let there = elsewhere(&b, session, &last).await.unwrap();
            assert_eq!(
                (here, there.is_some()),
                (resumed, resumed),
                "{session} {last}"
            );
        }
        let empty = elsewhere(&b, "s", &format!("{id}_3"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(text(empty).await, "");
        // Ids of another form never reach Redis keys.
        for odd in ["a:b_1", "mcp:streams_1", "*_1"] {
            assert!(elsewhere(&b, "s", odd).await.unwrap().is_none(), "{odd}");
        }
    }

    #[tokio::test]
    #[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
    async fn the_event_window_and_the_session_bound_hold_in_redis() {
        let redis = Redis::start();
        let (a, b) = (instance(&redis), instance(&redis));
        let s = a.open("s", 0);
        let id = id_of(&s);
        for _ in 0..MAX_STREAM_EVENTS + 20 {
            s.push_message(b"{}");
        }
        s.finish();
        copied(&redis, &id, DONE).await;
        let sent = MAX_STREAM_EVENTS + 21;
        // The oldest kept event is `sent - MAX_STREAM_EVENTS`: resumable after the one
        // before it, not earlier.
        let oldest = sent - MAX_STREAM_EVENTS;
        for (n, resumed) in [(oldest - 1, true), (oldest - 2, false), (0, false)] {
            let last = format!("{id}_{n}");
            assert_eq!(
                matches!(a.find("s", &last), Found::Here(..)),
                resumed,
                "{n}"
            );
            let there = elsewhere(&b, "s", &last).await.unwrap();
            assert_eq!(there.is_some(), resumed, "{n}");
            if let Some(body) = there {
                let events = text(body).await.matches("event: message").count();
                assert_eq!(events, MAX_STREAM_EVENTS);
            }
        }
        // A session's 17th stream: its first can no longer be resumed, in Redis either.
        let first = a.open("p", 0);
        first.finish();
        let mut last = None;
        for _ in 0..crate::Limits::default().resumable_streams_per_session {
            let s = a.open("p", 0);
            s.finish();
            last = Some(s);
        }
        let last = last.unwrap();
        copied(&redis, &id_of(&last), DONE).await;
        let gone = format!("{}_0", id_of(&first));
        assert!(matches!(a.find("p", &gone), Found::Elsewhere(..)));
        assert!(elsewhere(&a, "p", &gone).await.unwrap().is_none());
        assert!(elsewhere(&b, "p", &gone).await.unwrap().is_none());
        let kept = format!("{}_0", id_of(&last));
        assert!(elsewhere(&b, "p", &kept).await.unwrap().is_some());
        let listed: i64 = redis::cmd("LLEN")
            .arg(sk("mcp:session:p:streams"))
            .query_async(&mut redis.store().connection())
            .await
            .unwrap();
        assert_eq!(
            listed,
            crate::Limits::default().resumable_streams_per_session as i64
        );
    }

    #[tokio::test]
    #[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
    async fn a_close_ends_a_remote_reader_after_the_events_before_it() {
        let redis = Redis::start();
        let (a, b) = (instance(&redis), instance(&redis));
        let s = a.open("s", 0);
        let id = id_of(&s);
        s.push_message(br#"{"n":1}"#);
        let body = elsewhere(&b, "s", &format!("{id}_0"))
            .await
            .unwrap()
            .unwrap();
        s.push_message(br#"{"n":2}"#);
        s.close_stream();
        copied(&redis, &id, CLOSE).await;
        s.push_message(br#"{"n":3}"#);
        let got = text(body).await;
        assert!(
            got.contains(&format!("{id}_1\n")) && got.ends_with("{\"n\":2}\n\n"),
            "{got}"
        );
        // A resumption after that close is not ended by it.
        let body = elsewhere(&b, "s", &format!("{id}_2"))
            .await
            .unwrap()
            .unwrap();
        s.finish();
        let got = text(body).await;
        assert_eq!(
            got,
            format!("id: {id}_3\nevent: message\ndata: {{\"n\":3}}\n\n")
        );
    }

    #[tokio::test]
    async fn without_redis_the_stream_goes_on_here_and_a_resumption_elsewhere_fails_fast() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let store = RedisStore::connect(&format!("redis://127.0.0.1:{port}")).unwrap();
        let shared = Arc::new(RedisStreams::new(store, &test_limits()));
        let a = EventStreams::default().with_shared(Some(shared.clone()));
        let s = a.open("s", 0);
        s.push_message(b"{}");
        s.finish();
        // The owning instance's stream is whole.
        let here = text(s.clone().body(0)).await;
        assert_eq!(here.matches("\n\n").count(), 2, "{here}");
        let started = Instant::now();
        let Err(err) = shared.resume("s", &id_of(&s), 1).await else {
            panic!("resumed without Redis");
        };
        assert_eq!(err.message(), "Stream store unavailable, try again later");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }
}
