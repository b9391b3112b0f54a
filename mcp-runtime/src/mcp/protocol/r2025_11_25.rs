//! MCP 2025-11-25: the last handshake revision, with experimental tasks (`params.task` on
//! `tools/call`, and the `tasks/*` methods).

use super::revision::{Op, Revision, TaskForm, always_ok, handshake_op};
use crate::error::codes;

pub(super) const REVISION: Revision = Revision {
    version: "2025-11-25",
    stateless: false,
    typed_results: false,
    batches: false,
    tasks: TaskForm::Experimental,
    resource_not_found: codes::RESOURCE_NOT_FOUND,
    status: always_ok,
    op,
};

fn op(method: &str) -> Option<Op> {
    match method {
        "tasks/get" | "tasks/result" | "tasks/cancel" | "tasks/list" => Some(Op::ExperimentalTask),
        m => handshake_op(m),
    }
}
