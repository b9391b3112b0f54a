//! MCP 2026-07-28: stateless. Every request carries its revision, the client's capabilities
//! and its log level in `params._meta`; results are typed (`resultType`) and stamped with the
//! server's info; errors have HTTP statuses (SEP-2164's -32602 for a missing resource); tasks
//! are an extension; change notices come on `subscriptions/listen`.

use super::Method;
use super::revision::{Revision, TaskForm};
use crate::error::codes;

pub(super) const REVISION: Revision = Revision {
    version: "2026-07-28",
    stateless: true,
    typed_results: true,
    mirrored_headers: true,
    batches: false,
    tasks: TaskForm::Extension,
    resource_not_found: codes::INVALID_PARAMS,
    status,
    methods: &[
        Method::TaskGet,
        Method::TaskUpdate,
        Method::TaskCancel,
        Method::Discover,
        Method::Listen,
    ],
};

/// A request the server could not take is a client error; an error of the call itself is
/// still 200 (the JSON-RPC error says what went wrong).
fn status(code: i32) -> u16 {
    match code {
        codes::METHOD_NOT_FOUND => 404,
        codes::INVALID_PARAMS
        | codes::INVALID_REQUEST
        | codes::PARSE_ERROR
        | codes::HEADER_MISMATCH
        | codes::MISSING_CLIENT_CAPABILITY
        | codes::UNSUPPORTED_PROTOCOL_VERSION => 400,
        _ => 200,
    }
}
