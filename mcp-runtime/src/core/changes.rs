//! Change notices: the application says that a resource changed, or that the tools, prompts or
//! resources changed, and the MCP clients that asked to hear of it do (on a session's
//! `GET` stream in the handshake era, on a `subscriptions/listen` stream on 2026-07-28).
//!
//! One [`Changes`] per server, in its state: methods take it as `changes: State<Changes>`, the
//! application gets it from [`crate::Server::changes`]. Nobody listening costs one atomic
//! check per notice. With `ServerBuilder::redis`, notices also travel between instances (Redis
//! pub/sub): a client listening on one instance hears of a change announced on another.

use std::sync::Arc;

use tokio::sync::broadcast;

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
}

/// Carries notices between instances: publishes this instance's, and feeds the others' into
/// the local hub. Implemented over Redis pub/sub (`core::redis`).
pub(crate) trait Relay: Send + Sync + 'static {
    /// Publishes one encoded notice (fire and forget: a lost one costs a client a refresh).
    fn publish(&self, message: String);
    /// Delivers every notice of the other instances to `tx` until the process ends.
    fn run(&self, origin: Arc<str>, tx: broadcast::Sender<Change>);
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
        Change::Task(n) => {
            let stored = serde_json::to_string(&super::tasks::Stored::of(&n.view, &n.owner));
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
        ("task", Some(json)) => {
            let stored: super::tasks::Stored = serde_json::from_str(json).ok()?;
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
    tx: broadcast::Sender<Change>,
    relayed: Option<Arc<Relayed>>,
}

impl Default for Changes {
    fn default() -> Self {
        Self {
            tx: broadcast::Sender::new(CHANGE_BACKLOG),
            relayed: None,
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
        if let Some(r) = &self.relayed {
            r.relay.publish(encode(&r.origin, &change));
        }
        // An error only means nobody listens here.
        let _ = self.tx.send(change);
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

    /// A listener of every change from now on. The first one starts hearing the other
    /// instances (inside the runtime, where the relay's task can run).
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Change> {
        if let Some(r) = &self.relayed {
            r.started
                .call_once(|| r.relay.run(r.origin.clone(), self.tx.clone()));
        }
        self.tx.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_survive_the_wire_and_anything_else_is_ignored() {
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
    }
}
