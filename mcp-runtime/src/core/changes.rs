//! Change notices: the application says that a resource changed, or that the tools, prompts or
//! resources changed, and the MCP clients that asked to hear of it do (on a session's
//! `GET` stream in the handshake era, on a `subscriptions/listen` stream on 2026-07-28).
//!
//! One [`Changes`] per server, in its state: methods take it as `changes: State<Changes>`, the
//! application gets it from [`crate::Server::changes`]. Nobody listening costs one atomic
//! check per notice. With `ServerBuilder::redis`, notices also travel between instances (Redis
//! pub/sub): a client listening on one instance hears of a change announced on another.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, mpsc};

/// How many notices a slow listener may fall behind before it skips the oldest.
pub const CHANGE_BACKLOG: usize = 256;

/// One change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The contents of a resource changed (its URI).
    ResourceUpdated(Arc<str>),
    /// Resources were added or removed.
    ResourcesListChanged,
    /// Prompts were added or removed.
    PromptsListChanged,
    /// Tools were added or removed.
    ToolsListChanged,
    /// A task changed (its new state and owner; sent by the task engine).
    Task(Arc<super::TaskNotice>),
    /// A session's state changed (its id): its subscriptions, or it ended. Its stream reads
    /// it again (and only then: a resource update reads no session).
    Session(Arc<str>),
}

/// The span of a notice announced during a call (a producer span of the call's trace, named
/// after the notification its listeners get); none outside a call, when spans are not
/// exported, or for the runtime's own notices (tasks, sessions).
fn notice_span(change: &Change) -> tracing::Span {
    if !super::telemetry::traces_on() || tracing::Span::current().is_none() {
        return tracing::Span::none();
    }
    let (method, uri) = match change {
        Change::ResourceUpdated(uri) => ("notifications/resources/updated", Some(&**uri)),
        Change::ResourcesListChanged => ("notifications/resources/list_changed", None),
        Change::PromptsListChanged => ("notifications/prompts/list_changed", None),
        Change::ToolsListChanged => ("notifications/tools/list_changed", None),
        Change::Task(_) | Change::Session(_) => return tracing::Span::none(),
    };
    tracing::info_span!(
        "mcp.notice",
        otel.name = method,
        otel.kind = "producer",
        mcp.method.name = method,
        mcp.resource.uri = uri.map(crate::error::shown).as_deref(),
    )
}

/// Carries notices between instances: publishes this instance's, and feeds the others' into
/// the local hub. Implemented over Redis pub/sub (`core::redis`).
pub(crate) trait Relay: Send + Sync + 'static {
    /// Publishes one encoded notice (fire and forget: a lost one costs a client a refresh).
    fn publish(&self, message: String);
    /// Delivers every notice of the other instances to `hub` until the process ends.
    fn run(&self, origin: Arc<str>, hub: Changes);
}

struct Relayed {
    relay: Arc<dyn Relay>,
    /// This instance's id: its own notices, coming back, are not delivered twice.
    origin: Arc<str>,
    started: std::sync::Once,
}

/// A notice as text on the wire between instances: `origin`, kind, URI, one per line.
pub(crate) fn encode(origin: &str, change: &Change) -> String {
    match change {
        Change::ResourceUpdated(uri) => format!("{origin}\nresource\n{uri}"),
        Change::ResourcesListChanged => format!("{origin}\nresources"),
        Change::PromptsListChanged => format!("{origin}\nprompts"),
        Change::ToolsListChanged => format!("{origin}\ntools"),
        Change::Session(sid) => format!("{origin}\nsession\n{sid}"),
        Change::Task(n) => {
            let stored = serde_json::to_string(&super::task::Stored::of(&n.view, &n.owner));
            format!("{origin}\ntask\n{}", stored.unwrap_or_default())
        }
    }
}

#[cfg_attr(not(feature = "redis"), allow(dead_code))]
/// The origin and notice of a text from another instance; `None` for one that is not a notice.
pub(crate) fn decode(text: &str) -> Option<(&str, Change)> {
    let mut parts = text.splitn(3, '\n');
    let origin = parts.next()?;
    let change = match (parts.next()?, parts.next()) {
        ("resource", Some(uri)) => Change::ResourceUpdated(uri.into()),
        ("resources", None) => Change::ResourcesListChanged,
        ("prompts", None) => Change::PromptsListChanged,
        ("tools", None) => Change::ToolsListChanged,
        ("session", Some(sid)) => Change::Session(sid.into()),
        ("task", Some(json)) => {
            let stored: super::task::Stored = serde_json::from_str(json).ok()?;
            let owner = stored.owner.clone();
            Change::Task(Arc::new(super::TaskNotice {
                view: stored.view(),
                owner,
            }))
        }
        _ => return None,
    };
    Some((origin, change))
}

/// The server's change notices: say what changed; subscribed clients hear of it.
///
/// ```
/// use mcp_runtime::core::Changes;
/// let changes = Changes::default();
/// changes.resource_updated("catalog://hours");
/// ```
#[derive(Clone)]
pub struct Changes {
    /// Every notice but resource updates, numbered: each listener hears them all.
    tx: broadcast::Sender<(u64, Change)>,
    /// The next notice's number: a listener hears both kinds in the order they were sent.
    seq: Arc<std::sync::atomic::AtomicU64>,
    /// Resource updates go only to the watchers of the URI (or of a resource above it).
    watchers: Arc<Mutex<Index>>,
    relayed: Option<Arc<Relayed>>,
}

impl Default for Changes {
    fn default() -> Self {
        Self {
            tx: broadcast::Sender::new(CHANGE_BACKLOG),
            seq: Arc::default(),
            watchers: Arc::default(),
            relayed: None,
        }
    }
}

/// A watcher: its id, and where its updates go (with their numbers).
type Watcher = (u64, mpsc::Sender<(u64, Arc<str>)>);

/// The watchers of each URI.
#[derive(Default)]
struct Index {
    next: u64,
    by_uri: HashMap<Arc<str>, Vec<Watcher>>,
}

impl Index {
    /// The watchers `uri` reaches: those of the URI itself and of every resource above it (a
    /// prefix ending at a `/`, with or without it), as [`crate::mcp`]'s filters match: one
    /// lookup per `/` of the URI, whoever else watches.
    fn deliver(&self, seq: u64, uri: &Arc<str>) {
        // A set, not a list: a URI many listeners watch reaches each once, in linear time.
        let mut reached: std::collections::HashSet<u64> = std::collections::HashSet::new();
        let ends = uri
            .match_indices('/')
            .flat_map(|(i, _)| [i, i + 1])
            .chain([uri.len()]);
        for end in ends {
            let Some(list) = uri.get(..end).and_then(|k| self.by_uri.get(k)) else {
                continue;
            };
            for (id, tx) in list {
                if reached.insert(*id) {
                    // A watcher that fell a backlog behind misses this one, as a lagging
                    // listener does.
                    let _ = tx.try_send((seq, uri.clone()));
                }
            }
        }
    }

    fn remove(&mut self, id: u64, uris: &[Arc<str>]) {
        for u in uris {
            if let Some(list) = self.by_uri.get_mut(u) {
                list.retain(|(i, _)| *i != id);
                if list.is_empty() {
                    self.by_uri.remove(u);
                }
            }
        }
    }
}

/// One listener's resource subscriptions: it hears of updates of these URIs only. Dropping
/// it unsubscribes.
struct Watch {
    id: u64,
    uris: Vec<Arc<str>>,
    tx: mpsc::Sender<(u64, Arc<str>)>,
    rx: mpsc::Receiver<(u64, Arc<str>)>,
    index: Arc<Mutex<Index>>,
}

impl Watch {
    /// Watches `uris` instead of what it watched.
    fn set(&mut self, uris: &[String]) {
        let Ok(mut index) = self.index.lock() else {
            return;
        };
        index.remove(self.id, &self.uris);
        self.uris = uris.iter().map(|u| Arc::from(u.as_str())).collect();
        self.uris.sort();
        self.uris.dedup();
        for u in &self.uris {
            index
                .by_uri
                .entry(u.clone())
                .or_default()
                .push((self.id, self.tx.clone()));
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Ok(mut index) = self.index.lock() {
            index.remove(self.id, &self.uris);
        }
    }
}

/// One listener's changes, in the order they were sent: the notices everyone hears, and the
/// updates of the resources it watches.
pub(crate) struct Feed {
    all: broadcast::Receiver<(u64, Change)>,
    watch: Watch,
    /// The next of each kind, read ahead to know which came first.
    held: Option<(u64, Change)>,
    held_update: Option<(u64, Arc<str>)>,
    closed: bool,
}

impl Feed {
    /// Hears of updates of `uris` (and of resources below them) instead of what it watched.
    pub(crate) fn watch(&mut self, uris: &[String]) {
        self.watch.set(uris);
    }

    /// The next change; `None` once the hub is gone. A listener more than
    /// [`CHANGE_BACKLOG`] behind skips what it missed rather than holding the others back.
    /// Cancel-safe: what was read ahead is kept for the next call.
    pub(crate) async fn next(&mut self) -> Option<Change> {
        loop {
            while self.held.is_none() && !self.closed {
                match self.all.try_recv() {
                    Ok(c) => self.held = Some(c),
                    Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                    Err(broadcast::error::TryRecvError::Empty) => break,
                    Err(broadcast::error::TryRecvError::Closed) => self.closed = true,
                }
            }
            if self.held_update.is_none() {
                self.held_update = self.watch.rx.try_recv().ok();
            }
            let update_first = match (&self.held, &self.held_update) {
                (Some((a, _)), Some((b, _))) => b < a,
                (None, Some(_)) => true,
                (Some(_), None) => false,
                (None, None) if self.closed => return None,
                (None, None) => {
                    tokio::select! {
                        c = self.all.recv() => match c {
                            Ok(c) => self.held = Some(c),
                            Err(broadcast::error::RecvError::Lagged(_)) => {}
                            Err(broadcast::error::RecvError::Closed) => self.closed = true,
                        },
                        // The watch holds its own sender: this never ends.
                        Some(u) = self.watch.rx.recv() => self.held_update = Some(u),
                    }
                    continue;
                }
            };
            return if update_first {
                self.held_update
                    .take()
                    .map(|(_, uri)| Change::ResourceUpdated(uri))
            } else {
                self.held.take().map(|(_, c)| c)
            };
        }
    }
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes")
            .field("listeners", &self.tx.receiver_count())
            .finish()
    }
}

impl Changes {
    /// A hub whose notices also travel through `relay` to the other instances.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn relayed(relay: Arc<dyn Relay>) -> Self {
        Self {
            relayed: Some(Arc::new(Relayed {
                relay,
                origin: crate::ids::random_id().into(),
                started: std::sync::Once::new(),
            })),
            ..Self::default()
        }
    }

    /// Announces a change: to this instance's listeners at once, and through the relay (if
    /// any) to the other instances'.
    pub fn send(&self, change: Change) {
        let span = notice_span(&change);
        let _in = span.enter();
        if let Some(r) = &self.relayed {
            r.relay.publish(encode(&r.origin, &change));
        }
        self.deliver(change);
    }

    /// Delivers a change to this instance's listeners (one announced here, or relayed).
    pub(crate) fn deliver(&self, change: Change) {
        let seq = self.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match change {
            Change::ResourceUpdated(uri) => {
                if let Ok(index) = self.watchers.lock() {
                    index.deliver(seq, &uri);
                }
            }
            // An error only means nobody listens here.
            other => {
                let _ = self.tx.send((seq, other));
            }
        }
    }

    /// The resource at `uri` changed: subscribers get `notifications/resources/updated`.
    pub fn resource_updated(&self, uri: impl Into<Arc<str>>) {
        self.send(Change::ResourceUpdated(uri.into()));
    }

    /// Resources were added or removed.
    pub fn resources_list_changed(&self) {
        self.send(Change::ResourcesListChanged);
    }

    /// Prompts were added or removed.
    pub fn prompts_list_changed(&self) {
        self.send(Change::PromptsListChanged);
    }

    /// Tools were added or removed.
    pub fn tools_list_changed(&self) {
        self.send(Change::ToolsListChanged);
    }

    /// A listener of every change from now on: resource updates of the URIs it will
    /// [`Feed::watch`] only, everything else whatever it is. The first listener starts
    /// hearing the other instances (inside the runtime, where the relay's task can run).
    pub(crate) fn feed(&self) -> Feed {
        self.start_relay();
        let (tx, rx) = mpsc::channel(CHANGE_BACKLOG);
        let id = match self.watchers.lock() {
            Ok(mut index) => {
                index.next += 1;
                index.next
            }
            Err(_) => 0,
        };
        Feed {
            all: self.tx.subscribe(),
            watch: Watch {
                id,
                uris: Vec::new(),
                tx,
                rx,
                index: self.watchers.clone(),
            },
            held: None,
            held_update: None,
            closed: false,
        }
    }

    fn start_relay(&self) {
        if let Some(r) = &self.relayed {
            r.started
                .call_once(|| r.relay.run(r.origin.clone(), self.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn notices_survive_the_wire_and_anything_else_is_ignored() {
        for c in [
            Change::ResourceUpdated("x://a\nb".into()),
            Change::ResourcesListChanged,
            Change::PromptsListChanged,
            Change::ToolsListChanged,
        ] {
            let text = encode("me", &c);
            assert_eq!(decode(&text), Some(("me", c)));
        }
        let task = crate::core::Tasks::new(
            1,
            1,
            std::time::Duration::from_secs(1),
            std::time::Duration::from_secs(1),
        )
        .create("", crate::CancelSignal::new(), None)
        .await
        .unwrap();
        let notice = crate::core::TaskNotice {
            view: task.clone(),
            owner: "ann".into(),
        };
        let Some(("me", Change::Task(back))) =
            decode(&encode("me", &Change::Task(Arc::new(notice))))
        else {
            panic!("a task notice")
        };
        assert_eq!(
            (back.view.id.as_str(), back.view.status, back.owner.as_str()),
            (task.id.as_str(), task.status, "ann")
        );
        assert_eq!(decode("me\nsomething"), None);
        assert_eq!(decode("garbage"), None);
        let subs = Change::Session("sid-1".into());
        assert_eq!(decode(&encode("me", &subs)), Some(("me", subs)));
    }

    /// Whether `f` heard of an update since it was last asked, and of which URI.
    fn heard(f: &mut Feed) -> Option<Arc<str>> {
        f.watch.rx.try_recv().ok().map(|(_, uri)| uri)
    }

    #[test]
    fn an_update_reaches_only_the_watchers_of_its_uri_or_above() {
        let changes = Changes::default();
        let (mut exact, mut above, mut slash, mut other) = (
            changes.feed(),
            changes.feed(),
            changes.feed(),
            changes.feed(),
        );
        exact.watch(&["test://w/part".into()]);
        above.watch(&["test://w".into(), "test://w/part".into()]);
        slash.watch(&["test://w/".into()]);
        other.watch(&["test://wx".into(), "test://w/parts".into()]);
        changes.resource_updated("test://w/part");
        assert_eq!(heard(&mut exact).as_deref(), Some("test://w/part"));
        // Watching it twice over (the URI and one above it) is heard once.
        assert_eq!(heard(&mut above).as_deref(), Some("test://w/part"));
        assert_eq!(heard(&mut above), None);
        assert_eq!(heard(&mut slash).as_deref(), Some("test://w/part"));
        assert_eq!(heard(&mut other), None);
        // A new set replaces the old; a dropped watch is gone from the index.
        exact.watch(&["test://z".into()]);
        drop(above);
        changes.resource_updated("test://w/part");
        assert_eq!(heard(&mut exact), None);
        let index = changes.watchers.lock().unwrap();
        assert_eq!(
            index
                .by_uri
                .keys()
                .map(|k| &**k)
                .collect::<std::collections::BTreeSet<_>>(),
            ["test://w/", "test://w/parts", "test://wx", "test://z"].into()
        );
    }

    #[tokio::test]
    async fn a_feed_hears_both_kinds_in_the_order_they_were_sent() {
        let changes = Changes::default();
        let mut feed = changes.feed();
        feed.watch(&["test://a".into()]);
        changes.tools_list_changed();
        changes.resource_updated("test://a");
        changes.resource_updated("test://b");
        changes.send(Change::Session("s".into()));
        changes.resource_updated("test://a");
        changes.prompts_list_changed();
        let mut heard = Vec::new();
        for _ in 0..5 {
            heard.push(feed.next().await.unwrap());
        }
        assert_eq!(
            heard,
            [
                Change::ToolsListChanged,
                Change::ResourceUpdated("test://a".into()),
                Change::Session("s".into()),
                Change::ResourceUpdated("test://a".into()),
                Change::PromptsListChanged,
            ]
        );
    }
}
