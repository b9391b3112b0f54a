//! Who hears of which change: a 2026-07-28 `subscriptions/listen` stream (its filter, the
//! acknowledgement first, every frame tagged with the subscription id), or a handshake-era
//! session's `GET` stream (list changes, and the resources the session subscribed to).

use serde_json::{Map, Value, json};

use super::handler::Offered;
use crate::Limits;
use crate::core::Change;
use crate::error::RpcError;

/// The `_meta` key tagging every frame of a listen stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// What a stream sends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// `notifications/tools/list_changed`.
    pub tools: bool,
    /// `notifications/prompts/list_changed`.
    pub prompts: bool,
    /// `notifications/resources/list_changed`.
    pub resources: bool,
    /// `notifications/resources/updated` for these URIs (and the resources below them).
    pub uris: Vec<String>,
    /// The tasks whose changes the stream hears of (`notifications/tasks`, 2026-07-28).
    pub task_ids: Vec<String>,
    /// Whose tasks it may hear of: the listener's subject (`""` when anonymous), or a
    /// session (`session:<id>`).
    pub task_owner: String,
    /// Whether this is a session's stream: every task of `task_owner`
    /// (`notifications/tasks/status`, 2025-11-25).
    pub all_tasks: bool,
    /// The listen request's id (2026-07-28); `None` on a session stream.
    pub subscription: Option<Value>,
}

impl Filter {
    /// The filter of a `subscriptions/listen`, narrowed to what the endpoint offers; more than
    /// [`Limits::subscriptions`] resource subscriptions, a URI over [`Limits::uri_bytes`] or
    /// more than [`Limits::subscription_bytes`] of them in all is -32602.
    pub(crate) fn listen(
        id: Value,
        params: Option<&Value>,
        meta: &super::meta::Meta,
        offered: Offered,
        limits: &Limits,
    ) -> Result<Self, RpcError> {
        let (max_uris, max_bytes) = (limits.subscriptions, limits.subscription_bytes);
        let n = params.and_then(|p| p.get("notifications"));
        let flag = |k: &str| n.and_then(|n| n.get(k)).and_then(Value::as_bool) == Some(true);
        let uris = match n.and_then(|n| n.get("resourceSubscriptions")) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => {
                if list.len() > max_uris {
                    return Err(RpcError::invalid_params(format!(
                        "at most {max_uris} resource subscriptions per stream"
                    )));
                }
                let mut bytes = 0;
                list.iter()
                    .map(|u| {
                        let u = u.as_str().ok_or_else(|| {
                            RpcError::invalid_params("`resourceSubscriptions` lists URI strings")
                        })?;
                        if u.len() > limits.uri_bytes {
                            return Err(RpcError::invalid_params(format!(
                                "a subscribed URI is longer than {} bytes",
                                limits.uri_bytes
                            )));
                        }
                        bytes += u.len();
                        if bytes > max_bytes {
                            return Err(RpcError::invalid_params(format!(
                                "at most {max_bytes} bytes of subscribed URIs per stream"
                            )));
                        }
                        Ok(u.to_owned())
                    })
                    .collect::<Result<_, _>>()?
            }
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "`notifications.resourceSubscriptions` must be an array",
                ));
            }
        };
        let task_ids = match n.and_then(|n| n.get("taskIds")) {
            None | Some(Value::Null) => Vec::new(),
            Some(ids) if offered.tasks => {
                if !meta.declares_tasks() {
                    return Err(super::tasks::extension_required("`taskIds`"));
                }
                let Some(list) = ids.as_array() else {
                    return Err(RpcError::invalid_params(
                        "`notifications.taskIds` must be an array",
                    ));
                };
                if list.len() > max_uris {
                    return Err(RpcError::invalid_params(format!(
                        "at most {max_uris} task subscriptions per stream"
                    )));
                }
                list.iter()
                    .map(|u| {
                        u.as_str().map(str::to_owned).ok_or_else(|| {
                            RpcError::invalid_params("`taskIds` lists task id strings")
                        })
                    })
                    .collect::<Result<_, _>>()?
            }
            Some(_) => Vec::new(),
        };
        Ok(Filter {
            task_ids,
            task_owner: String::new(),
            all_tasks: false,
            tools: flag("toolsListChanged"),
            prompts: offered.prompts && flag("promptsListChanged"),
            resources: offered.resources && flag("resourcesListChanged"),
            uris: if offered.resources { uris } else { Vec::new() },
            subscription: Some(id),
        })
    }

    /// A session stream's filter: every list the endpoint offers, and the session's
    /// subscriptions.
    pub(crate) fn session(offered: Offered, uris: Vec<String>) -> Self {
        Filter {
            task_ids: Vec::new(),
            task_owner: String::new(),
            all_tasks: false,
            tools: true,
            prompts: offered.prompts,
            resources: offered.resources,
            uris,
            subscription: None,
        }
    }

    /// `_meta` tagging a frame with the subscription id, when there is one.
    fn meta(&self) -> Option<Value> {
        self.subscription
            .as_ref()
            .map(|id| json!({ META_SUBSCRIPTION_ID: id }))
    }

    /// The acknowledgement, first on a listen stream: what the server honours.
    pub(crate) fn ack(&self) -> Vec<u8> {
        let mut n = Map::new();
        for (k, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                n.insert(k.into(), true.into());
            }
        }
        if !self.uris.is_empty() {
            n.insert("resourceSubscriptions".into(), json!(self.uris));
        }
        if !self.task_ids.is_empty() {
            n.insert("taskIds".into(), json!(self.task_ids));
        }
        let mut params = Map::new();
        if let Some(m) = self.meta() {
            params.insert("_meta".into(), m);
        }
        params.insert("notifications".into(), Value::Object(n));
        notification("notifications/subscriptions/acknowledged", params)
    }

    /// Whether this filter subscribed to `uri` (or a resource it is below).
    pub(crate) fn watches(&self, uri: &str) -> bool {
        self.uris.iter().any(|u| {
            uri == u
                || uri
                    .strip_prefix(u.as_str())
                    .is_some_and(|rest| rest.starts_with('/') || u.ends_with('/'))
        })
    }

    /// The notification of a change, if this stream sends it.
    pub(crate) fn frame(&self, change: &Change) -> Option<Vec<u8>> {
        if let Change::Task(n) = change {
            if n.owner != self.task_owner {
                return None;
            }
            if self.all_tasks {
                // A session's stream, 2025-11-25: the flat task.
                let params = super::tasks::status_members(&n.view);
                return Some(notification("notifications/tasks/status", params));
            }
            if !self.task_ids.iter().any(|t| *t == n.view.id) {
                return None;
            }
            let mut params = Map::new();
            if let Some(m) = self.meta() {
                params.insert("_meta".into(), m);
            }
            params.extend(super::tasks::detailed_members(&n.view));
            return Some(notification("notifications/tasks", params));
        }
        let (method, uri) = match change {
            Change::ToolsListChanged if self.tools => ("notifications/tools/list_changed", None),
            Change::PromptsListChanged if self.prompts => {
                ("notifications/prompts/list_changed", None)
            }
            Change::ResourcesListChanged if self.resources => {
                ("notifications/resources/list_changed", None)
            }
            Change::ResourceUpdated(u) if self.watches(u) => {
                ("notifications/resources/updated", Some(&**u))
            }
            _ => return None,
        };
        let mut params = Map::new();
        if let Some(m) = self.meta() {
            params.insert("_meta".into(), m);
        }
        if let Some(u) = uri {
            params.insert("uri".into(), u.into());
        }
        Some(notification(method, params))
    }

    /// The result ending a listen stream the server closes.
    pub(crate) fn end(&self) -> Vec<u8> {
        let mut result = Map::new();
        result.insert("resultType".into(), "complete".into());
        if let Some(m) = self.meta() {
            result.insert("_meta".into(), m);
        }
        crate::wire::result_body(crate::wire::Id::from(self.subscription.as_ref()), &result)
    }
}

/// A notice (params left out when there are none).
fn notification(method: &str, params: Map<String, Value>) -> Vec<u8> {
    crate::wire::notification_body(method, (!params.is_empty()).then_some(&params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::meta::Meta;

    const ALL: Offered = Offered {
        prompts: true,
        resources: true,
        tasks: true,
    };

    fn bounds(subscriptions: usize, subscription_bytes: usize) -> Limits {
        Limits {
            subscriptions,
            subscription_bytes,
            ..Limits::default()
        }
    }

    fn text(b: Option<Vec<u8>>) -> Option<String> {
        b.map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn a_listen_stream_acknowledges_tags_and_filters() {
        let params = json!({"notifications": {"promptsListChanged": true, "resourceSubscriptions": ["test://w"]}});
        let f = Filter::listen(
            json!("l-1"),
            Some(&params),
            &Meta::default(),
            ALL,
            &bounds(10, 1024),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(f.ack()).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l-1"},"notifications":{"promptsListChanged":true,"resourceSubscriptions":["test://w"]}}}"#
        );
        assert_eq!(f.frame(&Change::ToolsListChanged), None);
        assert_eq!(
            text(f.frame(&Change::ResourceUpdated("test://w/part".into()))).as_deref(),
            Some(
                r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l-1"},"uri":"test://w/part"}}"#
            )
        );
        assert_eq!(f.frame(&Change::ResourceUpdated("test://wx".into())), None);
        assert_eq!(
            String::from_utf8(f.end()).unwrap(),
            r#"{"jsonrpc":"2.0","id":"l-1","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"l-1"}}}"#
        );
    }

    #[test]
    fn only_what_is_offered_is_honoured_and_subscriptions_are_bounded() {
        let params =
            json!({"notifications": {"promptsListChanged": true, "resourcesListChanged": true}});
        let none = Offered {
            prompts: false,
            resources: false,
            tasks: false,
        };
        let f = Filter::listen(
            json!(1),
            Some(&params),
            &Meta::default(),
            none,
            &bounds(10, 1024),
        )
        .unwrap();
        assert!(!f.prompts && !f.resources);
        let many = json!({"notifications": {"resourceSubscriptions": ["a:1", "a:2", "a:3"]}});
        let e = Filter::listen(
            json!(1),
            Some(&many),
            &Meta::default(),
            ALL,
            &bounds(2, 1024),
        )
        .unwrap_err();
        assert_eq!(e.code(), -32602);
        // Bounded in bytes too: each URI, and all of them.
        let e = Filter::listen(json!(1), Some(&many), &Meta::default(), ALL, &bounds(10, 8))
            .unwrap_err();
        assert_eq!(e.message(), "at most 8 bytes of subscribed URIs per stream");
        let long = json!({"notifications": {"resourceSubscriptions": ["a".repeat(8 * 1024 + 1)]}});
        let e = Filter::listen(
            json!(1),
            Some(&long),
            &Meta::default(),
            ALL,
            &bounds(10, 1 << 20),
        )
        .unwrap_err();
        assert_eq!(e.message(), "a subscribed URI is longer than 8192 bytes");
    }
}
