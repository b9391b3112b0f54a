//! The calls a client may cancel with `notifications/cancelled` (handshake era over HTTP, and
//! stdio): their signals by request, bounded, each removed when its call ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::context::CancelSignal;

/// The running calls of an endpoint (or of one stdio connection), by session and request id.
#[derive(Default)]
pub(crate) struct Running {
    calls: Arc<Mutex<HashMap<String, CancelSignal>>>,
}

/// One registered call; unregistered when dropped.
pub(crate) struct Registered {
    calls: Arc<Mutex<HashMap<String, CancelSignal>>>,
    key: String,
    /// The call's signal (what the call's extras carry).
    pub(crate) signal: CancelSignal,
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Ok(mut m) = self.calls.lock() {
            m.remove(&self.key);
        }
    }
}

/// The key of request `id` on `session` (JSON text of the id: `1` and `"1"` differ).
fn key(session: &str, id: &Value) -> String {
    let mut k = Vec::with_capacity(session.len() + 16);
    k.extend_from_slice(session.as_bytes());
    k.push(b'\n');
    // Writing a `Value` into a Vec cannot fail; serde_json writes UTF-8.
    let _ = serde_json::to_writer(&mut k, id);
    String::from_utf8(k).unwrap_or_default()
}

impl Running {
    /// Registers request `id` of `session` with a new signal (see [`Running::register_with`]).
    pub(crate) fn register(&self, session: &str, id: &Value, max: usize) -> Option<Registered> {
        self.register_with(session, id, max, CancelSignal::new())
    }

    /// Registers request `id` of `session` with `signal`, if fewer than `max` calls are
    /// registered and no running call has that id (a reused id keeps the first call
    /// cancellable, not both).
    pub(crate) fn register_with(
        &self,
        session: &str,
        id: &Value,
        max: usize,
        signal: CancelSignal,
    ) -> Option<Registered> {
        let mut m = self.calls.lock().ok()?;
        let key = key(session, id);
        if m.len() >= max || m.contains_key(&key) {
            return None;
        }
        m.insert(key.clone(), signal.clone());
        Some(Registered {
            calls: self.calls.clone(),
            key,
            signal,
        })
    }

    /// Cancels request `params.requestId` of `session` (a `notifications/cancelled`); unknown
    /// ids are ignored, as the specification allows.
    pub(crate) fn cancel(&self, session: &str, params: Option<&Value>) -> bool {
        let Some(id) = params.and_then(|p| p.get("requestId")) else {
            return false;
        };
        let Ok(m) = self.calls.lock() else {
            return false;
        };
        match m.get(&key(session, id)) {
            Some(signal) => {
                signal.cancel();
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_registered_call_is_cancelled_by_its_session_only_and_forgotten_when_done() {
        let running = Running::default();
        let call = running.register("s1", &json!(7), 2).unwrap();
        assert!(running.register("s1", &json!(7), 2).is_none(), "same id");
        assert!(!running.cancel("s2", Some(&json!({"requestId": 7}))));
        assert!(!running.cancel("s1", Some(&json!({"requestId": "7"}))));
        assert!(!call.signal.is_cancelled());
        assert!(running.cancel("s1", Some(&json!({"requestId": 7}))));
        assert!(call.signal.is_cancelled());
        let _other = running.register("s1", &json!(8), 2).unwrap();
        assert!(running.register("s1", &json!(9), 2).is_none(), "bounded");
        drop(call);
        assert!(!running.cancel("s1", Some(&json!({"requestId": 7}))));
        assert!(running.register("s1", &json!(9), 2).is_some());
    }
}
