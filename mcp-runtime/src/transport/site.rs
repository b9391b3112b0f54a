//! What the transports serve, built once by the server: the core, the catalogs and their
//! endpoints, and the settings of the routes.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;

use crate::catalog::Catalog;
use crate::core::Core;
use crate::edge::{HostPolicy, Limits};
use crate::mcp::handler::McpEndpoint;
use crate::registry::Registry;

/// Everything the routes read; shared by every route and never changed after the build.
pub(crate) struct Site {
    pub core: Core,
    pub registry: Registry,
    pub translations: Arc<crate::i18n::Translations>,
    pub mcp: BTreeMap<(&'static str, u32), Arc<McpEndpoint>>,
    /// The server name (OpenRPC `info.title`).
    pub name: String,
    pub rpc_prefix: String,
    pub mcp_prefix: String,
    pub limits: Limits,
    pub hosts: HostPolicy,
    pub auth: Arc<super::auth::AuthConfig>,
    /// Webhooks of asynchronous JSON-RPC calls (`$rpc.callback`), if configured.
    pub callbacks: Option<Arc<dyn crate::jsonrpc::callback::CallbackClient>>,
}

impl Site {
    /// The JSON-RPC path of a group and version.
    pub fn rpc_path(&self, group: &str, version: u32) -> String {
        format!("{}/{group}/v{version}", self.rpc_prefix)
    }

    /// The OpenRPC document of a catalog in a language, served at `url`.
    pub fn openrpc_bytes(&self, catalog: &Catalog, lang: &str, url: &str) -> Bytes {
        let versions = self.registry.versions(catalog.group().name());
        let doc = crate::jsonrpc::openrpc::document(
            catalog,
            &self.translations,
            lang,
            &self.name,
            &versions,
            url,
        );
        Bytes::from(serde_json::to_vec(&doc).unwrap_or_default())
    }
}
