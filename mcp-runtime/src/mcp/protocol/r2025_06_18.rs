//! MCP 2025-06-18: batches removed; structured tool output and elicitation.

use super::revision::Revision;

pub(super) const REVISION: Revision = Revision::handshake("2025-06-18");
