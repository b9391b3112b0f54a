//! An in-process client of a [`Server`]: calls its JSON-RPC methods and its MCP tools,
//! resources and prompts through the same edge and pipeline as HTTP and stdio, without a
//! socket. Made for tests.
//!
//! ```
//! use mcp_runtime::prelude::*;
//! use serde_json::json;
//!
//! pub const SHOP: ApiGroup = ApiGroup::mcp("client_doc");
//!
//! /// Greets someone.
//! #[rpc_method(name = "Shop.greet", groups = [SHOP])]
//! fn greet(name: String) -> String {
//!     format!("Hello, {name}!")
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder().build().unwrap();
//! let client = server.client("client_doc", 1);
//! assert_eq!(client.call("Shop.greet", json!({"name": "Ann"})).await.unwrap(), json!("Hello, Ann!"));
//! let result = client.call_tool("Shop.greet", json!({"name": "Bob"})).await.unwrap();
//! assert_eq!(result["structuredContent"]["result"], "Hello, Bob!");
//! let e = client.call("Shop.greet", json!({})).await.unwrap_err();
//! assert_eq!(e.code(), -32602);
//! # }
//! ```

use std::sync::Arc;

use serde_json::{Value, json};

use crate::context::CallExtras;
use crate::error::RpcError;
use crate::mcp::handler::Message;
use crate::mcp::protocol::{self, Era};
use crate::server::Server;

/// A client of one group and version of a server, in process.
#[derive(Clone)]
pub struct Client {
    server: Server,
    group: String,
    version: u32,
    language: Option<Arc<str>>,
    era: Era,
    identity: Option<Arc<crate::Identity>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("group", &self.group)
            .field("version", &self.version)
            .field("language", &self.language)
            .field("era", &self.era)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// An in-process client of one group and version: calls its methods, tools, resources and
    /// prompts through the same edge and pipeline as HTTP, without a socket (for tests).
    pub fn client(&self, group: &str, version: u32) -> Client {
        Client::new(self.clone(), group, version)
    }
}

impl Client {
    pub(crate) fn new(server: Server, group: &str, version: u32) -> Self {
        Self {
            server,
            group: group.to_owned(),
            version,
            language: None,
            era: Era::latest_stateless(),
            identity: None,
        }
    }

    /// Asks for texts in `lang` (as `Accept-Language` would, among the server's languages).
    pub fn language(mut self, lang: &str) -> Self {
        self.language = Some(Arc::from(self.server.translations().pick(Some(lang))));
        self
    }

    /// Speaks the MCP revision `version` (default 2026-07-28); a handshake-era one is used as
    /// if `initialize` had negotiated it, without a session.
    pub fn protocol_version(mut self, version: &str) -> Self {
        self.era = Era::of(version).unwrap_or_else(Era::latest_stateless);
        self
    }

    /// Calls as `identity`, as if the token validator had found it: methods read it from
    /// their context, scopes are checked against it, MCP lists show what it may call.
    pub fn identity(mut self, identity: crate::Identity) -> Self {
        self.identity = Some(Arc::new(identity));
        self
    }

    fn unknown(&self, face: &str) -> RpcError {
        RpcError::invalid_request(format!(
            "no {face} group `{}` version {}",
            self.group, self.version
        ))
    }

    /// Whom its calls count against: its identity's subject, else the process itself.
    fn caller(&self) -> crate::Caller {
        crate::edge::caller::choose(self.identity.as_deref(), None, None)
            .unwrap_or_else(crate::Caller::local)
    }

    /// Calls a JSON-RPC method (`params`: an object, an array or `null`): what `POST
    /// /rpc/{group}/v{N}` answers, as the result or the error (`rpc.discover` included: the
    /// OpenRPC document in the client's language).
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let site = self.server.site();
        let catalog = site
            .registry
            .catalog(&self.group, self.version)
            .ok_or_else(|| self.unknown("JSON-RPC"))?;
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let body = serde_json::to_vec(&body).map_err(|e| RpcError::internal(e.to_string()))?;
        let discovery = site.discovery(&self.group, self.version);
        let discover = discovery.map(|discovery| crate::jsonrpc::discovery::Discover {
            discovery,
            accept_language: self.language.as_deref(),
            prefix: "",
            host: None,
        });
        let caller = self.caller();
        let who = crate::jsonrpc::face::Requester {
            identity: self.identity.as_ref(),
            caller: Some(&caller),
            trace: None,
        };
        let scope = crate::jsonrpc::face::Scope {
            who: &who,
            discover: discover.as_ref(),
            ..Default::default()
        };
        let reply =
            crate::jsonrpc::face::scoped(&site.core, catalog, &body, &site.limits, None, scope)
                .await;
        outcome(reply.body.as_deref().unwrap_or(b"null"))
    }

    /// Sends one MCP request (`params` without `_meta`: it is added on 2026-07-28) and returns
    /// its result or error, as the endpoint answers it over HTTP.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let ep = self
            .server
            .mcp_endpoint(&self.group, self.version)
            .ok_or_else(|| self.unknown("MCP"))?;
        let mut params = match params {
            Value::Null => json!({}),
            p => p,
        };
        if self.era.stateless()
            && let Value::Object(p) = &mut params
        {
            let meta = p.entry("_meta").or_insert_with(|| json!({}));
            if let Value::Object(m) = meta {
                m.entry(protocol::META_PROTOCOL_VERSION)
                    .or_insert_with(|| self.era.version().into());
                m.entry(protocol::META_CLIENT_CAPABILITIES)
                    .or_insert_with(|| json!({}));
            }
        }
        let mut msg = Message::new(Some(json!(1)), method, Some(params));
        if self.era.stateless()
            && let Err(answer) = ep.check_modern_meta(&msg)
        {
            return outcome(&answer.body.into_vec());
        }
        let mut extras = CallExtras {
            language: self.language.clone(),
            identity: self.identity.clone(),
            caller: Some(self.caller()),
            ..CallExtras::default()
        };
        let answer = ep.serve(&mut msg, self.era, &mut extras).await;
        outcome(&answer.body.into_vec())
    }

    /// `tools/call`: the tool result (`content`, `structuredContent`, `isError`).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, RpcError> {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// `resources/read`: the result (`contents`).
    pub async fn read_resource(&self, uri: &str) -> Result<Value, RpcError> {
        self.request("resources/read", json!({ "uri": uri })).await
    }

    /// `prompts/get` with string arguments: the result (`messages`, `description`).
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<Value, RpcError> {
        self.request("prompts/get", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// The whole list a paginated method returns (`tools/list` → `tools`, ...), every page.
    pub async fn list(&self, method: &str, key: &str) -> Result<Vec<Value>, RpcError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let mut page = self.request(method, params).await?;
            if let Some(Value::Array(list)) = page.get_mut(key).map(Value::take) {
                items.extend(list);
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) => cursor = Some(c.to_owned()),
                None => return Ok(items),
            }
        }
    }
}

/// The result of a response, or its error as an [`RpcError`] (code, message and data).
fn outcome(body: &[u8]) -> Result<Value, RpcError> {
    let mut v: Value = serde_json::from_slice(body)
        .map_err(|e| RpcError::internal(format!("the answer is not JSON: {e}")))?;
    if let Some(e) = v.get_mut("error").map(Value::take) {
        let code = e
            .get("code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(crate::error::codes::INTERNAL_ERROR);
        let message = e
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        return Err(RpcError::from_wire(code, message, e.get("data").cloned()));
    }
    Ok(v.get_mut("result").map(Value::take).unwrap_or(Value::Null))
}
