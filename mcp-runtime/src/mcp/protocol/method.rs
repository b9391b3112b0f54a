//! The one vocabulary of MCP methods: every method name the engine, the faces and the
//! transports tell apart is read here, once per message. Which of them a revision has is that
//! revision's table ([`super::revision::Revision::methods`]); what a face does with the
//! methods every revision has (`tools/list`, `completion/complete`, ...) is the face's.

/// What a message asks, by its method name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// `initialize`: negotiates the revision and begins the session.
    Initialize,
    /// `ping`.
    Ping,
    /// `logging/setLevel`: the session's log level for the calls that follow.
    SetLevel,
    /// `resources/subscribe`, `resources/unsubscribe`: the session's subscriptions.
    Subscription,
    /// `subscriptions/listen`: a stream of change notices.
    Listen,
    /// `server/discover`: what the server offers, without a session.
    Discover,
    /// `notifications/cancelled`: stops a running call (or, on stdio, a listen stream).
    Cancelled,
    /// `tools/call`, `resources/read`, `prompts/get`: runs user code, which may send
    /// notifications while it runs (progress, logs, questions to the client), so a transport
    /// may answer it on a stream.
    Call,
    /// `tasks/get`.
    TaskGet,
    /// `tasks/cancel`.
    TaskCancel,
    /// `tasks/list` (2025-11-25's experimental tasks).
    TaskList,
    /// `tasks/update` (the tasks extension).
    TaskUpdate,
    /// `tasks/result` (2025-11-25's experimental tasks): relays the task's questions on its
    /// stream.
    TaskResult,
    /// Any other method: every revision has the same (`tools/list`, `completion/complete`,
    /// ...), or none has it.
    Other,
}

impl Method {
    /// The method named `name`.
    pub(crate) fn of(name: &str) -> Method {
        match name {
            "tools/call" | "resources/read" | "prompts/get" => Method::Call,
            "initialize" => Method::Initialize,
            "ping" => Method::Ping,
            "logging/setLevel" => Method::SetLevel,
            "resources/subscribe" | "resources/unsubscribe" => Method::Subscription,
            "subscriptions/listen" => Method::Listen,
            "server/discover" => Method::Discover,
            "notifications/cancelled" => Method::Cancelled,
            "tasks/get" => Method::TaskGet,
            "tasks/cancel" => Method::TaskCancel,
            "tasks/list" => Method::TaskList,
            "tasks/update" => Method::TaskUpdate,
            "tasks/result" => Method::TaskResult,
            _ => Method::Other,
        }
    }

    /// Whether every revision has it (a call, a cancellation, and the methods no revision
    /// tells apart).
    pub(crate) fn common(self) -> bool {
        matches!(self, Method::Call | Method::Cancelled | Method::Other)
    }

    /// Whether a transport may answer it on a stream (it may notify or ask while it runs).
    pub(crate) fn may_stream(self) -> bool {
        matches!(self, Method::Call | Method::TaskResult)
    }

    /// Whether it is a method of tasks (the revision's [`super::TaskForm`] says which form).
    pub(crate) fn is_task(self) -> bool {
        matches!(
            self,
            Method::TaskGet
                | Method::TaskCancel
                | Method::TaskList
                | Method::TaskUpdate
                | Method::TaskResult
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_is_one_method() {
        assert_eq!(Method::of("tools/call"), Method::Call);
        assert_eq!(Method::of("prompts/get"), Method::Call);
        assert_eq!(Method::of("resources/unsubscribe"), Method::Subscription);
        assert_eq!(Method::of("tasks/result"), Method::TaskResult);
        assert_eq!(Method::of("tools/list"), Method::Other);
        assert_eq!(Method::of("Tools/Call"), Method::Other);
        assert!(Method::TaskResult.may_stream() && Method::TaskResult.is_task());
        assert!(!Method::Listen.may_stream() && !Method::Listen.common());
        assert!(Method::Other.common() && !Method::Other.is_task());
    }
}
