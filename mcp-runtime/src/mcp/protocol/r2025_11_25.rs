//! MCP 2025-11-25: the last handshake revision, with experimental tasks (`params.task` on
//! `tools/call`, and the `tasks/*` methods).

use super::Method;
use super::revision::{HANDSHAKE_METHODS, Revision, TaskForm};

pub(super) const REVISION: Revision = Revision {
    tasks: TaskForm::Experimental,
    methods: &METHODS,
    ..Revision::handshake("2025-11-25")
};

/// The handshake's methods, and the experimental tasks'.
const METHODS: [Method; 8] = {
    let [a, b, c, d] = HANDSHAKE_METHODS;
    [
        a,
        b,
        c,
        d,
        Method::TaskGet,
        Method::TaskResult,
        Method::TaskCancel,
        Method::TaskList,
    ]
};
