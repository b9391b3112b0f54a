//! MCP 2024-11-05: the first revision. `initialize`, a session, HTTP+SSE (served here over
//! Streamable HTTP as well).

use super::revision::Revision;

pub(super) const REVISION: Revision = Revision::handshake("2024-11-05");
