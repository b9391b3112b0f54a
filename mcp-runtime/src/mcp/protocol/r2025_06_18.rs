//! MCP 2025-06-18. Batches removed; structured tool output and elicitation.

use super::revision::{Revision, TaskForm, always_ok, handshake_op};
use crate::error::codes;

pub(super) const REVISION: Revision = Revision {
    version: "2025-06-18",
    stateless: false,
    typed_results: false,
    batches: false,
    tasks: TaskForm::None,
    resource_not_found: codes::RESOURCE_NOT_FOUND,
    status: always_ok,
    op: handshake_op,
};
