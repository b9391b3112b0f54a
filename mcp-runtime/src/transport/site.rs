//! What the transports serve, built once by the server: the core, the catalogs and their
//! endpoints, and the settings of the routes.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::Limits;
use crate::core::Core;
use crate::edge::HostPolicy;
use crate::jsonrpc::discovery::Discovery;
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
    /// The static tokens, when they are the validator (read by the guards directly).
    pub statics: Option<Arc<super::auth::StaticTokens>>,
    /// Webhooks of asynchronous JSON-RPC calls (`$rpc.callback`), if configured.
    pub callbacks: Option<Arc<dyn crate::jsonrpc::callback::CallbackClient>>,
    /// The shared store, for what operators ask of every instance's work.
    #[cfg(feature = "redis")]
    pub redis: Option<crate::core::redis::RedisStore>,
    /// Where deliveries are kept until delivered (with Redis and webhooks).
    pub deliveries: crate::jsonrpc::callback::Durable,
    /// The callbacks in flight per destination host ([`Limits::callbacks_per_host`]).
    pub callback_hosts: Arc<crate::edge::places::Places<Arc<str>>>,
    /// With Redis: the places every instance holds per holder, so that a share is one share
    /// across instances.
    pub shares: Option<Arc<crate::core::shares::Shares>>,
    /// The discovery documents of every catalog, built once.
    pub discovery: BTreeMap<(&'static str, u32), Arc<Discovery>>,
    /// What `/readyz` asks; `None` when the server serves no health routes.
    pub health: Option<Arc<super::health::Health>>,
    /// The metrics route's path and what it renders ([`crate::ServerBuilder::metrics_route`]).
    #[cfg(feature = "otel")]
    pub metrics: Option<(String, crate::otel::Otel)>,
}

impl Site {
    /// The JSON-RPC path of a group and version.
    pub fn rpc_path(&self, group: &str, version: u32) -> String {
        rpc_path(&self.rpc_prefix, group, version)
    }

    /// The discovery documents of a group and version.
    pub fn discovery(&self, group: &str, version: u32) -> Option<&Arc<Discovery>> {
        let catalog = self.registry.catalog(group, version)?;
        self.discovery.get(&(catalog.group().name(), version))
    }

    /// The discovery documents of every catalog of `registry` (see [`Site::discovery`]), each
    /// serialized on its first request.
    pub fn discoveries(
        registry: &Registry,
        translations: &Arc<crate::i18n::Translations>,
        name: &str,
        rpc_prefix: &str,
        limits: &Limits,
        auth: &super::auth::AuthConfig,
    ) -> BTreeMap<(&'static str, u32), Arc<Discovery>> {
        registry
            .catalogs()
            .map(|catalog| {
                let group = catalog.group();
                let versions = registry.versions(group.name());
                let path = rpc_path(rpc_prefix, group.name(), catalog.version());
                let setup = crate::jsonrpc::discovery::Setup {
                    translations,
                    language_ranges: limits.language_ranges,
                    server_name: name,
                    versions: &versions,
                    path: &path,
                    public_url: auth.public_url.as_deref(),
                    token_header: group.is_protected().then_some(auth.header.as_str()),
                };
                let d = Discovery::new(catalog, &setup);
                ((group.name(), catalog.version()), Arc::new(d))
            })
            .collect()
    }
}

/// The JSON-RPC path of a group and version under `rpc_prefix`.
fn rpc_path(rpc_prefix: &str, group: &str, version: u32) -> String {
    format!("{rpc_prefix}/{group}/v{version}")
}
