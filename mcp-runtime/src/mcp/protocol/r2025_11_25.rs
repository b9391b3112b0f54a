//! MCP 2025-11-25: the last handshake revision, with experimental tasks (`params.task` on
//! `tools/call`, and the `tasks/*` methods).

use super::revision::{Op, Revision, TaskForm, handshake_op};

pub(super) const REVISION: Revision = Revision {
    tasks: TaskForm::Experimental,
    op,
    ..Revision::handshake("2025-11-25")
};

fn op(method: &str) -> Option<Op> {
    match method {
        "tasks/get" | "tasks/result" | "tasks/cancel" | "tasks/list" => Some(Op::ExperimentalTask),
        m => handshake_op(m),
    }
}
