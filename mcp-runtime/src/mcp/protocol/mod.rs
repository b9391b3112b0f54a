//! The MCP revisions this server speaks: one module each, holding what differs by revision
//! (how a request is framed and its session kept, the HTTP status of an error, batching, the
//! form tasks take, error codes, which methods exist), read through [`Era`].
//!
//! Code elsewhere asks an era what it does (`era.typed_results()`, `era.method(name)`), never
//! which revision it is: adding a revision is adding its module and a line in [`REVISIONS`].
//!
//! The handshake revisions (2024-11-05 … 2025-11-25) start with `initialize` and keep a
//! session; 2026-07-28 is stateless, every request carrying its revision in `params._meta`.

use crate::error::codes;

mod method;
mod r2024_11_05;
mod r2025_03_26;
mod r2025_06_18;
mod r2025_11_25;
mod r2026_07_28;
mod revision;

pub(crate) use method::Method;
use revision::Revision;
pub(crate) use revision::TaskForm;

/// Every revision served, oldest first.
const REVISIONS: [&Revision; 5] = [
    &r2024_11_05::REVISION,
    &r2025_03_26::REVISION,
    &r2025_06_18::REVISION,
    &r2025_11_25::REVISION,
    &r2026_07_28::REVISION,
];

/// The revision assumed when an HTTP request has no `MCP-Protocol-Version` header (the
/// Streamable HTTP transport's rule).
const ASSUMED: &Revision = &r2025_03_26::REVISION;

/// The tasks extension (2026-07-28), as capabilities name it.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `_meta` key of the revision.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the server info stamp on typed results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The `_meta` key of a stateless request's log level.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// Which revision a request is served in.
#[derive(Clone, Copy)]
pub struct Era(&'static Revision);

impl PartialEq for Era {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Era {}

impl std::fmt::Debug for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.version)
    }
}

impl Era {
    /// The revision `version`, if it is one this server speaks.
    pub fn of(version: &str) -> Option<Era> {
        REVISIONS
            .iter()
            .find(|r| r.version == version)
            .map(|r| Era(r))
    }

    /// The handshake revision `version`, if it is one this server speaks.
    pub fn handshake(version: &str) -> Option<Era> {
        Era::of(version).filter(|e| !e.stateless())
    }

    /// The stateless revision `version`, if it is one this server speaks.
    pub fn stateless_of(version: &str) -> Option<Era> {
        Era::of(version).filter(|e| e.stateless())
    }

    /// The newest stateless revision.
    pub fn latest_stateless() -> Era {
        let last = REVISIONS.iter().rev().find(|r| r.stateless);
        Era(last.copied().unwrap_or(REVISIONS[REVISIONS.len() - 1]))
    }

    /// The newest handshake revision: offered to a client asking for one we do not speak.
    pub fn latest_handshake() -> Era {
        let last = REVISIONS.iter().rev().find(|r| !r.stateless);
        Era(last.copied().unwrap_or(REVISIONS[0]))
    }

    /// The handshake revision of an HTTP request that names none (2025-03-26).
    pub fn assumed() -> Era {
        Era(ASSUMED)
    }

    /// The stateless revision a request's envelope names (`_meta`'s `protocolVersion`), else
    /// the newest: a request answered before its revision is checked is answered as that.
    pub fn of_envelope(version: Option<&str>) -> Era {
        version
            .and_then(Era::stateless_of)
            .unwrap_or_else(Era::latest_stateless)
    }

    /// Negotiates an `initialize`: echo a supported handshake revision, else offer the latest.
    pub fn negotiate(requested: Option<&str>) -> Era {
        requested
            .and_then(Era::handshake)
            .unwrap_or_else(Era::latest_handshake)
    }

    /// Every revision's string, oldest first (what a server card says the endpoint speaks).
    pub fn versions() -> Vec<&'static str> {
        REVISIONS.iter().map(|r| r.version).collect()
    }

    /// The stateless revisions' strings, oldest first (what an unsupported one is told).
    pub fn stateless_versions() -> Vec<&'static str> {
        REVISIONS
            .iter()
            .filter(|r| r.stateless)
            .map(|r| r.version)
            .collect()
    }

    /// The revision string.
    pub fn version(self) -> &'static str {
        self.0.version
    }

    /// Whether requests carry their own envelope (no `initialize`, no session).
    pub fn stateless(self) -> bool {
        self.0.stateless
    }

    /// Whether results carry `resultType`, the server-info stamp and a read's cache hints.
    pub fn typed_results(self) -> bool {
        self.0.typed_results
    }

    /// Whether HTTP headers mirror the envelope (and are checked against it).
    pub fn mirrored_headers(self) -> bool {
        self.0.mirrored_headers
    }

    /// Whether a batch is accepted.
    pub fn batches(self) -> bool {
        self.0.batches
    }

    /// The form tasks take.
    pub(crate) fn tasks(self) -> TaskForm {
        self.0.tasks
    }

    /// The code of a resource that is not there.
    pub fn resource_not_found(self) -> i32 {
        self.0.resource_not_found
    }

    /// The HTTP status of an error answer with `code`.
    pub fn status(self, code: i32) -> u16 {
        match code {
            codes::INVALID_TOKEN => 403,
            codes::RATE_LIMITED => 429,
            _ => (self.0.status)(code),
        }
    }

    /// The method named `name`, if this revision has it.
    pub(crate) fn method(self, name: &str) -> Option<Method> {
        let method = Method::of(name);
        self.has(method).then_some(method)
    }

    /// Whether this revision has `method`.
    pub(crate) fn has(self, method: Method) -> bool {
        method.common() || self.0.methods.contains(&method)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_are_found_by_their_strings_and_kinds() {
        assert_eq!(Era::of("2025-06-18").map(Era::version), Some("2025-06-18"));
        assert_eq!(Era::of("2099-01-01"), None);
        assert_eq!(Era::handshake("2026-07-28"), None);
        assert_eq!(Era::stateless_of("2025-11-25"), None);
        assert_eq!(Era::latest_handshake().version(), "2025-11-25");
        assert_eq!(Era::latest_stateless().version(), "2026-07-28");
        assert_eq!(Era::negotiate(Some("2024-11-05")).version(), "2024-11-05");
        assert_eq!(Era::negotiate(Some("2026-07-28")).version(), "2025-11-25");
        assert_eq!(Era::negotiate(None).version(), "2025-11-25");
        assert_eq!(Era::assumed().version(), "2025-03-26");
        assert_eq!(Era::of_envelope(Some("2026-07-28")).version(), "2026-07-28");
        assert_eq!(
            Era::of_envelope(Some("2025-06-18")),
            Era::latest_stateless()
        );
        assert_eq!(Era::stateless_versions(), ["2026-07-28"]);
        // Each string once, oldest first.
        let all: Vec<_> = REVISIONS.iter().map(|r| r.version).collect();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(all, sorted);
    }

    #[test]
    fn what_differs_is_read_from_the_revision() {
        let old = Era::of("2025-03-26").unwrap();
        let tasks = Era::of("2025-11-25").unwrap();
        let new = Era::latest_stateless();
        assert!(old.batches() && !tasks.batches() && !new.batches());
        assert_eq!(old.tasks(), TaskForm::None);
        assert_eq!(tasks.tasks(), TaskForm::Experimental);
        assert_eq!(new.tasks(), TaskForm::Extension);
        assert_eq!(old.method("initialize"), Some(Method::Initialize));
        assert_eq!(new.method("initialize"), None);
        assert_eq!(new.method("ping"), None);
        assert_eq!(new.method("subscriptions/listen"), Some(Method::Listen));
        assert_eq!(old.method("subscriptions/listen"), None);
        assert_eq!(tasks.method("tasks/result"), Some(Method::TaskResult));
        assert_eq!(new.method("tasks/result"), None);
        assert_eq!(old.method("tasks/get"), None);
        assert_eq!(new.method("tasks/update"), Some(Method::TaskUpdate));
        assert_eq!(tasks.method("tasks/update"), None);
        assert_eq!(new.method("tools/list"), Some(Method::Other));
        assert_eq!(old.method("tools/call"), Some(Method::Call));
        assert_eq!(old.status(codes::METHOD_NOT_FOUND), 200);
        assert_eq!(new.status(codes::METHOD_NOT_FOUND), 404);
        assert_eq!(old.status(codes::RATE_LIMITED), 429);
        assert_eq!(old.resource_not_found(), codes::RESOURCE_NOT_FOUND);
        assert_eq!(new.resource_not_found(), codes::INVALID_PARAMS);
    }
}
