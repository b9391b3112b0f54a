//! The server builder: methods, state, environment and options, turned into routers.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::serve::ListenerExt;

use crate::catalog::{Catalog, CatalogError, Registry};
use crate::context::StateMap;
use crate::core::Core;
use crate::env::{self, Environment};
use crate::jsonrpc::envelope::Limits;
use crate::jsonrpc::openrpc;
use crate::registry::{MethodDef, registered_methods};

/// Why a server could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The methods do not form valid catalogs.
    #[error("the method catalog is invalid:\n{}", .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Catalog(Vec<CatalogError>),
}

/// Server options.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub name: String,
    pub version: String,
    pub rpc_prefix: String,
    pub body_limit: usize,
    pub limits: Limits,
}

impl Config {
    pub fn rpc_path(&self, group: &str, version: u32) -> String {
        format!("{}/{group}/v{version}", self.rpc_prefix)
    }
}

/// Builds a [`Server`].
///
/// ```
/// use mcp_runtime::Server;
///
/// struct Db;
/// let server = Server::builder().name("shop").state(Db).build().unwrap();
/// let app: axum::Router = server.router();
/// # let _ = app;
/// ```
pub struct ServerBuilder {
    config: Config,
    env: Option<Environment>,
    state: StateMap,
    extra: Vec<&'static MethodDef>,
    registered: bool,
}

impl ServerBuilder {
    /// The server name (OpenRPC `info.title`, MCP `serverInfo.name`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.config.name = name.into();
        self
    }

    /// The server version (MCP `serverInfo.version`).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.config.version = version.into();
        self
    }

    /// The environment (default: `APP_ENV`, else `prod`).
    pub fn env(mut self, env: Environment) -> Self {
        self.env = Some(env);
        self
    }

    /// Adds shared state of type `T`: taken by `State<T>` parameters, and the instance that
    /// `#[rpc_service]` methods of `T` are called on.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Adds shared state already in an `Arc`.
    pub fn state_arc<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.state.insert_arc(value);
        self
    }

    /// Registers a method record built at run time (beside those of `#[rpc_method]`).
    pub fn method(mut self, def: &'static MethodDef) -> Self {
        self.extra.push(def);
        self
    }

    /// Serves only methods given with [`ServerBuilder::method`], not the `inventory` ones.
    pub fn without_registered_methods(mut self) -> Self {
        self.registered = false;
        self
    }

    /// The path prefix of the JSON-RPC routes (default `/rpc`).
    pub fn rpc_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.config.rpc_prefix = prefix.into().trim_end_matches('/').to_owned();
        self
    }

    /// The largest request body accepted (default 4 MiB); larger ones get 413.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.config.body_limit = bytes;
        self
    }

    /// The most items a JSON-RPC batch may have (default 1000).
    pub fn max_batch(mut self, items: usize) -> Self {
        self.config.limits.max_batch = items;
        self
    }

    /// Builds the catalogs and precomputes what requests read.
    pub fn build(self) -> Result<Server, BuildError> {
        let env = self.env.unwrap_or_else(Environment::from_env);
        env::set_global(&env);
        let defs = self
            .registered
            .then(registered_methods)
            .into_iter()
            .flatten()
            .chain(self.extra);
        let registry = Registry::build(defs).map_err(BuildError::Catalog)?;
        let core = Core::new(env, Arc::new(self.state));
        Ok(Server {
            inner: Arc::new(ServerInner {
                core,
                registry,
                config: self.config,
            }),
        })
    }
}

pub(crate) struct ServerInner {
    pub core: Core,
    pub registry: Registry,
    pub config: Config,
}

impl ServerInner {
    pub fn openrpc_bytes(&self, catalog: &Catalog, url: &str) -> Bytes {
        let versions = self.registry.versions(catalog.group().name());
        let doc = openrpc::document(catalog, &self.config.name, &versions, url);
        Bytes::from(serde_json::to_vec(&doc).unwrap_or_default())
    }
}

/// A built server: its catalogs, core and routers.
#[derive(Clone)]
pub struct Server {
    inner: Arc<ServerInner>,
}

impl Server {
    /// A builder with defaults.
    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            config: Config {
                name: "mcp-runtime".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                rpc_prefix: "/rpc".into(),
                body_limit: 4 * 1024 * 1024,
                limits: Limits::default(),
            },
            env: None,
            state: StateMap::default(),
            extra: Vec::new(),
            registered: true,
        }
    }

    /// The catalogs.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The core pipeline.
    pub fn core(&self) -> &Core {
        &self.inner.core
    }

    /// The OpenRPC document of a group and version, exactly as `GET` serves it.
    pub fn openrpc(&self, group: &str, version: u32) -> Option<Bytes> {
        let catalog = self.inner.registry.catalog(group, version)?;
        Some(
            self.inner
                .openrpc_bytes(catalog, &self.inner.config.rpc_path(group, version)),
        )
    }

    /// An axum router with every endpoint; merge or nest it into your app.
    pub fn router(&self) -> Router {
        crate::transport::http::rpc_router(&self.inner)
    }

    /// Serves on `addr` until Ctrl-C or SIGTERM (TCP_NODELAY set on every connection).
    pub async fn serve(&self, addr: SocketAddr) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_listener(listener, shutdown_signal()).await
    }

    /// Serves on a bound listener until `shutdown` completes.
    pub async fn serve_listener(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        // Without TCP_NODELAY, responses written in several pieces stall ~40 ms (Nagle + delayed ACK).
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, self.router())
            .with_graceful_shutdown(shutdown)
            .await
    }
}

/// Completes on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
