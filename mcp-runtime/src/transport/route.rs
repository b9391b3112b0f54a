//! What one MCP route holds, and who asks on it: what the handlers of `POST`, `GET`,
//! `DELETE` and the change streams share.

use std::sync::Arc;

use crate::context::CallExtras;
use crate::edge::policy::Policy;
use crate::mcp::handler::McpEndpoint;

use super::detached::Detached;

/// What one MCP route holds.
pub(crate) struct McpRoute {
    pub policy: Policy,
    pub ep: Arc<McpEndpoint>,
    pub detached: Arc<Detached>,
    /// A protected group's auth.
    pub auth: Option<Arc<super::auth::Guard>>,
}

/// Who asks, and in which language: what every call of one request gets.
pub(crate) struct Caller {
    pub lang: Arc<str>,
    pub identity: Option<Arc<crate::context::Identity>>,
    /// The handshake-era session, once known.
    pub session: Option<Arc<str>>,
    /// Who the request's shares count against, as the edge found it.
    pub who: Option<crate::context::Caller>,
    /// The W3C trace context of the request's headers, the parent of its spans.
    pub trace: Option<crate::context::TraceParent>,
}

impl Caller {
    pub(crate) fn extras(&self) -> CallExtras {
        CallExtras {
            language: Some(self.lang.clone()),
            identity: self.identity.clone(),
            session: self.session.clone(),
            caller: self.who(),
            trace: self.trace.clone(),
            ..CallExtras::default()
        }
    }

    /// Who the shares count against: the edge's answer, else the session.
    pub(crate) fn who(&self) -> Option<crate::context::Caller> {
        self.who
            .clone()
            .or_else(|| self.session.as_deref().map(crate::context::Caller::session))
    }
}
