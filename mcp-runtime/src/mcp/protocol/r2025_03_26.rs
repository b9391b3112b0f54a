//! MCP 2025-03-26. Streamable HTTP, and JSON-RPC batches ("MUST support receiving"); the revision an HTTP request without `MCP-Protocol-Version` is assumed to speak.

use super::revision::{Revision, TaskForm, always_ok, handshake_op};
use crate::error::codes;

pub(super) const REVISION: Revision = Revision {
    version: "2025-03-26",
    stateless: false,
    typed_results: false,
    batches: true,
    tasks: TaskForm::None,
    resource_not_found: codes::RESOURCE_NOT_FOUND,
    status: always_ok,
    op: handshake_op,
};
