//! MCP 2024-11-05. The first revision: `initialize`, a session, HTTP+SSE (served here over Streamable HTTP as well).

use super::revision::{Revision, TaskForm, always_ok, handshake_op};
use crate::error::codes;

pub(super) const REVISION: Revision = Revision {
    version: "2024-11-05",
    stateless: false,
    typed_results: false,
    batches: false,
    tasks: TaskForm::None,
    resource_not_found: codes::RESOURCE_NOT_FOUND,
    status: always_ok,
    op: handshake_op,
};
