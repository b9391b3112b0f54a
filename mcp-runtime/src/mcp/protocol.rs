//! Protocol revisions and era detection.
//!
//! The handshake era (2024-11-05 … 2025-11-25) starts with `initialize`; the modern era
//! (2026-07-28) is stateless, every request carrying its revision in `params._meta`.

/// Handshake-era revisions, oldest first.
pub const HANDSHAKE_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// Modern revisions.
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];
/// The revision offered when a client asks for one we do not speak.
pub const LATEST_HANDSHAKE: &str = "2025-11-25";
/// The revision assumed when an HTTP request has no `MCP-Protocol-Version` header.
pub const DEFAULT_NEGOTIATED: &str = "2025-03-26";

/// The tasks extension (2026-07-28), as capabilities name it.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `_meta` key of the revision.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the server info stamp on modern results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Which protocol era a request is served in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// A handshake-era revision.
    Handshake(&'static str),
    /// 2026-07-28.
    Modern,
}

impl Era {
    /// The revision string.
    pub fn version(self) -> &'static str {
        match self {
            Era::Handshake(v) => v,
            Era::Modern => MODERN_VERSIONS[0],
        }
    }
    /// Whether this is the modern era.
    pub fn is_modern(self) -> bool {
        matches!(self, Era::Modern)
    }
}

/// The known handshake revision equal to `v`.
pub fn handshake_version(v: &str) -> Option<&'static str> {
    HANDSHAKE_VERSIONS.iter().copied().find(|h| *h == v)
}

/// The `_meta` key of a 2026-07-28 request's log level.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// Whether a handshake-era revision has (experimental) tasks: 2025-11-25 does.
pub fn has_tasks(version: &str) -> bool {
    version == "2025-11-25"
}

/// The era of a batch sent at `version`, if that revision has batches: only 2025-03-26 does
/// ("MUST support receiving"); 2025-06-18 removed them.
pub fn batching(version: &str) -> Option<Era> {
    (version == "2025-03-26").then_some(Era::Handshake("2025-03-26"))
}

/// Negotiates an `initialize`: echo a supported handshake revision, else offer the latest.
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested
        .and_then(handshake_version)
        .unwrap_or(LATEST_HANDSHAKE)
}
