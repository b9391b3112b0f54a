//! Change notices: the application says that a resource changed, or that the tools, prompts or
//! resources changed, and the MCP clients that asked to hear of it do (on a session's
//! `GET` stream in the handshake era, on a `subscriptions/listen` stream on 2026-07-28).
//!
//! One [`Changes`] per server, in its state: methods take it as `changes: State<Changes>`, the
//! application gets it from [`crate::Server::changes`]. Nobody listening costs one atomic
//! check per notice.

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
}

impl Default for Changes {
    fn default() -> Self {
        Self {
            tx: broadcast::Sender::new(CHANGE_BACKLOG),
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
    /// Announces a change.
    pub fn send(&self, change: Change) {
        // An error only means nobody listens.
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

    /// A listener of every change from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.tx.subscribe()
    }
}
