//! What a revision is: the table each revision's module fills in.

use super::Method;

/// What one revision is.
#[derive(Debug)]
pub(crate) struct Revision {
    /// The revision string (`2025-06-18`).
    pub version: &'static str,
    /// Stateless: every request carries the revision and the client's capabilities in its
    /// `_meta` (and its log level, if it wants logs); no `initialize`, no session.
    pub stateless: bool,
    /// Results carry `resultType` and the server-info `_meta` stamp; a read carries its cache
    /// hints.
    pub typed_results: bool,
    /// HTTP headers mirror the envelope (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`: SEP-2243),
    /// checked by [`crate::mcp::headers`].
    pub mirrored_headers: bool,
    /// A JSON-RPC batch in one POST is accepted.
    pub batches: bool,
    /// The form tasks take.
    pub tasks: TaskForm,
    /// The code of a resource that is not there.
    pub resource_not_found: i32,
    /// The HTTP status of an error answer with this code (a refusal of auth or of a rate
    /// limit has its own, on every revision).
    pub status: fn(i32) -> u16,
    /// The methods of this revision besides those every revision has (`tools/*`,
    /// `resources/list`, `resources/read`, `resources/templates/list`, `prompts/*`,
    /// `completion/complete`: [`Method::common`]).
    pub methods: &'static [Method],
}

impl Revision {
    /// A handshake revision with nothing of the later ones: `initialize` and a session, every
    /// error HTTP 200, -32002 for a missing resource, no tasks, no batches.
    pub(super) const fn handshake(version: &'static str) -> Self {
        Self {
            version,
            stateless: false,
            typed_results: false,
            mirrored_headers: false,
            batches: false,
            tasks: TaskForm::None,
            resource_not_found: crate::error::codes::RESOURCE_NOT_FOUND,
            status: always_ok,
            methods: &HANDSHAKE_METHODS,
        }
    }
}

/// The form tasks take in a revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskForm {
    /// None.
    None,
    /// 2025-11-25's experimental tasks: `params.task` on `tools/call`, `tasks/get`,
    /// `tasks/result`, `tasks/cancel`, `tasks/list`; times named `ttl` and `pollInterval`.
    Experimental,
    /// The tasks extension (2026-07-28): declared in the request's capabilities,
    /// `tasks/get`, `tasks/update`, `tasks/cancel`; times named `ttlMs` and `pollIntervalMs`.
    Extension,
}

impl TaskForm {
    /// The names of a task's time to live and poll interval.
    pub(crate) fn time_names(self) -> (&'static str, &'static str) {
        match self {
            TaskForm::Extension => ("ttlMs", "pollIntervalMs"),
            TaskForm::None | TaskForm::Experimental => ("ttl", "pollInterval"),
        }
    }
}

/// The methods of every handshake revision besides the common ones.
pub(super) const HANDSHAKE_METHODS: [Method; 4] = [
    Method::Initialize,
    Method::Ping,
    Method::SetLevel,
    Method::Subscription,
];

/// Every error is HTTP 200 on the handshake revisions (the JSON-RPC error says it all).
fn always_ok(_code: i32) -> u16 {
    200
}
