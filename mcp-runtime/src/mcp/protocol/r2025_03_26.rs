//! MCP 2025-03-26: Streamable HTTP, and JSON-RPC batches ("MUST support receiving"); the
//! revision an HTTP request without `MCP-Protocol-Version` is assumed to speak.

use super::revision::Revision;

pub(super) const REVISION: Revision = Revision {
    batches: true,
    ..Revision::handshake("2025-03-26")
};
