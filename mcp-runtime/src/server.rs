//! The server builder: methods, state, environment and options, turned into routers.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;

use std::collections::BTreeMap;

use crate::catalog::CatalogError;
use crate::context::StateMap;
use crate::core::events::{EventKind, FnListener, Listener, Listeners};
use crate::core::{CacheStore, Core, LockStore, StoreError};
use crate::edge::HostPolicy;
use crate::env::Environment;
use crate::limits::Limits;
use crate::mcp::handler::McpEndpoint;
use crate::mcp::{InvalidArguments, McpOptions, MemorySessions, SessionStore};
use crate::record::{MethodDef, PromptDef, ResourceDef, registered_methods};
use crate::registry::Registry;
use crate::transport::site::Site;

/// The default HTTP address of `serve` (and of the URLs written when none is known).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// Why a server could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The methods do not form valid catalogs.
    #[error("the method catalog is invalid:\n{}", .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Catalog(Vec<CatalogError>),
    /// Translation files are malformed or name unknown methods or groups.
    #[error("the translations are invalid:\n{}", .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Translations(Vec<crate::i18n::TranslationError>),
    /// Input schemas that do not compile (an invalid `#[param(pattern)]` regex, say), each
    /// naming its method and, when it can, its parameter.
    #[error("input schemas do not compile:\n{}", .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Schema(Vec<crate::catalog::SchemaError>),
    /// A cache or lock backend could not be set up.
    #[error("the cache/lock store is misconfigured: {0}")]
    Store(#[from] StoreError),
    /// Builder settings that name a group or method the catalogs do not have
    /// (`mcp_stateful("...")`, `call_timeout_for("...")`): a typo would otherwise be ignored.
    #[error("the settings name what does not exist:\n{}", .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Settings(Vec<String>),
    /// Methods taking a `State<T>` (or, in an `#[rpc_service]`, called on an instance) of a type
    /// no `ServerBuilder::state` provided: every call would fail.
    #[error("methods need state that was not provided:\n{}", .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    MissingState(Vec<String>),
}

/// The methods of `registry` that need a state `state` does not hold, one line each.
fn missing_states(registry: &Registry, state: &crate::context::StateMap) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut errors = Vec::new();
    for c in registry.catalogs() {
        for m in c.methods() {
            let def = m.def;
            for needed in def.states {
                let Some((id, type_name)) = needed() else {
                    continue;
                };
                if !state.contains(id) && seen.insert((def.name, type_name)) {
                    errors.push(format!(
                        "method `{}` needs state `{type_name}`, which no `ServerBuilder::state` \
                         provides (defined at {})",
                        def.name, def.location
                    ));
                }
            }
        }
    }
    errors
}

/// The settings of `config` that name a group or method `registry` does not have.
fn unknown_names(config: &Config, registry: &Registry) -> Vec<String> {
    let mut errors = Vec::new();
    let mcp_groups: Vec<&str> = registry
        .groups()
        .iter()
        .filter(|g| g.is_mcp())
        .map(|g| g.name())
        .collect();
    let named = config.stateful.iter().map(|g| ("mcp_stateful", g)).chain(
        config
            .in_advance
            .iter()
            .map(|g| ("mcp_answers_in_advance", g)),
    );
    for (setting, g) in named {
        if !mcp_groups.contains(&g.as_str()) {
            errors.push(format!(
                "{setting}(\"{g}\"): no MCP group `{g}` (MCP groups: {})",
                mcp_groups.join(", ")
            ));
        }
    }
    let mut timed: Vec<&String> = config.method_timeouts.keys().collect();
    timed.sort();
    for m in timed {
        if !registry.catalogs().any(|c| c.get(m).is_some()) {
            errors.push(format!("call_timeout_for(\"{m}\"): no method `{m}`"));
        }
    }
    errors
}

/// Server options.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub name: String,
    pub version: String,
    pub rpc_prefix: String,
    pub mcp_prefix: String,
    pub limits: Limits,
    pub hosts: HostPolicy,
    pub mcp: McpOptions,
    pub stateful: Vec<String>,
    /// MCP groups whose first 2026-07-28 call may bring answers it was not asked for yet.
    pub in_advance: Vec<String>,
    pub auth: Arc<crate::transport::auth::AuthConfig>,
    pub method_timeouts: std::collections::HashMap<String, std::time::Duration>,
    /// Whether stdio may serve protected groups (it has no token to check).
    pub stdio_protected: bool,
    /// `serve` says nothing when it starts listening.
    pub quiet: bool,
    /// The router serves `/healthz` and `/readyz`.
    pub health_routes: bool,
    /// The groups the application says it serves ([`ServerBuilder::groups`]).
    pub declared_groups: Vec<crate::ApiGroup>,
    /// Whether this instance runs accepted work ([`ServerBuilder::runs_work`]).
    pub runs_work: bool,
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
    /// The static tokens given so far (`api_token`, `api_tokens`).
    tokens: Vec<crate::transport::auth::ApiToken>,
    /// The validator they make, when it is the server's.
    statics: Option<Arc<crate::transport::auth::StaticTokens>>,
    env: Option<Environment>,
    state: StateMap,
    extra: Vec<&'static MethodDef>,
    registered: bool,
    extra_resources: Vec<&'static ResourceDef>,
    extra_prompts: Vec<&'static PromptDef>,
    sessions: Option<Arc<dyn SessionStore>>,
    callbacks: Option<Arc<dyn crate::jsonrpc::callback::CallbackClient>>,
    /// The Redis connection of [`ServerBuilder::redis`]: sessions are kept there (bounded by
    /// the limits) unless a session store is given.
    #[cfg(feature = "redis")]
    redis: Option<crate::core::RedisStore>,
    listeners: Listeners,
    cache: Option<Arc<dyn CacheStore>>,
    locks: Option<Arc<dyn LockStore>>,
    store_error: Option<StoreError>,
    translations: TranslationSource,
    default_language: String,
    strictness: crate::i18n::Strictness,
    #[cfg(feature = "otel")]
    otel: Option<crate::otel::Otel>,
    #[cfg(feature = "otel")]
    metrics_route: Option<String>,
}

/// Where translation files come from.
enum TranslationSource {
    None,
    Dir(std::path::PathBuf),
    Embedded(&'static [(&'static str, &'static str)]),
}

impl ServerBuilder {
    /// Loads translation files (`rpc.<lang>.yaml`, `rpc/<group>.<lang>.yaml`) from a directory at
    /// startup.
    pub fn translations_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.translations = TranslationSource::Dir(dir.into());
        self
    }

    /// Uses translation files embedded in the binary: `(relative name, text)` pairs, e.g.
    /// `("rpc.en.yaml", include_str!("../translations/rpc.en.yaml"))`.
    pub fn translations_embedded(mut self, files: &'static [(&'static str, &'static str)]) -> Self {
        self.translations = TranslationSource::Embedded(files);
        self
    }

    /// The language of doc comments and of requests without `Accept-Language` (default `en`).
    pub fn default_language(mut self, lang: impl Into<String>) -> Self {
        self.default_language = lang.into();
        self
    }

    /// Whether unknown methods or groups in translation files fail startup (default) or warn.
    pub fn translation_strictness(mut self, s: crate::i18n::Strictness) -> Self {
        self.strictness = s;
        self
    }
    /// Adds a listener of `kind`; higher `priority` runs first. `#[rpc_listener]` functions are
    /// added too.
    pub fn listener(mut self, kind: EventKind, priority: i32, listener: impl Listener) -> Self {
        let name = std::any::type_name_of_val(&listener).to_owned();
        self.listeners.add(kind, priority, name, Arc::new(listener));
        self
    }

    /// Adds a synchronous closure as a listener of `kind` (priority 0).
    pub fn on(
        self,
        kind: EventKind,
        f: impl Fn(&mut crate::core::Event<'_>) -> Result<(), crate::RpcError> + Send + Sync + 'static,
    ) -> Self {
        self.listener(kind, 0, FnListener(f))
    }

    /// Records the server's spans' metrics through `otel` (its meter), by the OpenTelemetry
    /// conventions for MCP and JSON-RPC; see [`crate::otel`].
    #[cfg(feature = "otel")]
    pub fn otel(mut self, otel: &crate::otel::Otel) -> Self {
        self.otel = Some(otel.clone());
        self
    }

    /// Serves the metrics at `path` (e.g. `/metrics`) in the Prometheus text format, outside
    /// the endpoints' prefixes and their checks, as `/healthz` is. Without
    /// [`Self::otel`] the server makes an [`Otel`](crate::otel::Otel) of its own that keeps
    /// the metrics for the scrape only; one given must be built with
    /// [`prometheus`](crate::otel::OtelBuilder::prometheus).
    #[cfg(feature = "otel")]
    pub fn metrics_route(mut self, path: impl Into<String>) -> Self {
        self.metrics_route = Some(path.into());
        self
    }

    /// The cache backend (default: in-process, bounded).
    pub fn cache_store(mut self, store: Arc<dyn CacheStore>) -> Self {
        self.cache = Some(store);
        self
    }

    /// The lock backend (default: in-process).
    pub fn lock_store(mut self, store: Arc<dyn LockStore>) -> Self {
        self.locks = Some(store);
        self
    }

    /// Shares cache, locks, MCP sessions and tasks through Redis (`redis://host:port`), or a
    /// Redis Cluster given by seed nodes (`redis+cluster://host:port,host:port`, see
    /// [`RedisStore::connect`](crate::core::RedisStore::connect)), so several instances see
    /// the same entries and locks. The connection is made lazily: the server starts while
    /// Redis is down (cached calls then run uncached; locked calls fail until it is back).
    /// An invalid URL makes [`ServerBuilder::build`] fail. Needs the `redis` feature.
    #[cfg(feature = "redis")]
    pub fn redis(mut self, url: &str) -> Self {
        match crate::core::RedisStore::connect(url) {
            Ok(store) => {
                self.redis = Some(store.clone());
                let store = Arc::new(store);
                self.cache_store(store.clone()).lock_store(store)
            }
            Err(e) => {
                self.store_error = Some(e);
                self
            }
        }
    }

    /// Tokens that open protected groups (`ApiGroup::...().protected()`), each letting its
    /// holder in anonymously, compared in constant time. With none, protected groups refuse
    /// everyone (fail closed). Adds to the tokens given before.
    pub fn api_tokens<I: IntoIterator<Item = S>, S: AsRef<str>>(self, tokens: I) -> Self {
        self.add_tokens(
            tokens
                .into_iter()
                .map(crate::transport::auth::ApiToken::new),
        )
    }

    /// A token that opens protected groups as someone, with scopes: per-method
    /// `scopes = [...]` work without a validator of your own. Adds to the tokens given
    /// before.
    ///
    /// ```
    /// use mcp_runtime::Server;
    /// use mcp_runtime::transport::auth::ApiToken;
    ///
    /// let builder = Server::builder()
    ///     .api_token(ApiToken::new("ci-secret").subject("ci").scopes(["notes:admin"]))
    ///     .api_token(ApiToken::new("reader-secret").subject("reader"));
    /// # let _ = builder;
    /// ```
    pub fn api_token(self, token: crate::transport::auth::ApiToken) -> Self {
        self.add_tokens([token])
    }

    /// The static tokens given before and `more`, as one validator (built once per call, not
    /// once per token).
    fn add_tokens(
        mut self,
        more: impl IntoIterator<Item = crate::transport::auth::ApiToken>,
    ) -> Self {
        let mut tokens = std::mem::take(&mut self.tokens);
        tokens.extend(more);
        let validator = Arc::new(crate::transport::auth::StaticTokens::of(
            tokens.iter().cloned(),
        ));
        self = self.token_validator(validator.clone());
        self.tokens = tokens;
        self.statics = Some(validator);
        self
    }

    /// Checks tokens of protected groups with your own validator (JWTs, an identity provider),
    /// instead of static tokens.
    pub fn token_validator(mut self, v: Arc<dyn crate::transport::auth::TokenValidator>) -> Self {
        self.tokens.clear();
        self.statics = None;
        Arc::make_mut(&mut self.config.auth).validator = v;
        self
    }

    /// The JSON-RPC token header (default `Authorization: Bearer <token>`; e.g. `Ufo-RPC-Token`).
    pub fn token_header(mut self, name: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.config.auth).header = name.into().to_ascii_lowercase();
        self
    }

    /// The OAuth authorization servers advertised in the MCP resource metadata, and its scopes.
    pub fn authorization_servers<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        servers: I,
        scopes: &[&str],
    ) -> Self {
        let a = Arc::make_mut(&mut self.config.auth);
        a.authorization_servers = servers.into_iter().map(Into::into).collect();
        a.scopes = scopes.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    /// The public base URL (for resource metadata behind a proxy), e.g. `https://api.example.com`.
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.config.auth).public_url = Some(url.into());
        self
    }

    /// Every bound at once (see [`Limits`] for each one's default); the methods below set one.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.config.limits = limits;
        self
    }

    /// How long a client may take to send request headers ([`Limits::header_timeout`]).
    pub fn header_timeout(mut self, d: std::time::Duration) -> Self {
        self.config.limits.header_timeout = d;
        self
    }

    /// How long a request may take from its headers to its response headers, body upload
    /// included ([`Limits::request_timeout`]; then 408). `None` disables it.
    pub fn request_timeout(mut self, d: Option<std::time::Duration>) -> Self {
        self.config.limits.request_timeout = d;
        self
    }

    /// How long in-flight requests and `post_response` work may take after shutdown begins
    /// ([`Limits::shutdown_grace`]).
    pub fn shutdown_grace(mut self, d: std::time::Duration) -> Self {
        self.config.limits.shutdown_grace = d;
        self
    }

    /// How long the server goes on serving, `/readyz` answering 503, between a shutdown signal
    /// and the drain ([`Limits::unready_delay`]): behind a load balancer, at least its
    /// health-check interval times the failures it waits for.
    pub fn unready_delay(mut self, d: std::time::Duration) -> Self {
        self.config.limits.unready_delay = d;
        self
    }

    /// How long a webhook delivery is tried before it goes to the dead letters
    /// ([`Limits::callback_horizon`]; with Redis).
    pub fn callback_horizon(mut self, d: std::time::Duration) -> Self {
        self.config.limits.callback_horizon = d;
        self
    }

    /// Declares the groups this server is meant to serve, so that a group that nothing was
    /// put in (no method, resource or prompt names it: a missing `groups = [...]`, a
    /// misspelled constant) is reported: by `check` as a warning, and by
    /// [`ServerBuilder::build`] as a `warn` event. Optional: a server serves the groups its
    /// methods name either way.
    ///
    /// ```
    /// use mcp_runtime::{ApiGroup, Server};
    ///
    /// const NOTES: ApiGroup = ApiGroup::mcp("notes");
    /// let server = Server::builder().groups([NOTES]).build().unwrap();
    /// assert_eq!(
    ///     server.warnings(),
    ///     ["group `notes` is declared but no method, resource or prompt is in it: it serves nothing"]
    /// );
    /// ```
    pub fn groups(mut self, groups: impl IntoIterator<Item = crate::ApiGroup>) -> Self {
        self.config.declared_groups.extend(groups);
        self
    }

    /// Whether this instance runs the calls of the tasks it accepts (default `true`). With
    /// `false` it is a front: each task it accepts is queued on Redis and answered, and a
    /// worker runs it ([`Server::serve_worker`], `catalog worker`), so fronts and workers scale
    /// apart. A 2026-07-28 call that becomes a task was started here: it stops here, and the
    /// worker runs it from its start (its first run). Needs [`ServerBuilder::redis`]: `build`
    /// fails without it.
    pub fn runs_work(mut self, yes: bool) -> Self {
        self.config.runs_work = yes;
        self
    }

    /// Leaves `/healthz` and `/readyz` out of the router (they are in by default), e.g. when
    /// the application it is merged into serves its own under those paths.
    ///
    /// `/healthz` answers 200 while the process serves; `/readyz` answers 200 when the
    /// instance should get traffic, and 503 with the reasons when it drains (after a shutdown
    /// signal, see [`ServerBuilder::unready_delay`]) or its Redis does not answer.
    pub fn without_health_routes(mut self) -> Self {
        self.config.health_routes = false;
        self
    }

    /// Starts serving without the line [`Server::serve`] otherwise writes (its address and
    /// endpoints, to stderr, or as an `info` event when a `tracing` subscriber is installed).
    pub fn quiet(mut self) -> Self {
        self.config.quiet = true;
        self
    }

    /// Lets [`Server::serve_stdio`] serve a protected group. Off by default: stdio carries no
    /// token, so whoever can start the process gets the group; turn it on only when that is
    /// the access control you want (a local tool run by its user).
    pub fn stdio_serves_protected(mut self, on: bool) -> Self {
        self.config.stdio_protected = on;
        self
    }

    /// A time limit for every method: when it passes, the call fails with -32500 ``Method 'NAME'
    /// timed out after N ms``. An async method's future is dropped then; a sync method, which
    /// cannot be stopped, runs on tokio's blocking pool and finishes there (holding its lock, if
    /// any, until it returns).
    pub fn call_timeout(mut self, d: std::time::Duration) -> Self {
        self.config.limits.call_timeout = Some(d);
        self
    }

    /// A time limit for one method, by name (overrides [`ServerBuilder::call_timeout`]).
    pub fn call_timeout_for(mut self, method: impl Into<String>, d: std::time::Duration) -> Self {
        self.config.method_timeouts.insert(method.into(), d);
        self
    }

    /// The path prefix of the MCP routes (default `/mcp`).
    pub fn mcp_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.config.mcp_prefix = prefix.into().trim_end_matches('/').to_owned();
        self
    }

    /// Serves this MCP group in the stateful mode of the handshake era: `initialize` opens a
    /// session (`Mcp-Session-Id`), `tools/call` answers on a resumable SSE stream.
    pub fn mcp_stateful(mut self, group: impl Into<String>) -> Self {
        self.config.stateful.push(group.into());
        self
    }

    /// Lets a 2026-07-28 call of this MCP group bring, without a `requestState`, the answers
    /// to questions its method will ask (SEP-2322 allows a client to answer in advance; the
    /// conformance suite's `input-required-result-ignore-extra-params` expects it). Off by
    /// default: a first call's `inputResponses` are ignored and the method asks, so a client
    /// cannot answer a confirmation the user was never shown.
    pub fn mcp_answers_in_advance(mut self, group: impl Into<String>) -> Self {
        self.config.in_advance.push(group.into());
        self
    }

    /// Where sessions of stateful groups live (default: in memory).
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.sessions = Some(store);
        self
    }

    /// The key that signs 2026-07-28 `requestState`s (multi-round-trip results,
    /// [`crate::mcp::input`]). The default is random per process: **instances behind one
    /// address (a load balancer) must share a key** from configuration, or a retry reaching
    /// another instance is refused. Use at least 32 random bytes.
    pub fn request_state_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.config.mcp.request_state_keys = crate::mcp::RequestStateKeys::new(key);
        self
    }

    /// Keys that sign 2026-07-28 `requestState`s, for rotation: `keys` signs, and states
    /// signed with `keys`'s previous ones are still accepted ([`crate::mcp::RequestStateKeys`]).
    pub fn request_state_keys(mut self, keys: crate::mcp::RequestStateKeys) -> Self {
        self.config.mcp.request_state_keys = keys;
        self
    }

    /// Enables asynchronous JSON-RPC calls (`params.$rpc.callback`): answered at once, run
    /// in the background, their response POSTed to the callback through `client`
    /// ([`crate::jsonrpc::callback`]).
    pub fn callbacks(mut self, client: Arc<dyn crate::jsonrpc::callback::CallbackClient>) -> Self {
        self.callbacks = Some(client);
        self
    }

    /// [`Self::callbacks`] with [`crate::jsonrpc::callback::HttpCallbacks`]: webhooks over
    /// HTTP and HTTPS to public host names (feature `webhooks`).
    #[cfg(feature = "webhooks")]
    pub fn webhooks(self) -> Self {
        self.callbacks(Arc::new(crate::jsonrpc::callback::HttpCallbacks::new()))
    }

    /// How `tools/call` answers arguments that fail the schema (default: JSON-RPC -32602).
    pub fn mcp_invalid_arguments(mut self, mode: InvalidArguments) -> Self {
        self.config.mcp.invalid_arguments = mode;
        self
    }

    /// Tools per `tools/list` page (default 50).
    pub fn mcp_page_size(mut self, size: usize) -> Self {
        self.config.mcp.list.page_size = size.max(1);
        self
    }

    /// Inlines `$defs` in tool schemas except where recursion needs them (default: keep them),
    /// for MCP hosts that reject `$ref`.
    pub fn mcp_inline_defs(mut self, on: bool) -> Self {
        self.config.mcp.list.inline_defs = on;
        self
    }

    /// How tool schemas write nullable types (default `anyOf` with `{"type":"null"}`).
    pub fn mcp_nullable(mut self, style: crate::schema::Nullable) -> Self {
        self.config.mcp.list.nullable = style;
        self
    }

    /// Whether tool schemas state `$schema` (2020-12; default true).
    pub fn mcp_schema_dialect(mut self, on: bool) -> Self {
        self.config.mcp.list.schema_dialect = on;
        self
    }

    /// The `instructions` of the initialize and discover results.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.config.mcp.instructions = Some(text.into());
        self
    }

    /// Which `Host`/`Origin` values requests may carry, on every route (default: see
    /// [`HostPolicy`]).
    pub fn allowed_hosts(mut self, policy: HostPolicy) -> Self {
        self.config.hosts = policy;
        self
    }

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

    /// Registers a resource record built at run time (beside those of `#[mcp_resource]`).
    pub fn resource(mut self, def: &'static ResourceDef) -> Self {
        self.extra_resources.push(def);
        self
    }

    /// Registers a prompt record built at run time (beside those of `#[mcp_prompt]`).
    pub fn prompt(mut self, def: &'static PromptDef) -> Self {
        self.extra_prompts.push(def);
        self
    }

    /// Serves only the methods, resources and prompts given to the builder, not the
    /// `inventory` ones.
    pub fn without_registered_methods(mut self) -> Self {
        self.registered = false;
        self
    }

    /// The path prefix of the JSON-RPC routes (default `/rpc`).
    pub fn rpc_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.config.rpc_prefix = prefix.into().trim_end_matches('/').to_owned();
        self
    }

    /// The largest request body accepted ([`Limits::body_bytes`]); larger ones get 413.
    pub fn body_bytes(mut self, bytes: usize) -> Self {
        self.config.limits.body_bytes = bytes;
        self
    }

    /// The proxies and load balancers whose `Forwarded` / `X-Forwarded-For` name the client
    /// ([`Limits::trusted_proxies`]): `["10.0.0.0/8".parse()?]`.
    pub fn trusted_proxies(mut self, proxies: impl IntoIterator<Item = ipnet::IpNet>) -> Self {
        self.config.limits.trusted_proxies = proxies.into_iter().collect();
        self
    }

    /// The most items a batch may have ([`Limits::batch_items`]).
    pub fn batch_items(mut self, items: usize) -> Self {
        self.config.limits.batch_items = items;
        self
    }

    /// Builds the catalogs and precomputes what requests read.
    pub fn build(mut self) -> Result<Server, BuildError> {
        self.config.limits = self.config.limits.clamped();
        if let Some(e) = self.store_error {
            return Err(BuildError::Store(e));
        }
        let env = self.env.unwrap_or_else(Environment::from_env);
        crate::error::panic_hook::install();
        let defs = self
            .registered
            .then(registered_methods)
            .into_iter()
            .flatten()
            .chain(self.extra);
        let resources = self
            .registered
            .then(crate::record::registered_resources)
            .into_iter()
            .flatten()
            .chain(self.extra_resources);
        let prompts = self
            .registered
            .then(crate::record::registered_prompts)
            .into_iter()
            .flatten()
            .chain(self.extra_prompts);
        let skills = self
            .registered
            .then(crate::record::registered_skills)
            .into_iter()
            .flatten();
        let registry =
            Registry::build_all(defs, resources, prompts, skills).map_err(BuildError::Catalog)?;
        registry.compile_validators().map_err(BuildError::Schema)?;
        let mut unknown = unknown_names(&self.config, &registry);
        #[cfg(feature = "redis")]
        let queued = self.redis.is_some();
        #[cfg(not(feature = "redis"))]
        let queued = false;
        if !self.config.runs_work && !queued {
            unknown.push(
                "runs_work(false): the tasks a front accepts are queued for the workers on Redis, \
                 and there is none (ServerBuilder::redis)"
                    .to_owned(),
            );
        }
        #[cfg(feature = "otel")]
        let otel = match (self.otel.take(), &self.metrics_route) {
            (Some(o), Some(path)) if !o.has_prometheus() => {
                unknown.push(format!(
                    "metrics_route({path:?}): the Otel given keeps no metrics for a scrape \
                     (build it with Otel::builder().prometheus())"
                ));
                None
            }
            (Some(o), _) => Some(o),
            (None, Some(_)) => match crate::otel::Otel::prometheus_only() {
                Ok(o) => Some(o),
                Err(e) => {
                    unknown.push(format!("metrics_route: {e}"));
                    None
                }
            },
            (None, None) => None,
        };
        #[cfg(feature = "otel")]
        if let Some(path) = &self.metrics_route
            && !path.starts_with('/')
        {
            unknown.push(format!("metrics_route({path:?}): a path starts with `/`"));
        }
        if !unknown.is_empty() {
            return Err(BuildError::Settings(unknown));
        }
        let warnings: Vec<String> = self
            .config
            .declared_groups
            .iter()
            .filter(|g| !registry.groups().iter().any(|r| r.name() == g.name()))
            .map(|g| {
                format!(
                    "group `{}` is declared but no method, resource or prompt is in it: it serves nothing",
                    g.name()
                )
            })
            .collect();
        for w in &warnings {
            tracing::warn!("{w}");
        }
        let files = match &self.translations {
            TranslationSource::None => Ok(Vec::new()),
            TranslationSource::Dir(d) => {
                crate::i18n::translations::load_dir(d).map_err(|e| vec![e])
            }
            TranslationSource::Embedded(f) => {
                crate::i18n::translations::load_embedded(f).map_err(|e| vec![e])
            }
        }
        .map_err(BuildError::Translations)?;
        let translations = Arc::new(
            crate::i18n::Translations::new(
                &self.default_language,
                files,
                &registry,
                self.strictness,
            )
            .map_err(BuildError::Translations)?,
        );
        let debug = env.is_debug();
        let mut listeners = self.listeners;
        listeners.add_registered();
        // One change hub per server, in its state: methods take `State<Changes>`.
        let mut state = self.state;
        if state.get::<crate::core::Changes>().is_none() {
            #[cfg(feature = "redis")]
            let changes = match &self.redis {
                Some(store) => crate::core::Changes::relayed(Arc::new(
                    crate::core::redis::RedisRelay::new(store.clone()),
                )),
                None => crate::core::Changes::default(),
            };
            #[cfg(not(feature = "redis"))]
            let changes = crate::core::Changes::default();
            state.insert(changes);
        }
        let missing = missing_states(&registry, &state);
        if !missing.is_empty() {
            return Err(BuildError::MissingState(missing));
        }
        let mut core = Core::new(env, Arc::new(state))
            .with_listeners(listeners)
            .with_timeouts(
                self.config.limits.call_timeout,
                self.config.method_timeouts.clone(),
            )
            .with_violation_cap(self.config.limits.violations)
            .with_task_limits(&self.config.limits)
            .with_default_language(translations.default_lang());
        #[cfg(feature = "otel")]
        if let Some(o) = &otel {
            core = core.with_telemetry(crate::core::telemetry::Telemetry::new(&o.meter()));
        }
        // Task changes reach listen streams through the same hub as other notices.
        if let Some(changes) = core.state().get::<crate::core::Changes>() {
            core = core.with_task_changes((*changes).clone());
        }
        if let Some(c) = self.cache {
            core = core.with_cache(c);
        }
        if let Some(l) = self.locks {
            core = core.with_locks(l);
        }
        #[cfg(feature = "redis")]
        if let Some(store) = &self.redis {
            let mirror = crate::core::redis::RedisTasks::new(store.clone());
            core = core.with_task_mirror(Arc::new(mirror));
        }
        #[cfg(not(feature = "redis"))]
        let rate_store: Option<Arc<dyn crate::core::RateStore>> = None;
        #[cfg(feature = "redis")]
        let rate_store = self
            .redis
            .clone()
            .map(|s| Arc::new(s) as Arc<dyn crate::core::RateStore>);
        core = core.with_rate_limits(self.config.limits.rate_limit_keys, rate_store);
        // Instances on one Redis count each holder's places together.
        #[cfg(not(feature = "redis"))]
        let shares: Option<Arc<crate::core::shares::Shares>> = None;
        #[cfg(feature = "redis")]
        let shares = self.redis.clone().map(|store| {
            Arc::new_cyclic(|weak| {
                crate::core::shares::Shares::with_starter(crate::core::redis::shares_exchange(
                    store,
                    weak.clone(),
                ))
            })
        });
        if let Some(shares) = &shares {
            core.tasks().count_across(shares);
        }
        let limits = Arc::new(self.config.limits.clone());
        let (max, idle, share) = (
            limits.sessions,
            limits.session_idle,
            limits.sessions_per_caller,
        );
        #[cfg(not(feature = "redis"))]
        let sessions = self.sessions;
        #[cfg(feature = "redis")]
        let readiness_redis = self.redis.clone();
        #[cfg(feature = "redis")]
        let sessions = self.sessions.or_else(|| {
            let store = crate::mcp::RedisSessions::new(self.redis?)
                .with_limits(max, idle)
                .with_share(share)
                .counted(core.telemetry());
            Some(Arc::new(store) as Arc<dyn SessionStore>)
        });
        let sessions: Arc<dyn SessionStore> = sessions.unwrap_or_else(|| {
            Arc::new(
                MemorySessions::new(max, idle)
                    .with_share(share)
                    .counted(core.telemetry()),
            )
        });
        // Sessions in Redis: any instance can serve a session's request, so its resumable
        // streams are copied there too (any instance can resume them). Otherwise they stay in
        // the memory of the instance that opened them, at no cost.
        #[cfg(not(feature = "redis"))]
        let shared_streams: Option<Arc<dyn crate::mcp::session::SharedStreams>> = None;
        #[cfg(feature = "redis")]
        let shared_streams = sessions.redis_store().map(|store| {
            let streams = crate::mcp::redis_streams::RedisStreams::new(store.clone(), &limits);
            Arc::new(streams) as Arc<dyn crate::mcp::session::SharedStreams>
        });
        let mut mcp = BTreeMap::new();
        for catalog in registry.catalogs().filter(|c| c.group().is_mcp()) {
            let name = catalog.group().name();
            let stateful = self.config.stateful.iter().any(|g| g == name);
            let mut opts = self.config.mcp.clone();
            opts.answers_in_advance = self.config.in_advance.iter().any(|g| g == name);
            let ep = McpEndpoint::new(
                core.clone(),
                catalog.clone(),
                opts,
                &self.config.name,
                &self.config.version,
                stateful.then(|| sessions.clone()),
                translations.clone(),
                debug,
                limits.clone(),
            )
            .with_shared_streams(stateful.then(|| shared_streams.clone()).flatten());
            mcp.insert((name, catalog.version()), Arc::new(ep));
        }
        // With Redis and webhooks, deliveries are stored and tried until their horizon, by
        // any instance that runs work.
        #[cfg(feature = "redis")]
        let deliveries: crate::jsonrpc::callback::Durable =
            match (&readiness_redis, &self.callbacks) {
                (Some(store), Some(client)) => {
                    let d = Arc::new(crate::jsonrpc::deliveries::Deliveries::new(
                        store.clone(),
                        client.clone(),
                        core.telemetry().clone(),
                        &self.config.limits,
                    ));
                    if self.config.runs_work {
                        d.run();
                    }
                    Some(d)
                }
                _ => None,
            };
        #[cfg(not(feature = "redis"))]
        let deliveries: crate::jsonrpc::callback::Durable = None;
        // With Redis, accepted tasks are queued, and the work of stopped instances is run here.
        #[cfg(feature = "redis")]
        if let Some(store) = &readiness_redis {
            let takeovers = TakeOvers {
                mcp: mcp
                    .iter()
                    .map(|((g, v), ep)| ((g.to_string(), *v), ep.clone()))
                    .collect(),
                rpc: self.callbacks.clone().map(|client| RpcTakeOvers {
                    core: core.clone(),
                    client,
                    deliveries: deliveries.clone(),
                    catalogs: registry
                        .catalogs()
                        .map(|c| ((c.group().name().to_owned(), c.version()), c.clone()))
                        .collect(),
                }),
                tasks: core.tasks().clone(),
            };
            let runner = self
                .config
                .runs_work
                .then(|| Arc::new(takeovers) as Arc<dyn crate::core::tasks::Runner>);
            core.tasks().with_queue(
                Arc::new(crate::core::redis_work::RedisWork::new(
                    store.clone(),
                    core.telemetry().clone(),
                    (
                        self.config.limits.tasks_queued,
                        self.config.limits.tasks_queued_per_caller,
                    ),
                )),
                runner,
            );
        }
        let config = self.config;
        let callbacks = self.callbacks;
        let callback_hosts = Arc::new(
            crate::edge::places::Places::new([usize::MAX], [config.limits.callbacks_per_host])
                .across(shares.as_ref(), ["callbacks"]),
        );
        #[cfg(feature = "redis")]
        let health = config.health_routes.then(|| {
            Arc::new(crate::transport::health::Health::new(
                readiness_redis.clone(),
            ))
        });
        #[cfg(not(feature = "redis"))]
        let health = config
            .health_routes
            .then(|| Arc::new(crate::transport::health::Health::new()));
        let discovery = Site::discoveries(
            &registry,
            &translations,
            &config.name,
            &config.rpc_prefix,
            &config.limits,
            &config.auth,
        );
        Ok(Server {
            inner: Arc::new(ServerInner {
                site: Arc::new(Site {
                    core,
                    registry,
                    translations,
                    mcp,
                    name: config.name,
                    rpc_prefix: config.rpc_prefix,
                    mcp_prefix: config.mcp_prefix,
                    limits: config.limits,
                    hosts: config.hosts,
                    auth: config.auth,
                    statics: self.statics,
                    callbacks,
                    #[cfg(feature = "redis")]
                    redis: readiness_redis,
                    deliveries,
                    callback_hosts,
                    shares,
                    discovery,
                    health,
                    #[cfg(feature = "otel")]
                    metrics: self.metrics_route.zip(otel),
                }),
                stdio_protected: config.stdio_protected,
                quiet: config.quiet,
                warnings,
            }),
        })
    }
}

struct ServerInner {
    site: Arc<Site>,
    stdio_protected: bool,
    quiet: bool,
    warnings: Vec<String>,
}

/// A built server: its catalogs, core and routers.
#[derive(Clone)]
pub struct Server {
    inner: Arc<ServerInner>,
}

impl Server {
    /// What the build found suspicious but not wrong (e.g. a declared group with nothing in
    /// it, see [`ServerBuilder::groups`]); `check` prints them.
    pub fn warnings(&self) -> &[String] {
        &self.inner.warnings
    }

    /// A builder with defaults.
    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            config: Config {
                name: "mcp-runtime".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                rpc_prefix: "/rpc".into(),
                mcp_prefix: "/mcp".into(),
                limits: Limits::default(),
                hosts: HostPolicy::default(),
                mcp: McpOptions::default(),
                stateful: Vec::new(),
                in_advance: Vec::new(),
                auth: Arc::default(),
                method_timeouts: Default::default(),
                stdio_protected: false,
                quiet: false,
                health_routes: true,
                declared_groups: Vec::new(),
                runs_work: true,
            },
            env: None,
            state: StateMap::default(),
            extra: Vec::new(),
            registered: true,
            extra_resources: Vec::new(),
            extra_prompts: Vec::new(),
            sessions: None,
            callbacks: None,
            tokens: Vec::new(),
            statics: None,
            #[cfg(feature = "redis")]
            redis: None,
            listeners: Listeners::default(),
            cache: None,
            locks: None,
            store_error: None,
            translations: TranslationSource::None,
            default_language: "en".into(),
            strictness: crate::i18n::Strictness::Error,
            #[cfg(feature = "otel")]
            otel: None,
            #[cfg(feature = "otel")]
            metrics_route: None,
        }
    }

    /// The catalogs.
    pub fn registry(&self) -> &Registry {
        &self.inner.site.registry
    }

    pub(crate) fn site(&self) -> &Site {
        &self.inner.site
    }

    /// The change notices: say that a resource, or the tools, prompts or resources changed,
    /// and the MCP clients that subscribed hear of it.
    ///
    /// ```
    /// # let server = mcp_runtime::Server::builder().build().unwrap();
    /// server.changes().resource_updated("catalog://hours");
    /// ```
    pub fn changes(&self) -> crate::core::Changes {
        self.inner.site.core.changes()
    }

    /// The task engine: what runs beyond its request on this instance (MCP tasks of both
    /// eras and asynchronous JSON-RPC calls), for an operator to list and stop.
    ///
    /// ```
    /// # let server = mcp_runtime::Server::builder().build().unwrap();
    /// for task in server.tasks().list() {
    ///     println!("{} {}", task.id, task.status.as_str());
    /// }
    /// ```
    pub fn tasks(&self) -> &crate::core::Tasks {
        self.inner.site.core.tasks()
    }

    /// The core pipeline (internal: benches and tests drive it through `test_util`).
    #[doc(hidden)]
    pub fn core(&self) -> &Core {
        &self.inner.site.core
    }

    /// The OpenRPC document of a group and version, as `GET /rpc/{group}/v{N}` (and
    /// `rpc.discover`) serve it to a router that is not nested, every method listed (over HTTP
    /// a caller sees only the methods whose scopes it has): `servers[0].url` is the
    /// endpoint's path, or its absolute URL under [`ServerBuilder::public_url`]. `lang` is an
    /// exact language of the server (the default language when `None` or unknown).
    pub fn openrpc(&self, group: &str, version: u32, lang: Option<&str>) -> Option<Bytes> {
        let d = self.inner.site.discovery(group, version)?;
        let docs = d.whole(lang.unwrap_or_default());
        Some(docs.openrpc().to_bytes(&d.openrpc_url("")))
    }

    /// The OpenRPC document of a group and version as `GET /rpc/{group}/v{N}` serves it to a
    /// request for `base_url` (`None`: the [`ServerBuilder::public_url`], else
    /// `http://127.0.0.1:8080`): `servers[0].url` is the endpoint's absolute URL under it.
    /// With `unroll`, as `?unroll=N` serves it: each recursive schema written out that many
    /// levels (1 to 5), for tools that cannot stop at a cycle; `None` for another depth. `lang`
    /// as for [`Server::openrpc`]. `None` when the server has no such group and version.
    ///
    /// ```
    /// # let server = mcp_runtime::Server::builder().build().unwrap();
    /// use mcp_runtime::serde_json::{self, Value};
    ///
    /// if let Some(doc) = server.openrpc_at("shop", 1, None, Some("https://api.example.com"), Some(3)) {
    ///     let doc: Value = serde_json::from_slice(&doc).unwrap();
    ///     assert_eq!(doc["servers"][0]["url"], "https://api.example.com/rpc/shop/v1");
    /// }
    /// ```
    pub fn openrpc_at(
        &self,
        group: &str,
        version: u32,
        lang: Option<&str>,
        base_url: Option<&str>,
        unroll: Option<usize>,
    ) -> Option<Bytes> {
        let d = self.inner.site.discovery(group, version)?;
        let docs = d.whole(lang.unwrap_or_default());
        let doc = match unroll {
            Some(depth) => docs.openrpc_unrolled(depth)?,
            None => docs.openrpc(),
        };
        let url = format!("{}{}", self.base_url(base_url), d.path());
        Some(doc.to_bytes(&url))
    }

    /// `base_url` without a trailing `/`, else the public URL, else `http://127.0.0.1:8080`.
    fn base_url(&self, base_url: Option<&str>) -> String {
        let public = self.inner.site.auth.public_url.as_deref();
        base_url
            .or(public)
            .map(|u| u.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| format!("http://{}", DEFAULT_LISTEN))
    }

    /// The Postman collection (v2.1) of a group and version, as `GET
    /// /rpc/{group}/v{N}/postman` serves it, with `base_url` as its `baseUrl` variable
    /// (`None`: the [`ServerBuilder::public_url`], else `http://127.0.0.1:8080`). `lang` as
    /// for [`Server::openrpc`].
    ///
    /// ```
    /// # let server = mcp_runtime::Server::builder().build().unwrap();
    /// use mcp_runtime::serde_json::{self, Value};
    ///
    /// // `None` when the server has no such group and version.
    /// if let Some(doc) = server.postman("shop", 1, None, Some("https://api.example.com")) {
    ///     let doc: Value = serde_json::from_slice(&doc).unwrap();
    ///     assert_eq!(doc["variable"][0]["value"], "https://api.example.com");
    /// }
    /// ```
    pub fn postman(
        &self,
        group: &str,
        version: u32,
        lang: Option<&str>,
        base_url: Option<&str>,
    ) -> Option<Bytes> {
        let d = self.inner.site.discovery(group, version)?;
        let docs = d.whole(lang.unwrap_or_default());
        Some(docs.postman().to_bytes(&self.base_url(base_url)))
    }

    /// The server card (SEP-2127) of an MCP group and version, as `GET
    /// /mcp/{group}/v{N}/server-card` serves it, its remote under `base_url` (`None`: the
    /// [`ServerBuilder::public_url`], else `http://127.0.0.1:8080`). `lang` as for
    /// [`Server::openrpc`]. `None` when the server has no such MCP group and version.
    ///
    /// ```
    /// # let server = mcp_runtime::Server::builder().build().unwrap();
    /// use mcp_runtime::serde_json::{self, Value};
    ///
    /// if let Some(card) = server.server_card("shop", 1, None, Some("https://shop.example.com")) {
    ///     let card: Value = serde_json::from_slice(&card).unwrap();
    ///     assert_eq!(card["remotes"][0]["url"], "https://shop.example.com/mcp/shop/v1");
    /// }
    /// ```
    pub fn server_card(
        &self,
        group: &str,
        version: u32,
        lang: Option<&str>,
        base_url: Option<&str>,
    ) -> Option<Vec<u8>> {
        self.card_as(
            group,
            version,
            lang,
            base_url,
            crate::mcp::card::Cards::card,
        )
    }

    /// The MCP Registry's `server.json` of an MCP group and version, for publishing the
    /// endpoint to the registry (`mcp-publisher publish`): the server card's name, version,
    /// texts and remote under the registry's schema (`catalog card --registry`). `None` for a
    /// group that is not served over MCP.
    pub fn registry_server_json(
        &self,
        group: &str,
        version: u32,
        lang: Option<&str>,
        base_url: Option<&str>,
    ) -> Option<Vec<u8>> {
        self.card_as(
            group,
            version,
            lang,
            base_url,
            crate::mcp::card::Cards::server_json,
        )
    }

    fn card_as(
        &self,
        group: &str,
        version: u32,
        lang: Option<&str>,
        base_url: Option<&str>,
        write: fn(&crate::mcp::card::Cards, &str, &crate::mcp::card::Publisher, &str) -> Vec<u8>,
    ) -> Option<Vec<u8>> {
        let ep = self.mcp_endpoint(group, version)?;
        let base = self.base_url(base_url);
        let publisher = crate::mcp::card::Publisher::of(&base);
        let lang = lang.unwrap_or_else(|| self.inner.site.translations.default_lang());
        let url = format!("{base}{}/{group}/v{version}", self.inner.site.mcp_prefix);
        Some(write(&ep.cards, lang, &publisher, &url))
    }

    /// The translations in use.
    pub fn translations(&self) -> &crate::i18n::Translations {
        &self.inner.site.translations
    }

    /// The MCP endpoint of a group and version (MCP groups only; internal: use
    /// [`Server::client`] to call it in process).
    #[doc(hidden)]
    pub fn mcp_endpoint(&self, group: &str, version: u32) -> Option<&Arc<McpEndpoint>> {
        self.inner
            .site
            .mcp
            .iter()
            .find(|((g, v), _)| *g == group && *v == version)
            .map(|(_, e)| e)
    }

    /// Serves one MCP group and version on stdin/stdout until stdin closes.
    ///
    /// A protected group is refused (`PermissionDenied`) unless
    /// [`ServerBuilder::stdio_serves_protected`] allowed it: stdio has no token to check.
    pub async fn serve_stdio(&self, group: &str, version: u32) -> std::io::Result<()> {
        let ep = self.mcp_endpoint(group, version).cloned().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no MCP group `{group}` with version {version}"),
            )
        })?;
        if ep.catalog().group().is_protected() && !self.inner.stdio_protected {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "MCP group `{group}` is protected and stdio has no token: allow it with \
                     ServerBuilder::stdio_serves_protected(true) (the CLI: --allow-protected)"
                ),
            ));
        }
        crate::transport::stdio::serve(ep).await
    }

    /// The page the metrics route serves (the Prometheus text format), to serve it elsewhere
    /// (another port, behind your own auth); `None` without
    /// [`ServerBuilder::metrics_route`].
    #[cfg(feature = "otel")]
    pub fn render_metrics(&self) -> Option<String> {
        let (_, otel) = self.inner.site.metrics.as_ref()?;
        otel.render_prometheus().ok()
    }

    /// The webhook deliveries given up on, oldest first (with Redis and webhooks: a delivery
    /// not delivered within [`Limits::callback_horizon`] is kept in the dead letters, at most
    /// [`Limits::callbacks_dead`] of them). The CLI: `tasks dead-letter`.
    #[cfg(feature = "redis")]
    pub async fn dead_deliveries(
        &self,
    ) -> Result<Vec<crate::jsonrpc::callback::DeadDelivery>, String> {
        let d = self.deliveries()?;
        d.dead().await.map_err(|e| e.message().to_owned())
    }

    /// Takes dead delivery `id` (its `webhook-id`) back from the dead letters: it is tried
    /// at once, by an instance that runs work, and for another [`Limits::callback_horizon`].
    /// The CLI: `tasks retry ID`.
    #[cfg(feature = "redis")]
    pub async fn retry_delivery(&self, id: &str) -> Result<(), String> {
        let d = self.deliveries()?;
        match d.retry(id).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(format!("no dead delivery `{}`", crate::error::shown(id))),
            Err(e) => Err(e.message().to_owned()),
        }
    }

    /// Every instance's tasks, as the shared store has them (expired ones left out), oldest
    /// first, with whether an instance runs each now; [`Self::tasks`] is this instance's.
    /// With Redis only. The CLI: `tasks list`, `tasks show ID`.
    #[cfg(feature = "redis")]
    pub async fn all_tasks(&self) -> Result<Vec<crate::core::SharedTask>, String> {
        let store = self.store()?;
        let tasks = crate::core::redis::all_tasks(store)
            .await
            .map_err(|e| format!("Redis: {e}"))?;
        Ok(tasks
            .into_iter()
            .map(|(stored, alive)| crate::core::SharedTask {
                owner: stored.owner.clone(),
                // Its heartbeat outlives its end by a few seconds.
                running: alive && !stored.ended(),
                view: stored.view(),
            })
            .collect())
    }

    /// Stops task `id` wherever it is: the instance running it cancels its call (the task
    /// ends `cancelled` when the call stops); a task no instance runs now (queued for a worker,
    /// or left by a stopped instance) is `cancelled` at once and never run. An error when the
    /// task has ended or is unknown. The CLI: `tasks cancel ID`.
    #[cfg(feature = "redis")]
    pub async fn stop_task(&self, id: &str) -> Result<(), String> {
        self.store()?;
        let shown = crate::error::shown(id);
        match self.inner.site.core.tasks().stop_anywhere(id).await {
            Ok(crate::core::tasks::Cancelled::Ended(v)) => {
                Err(format!("task `{shown}` has ended ({})", v.status.as_str()))
            }
            Ok(_) => Ok(()),
            Err(e) if e.code() == crate::codes::INVALID_PARAMS => Err(format!("no task `{shown}`")),
            Err(e) => Err(e.message().to_owned()),
        }
    }

    #[cfg(feature = "redis")]
    fn store(&self) -> Result<&crate::core::redis::RedisStore, String> {
        self.inner.site.redis.as_ref().ok_or_else(|| {
            "every instance's tasks are known only with Redis (ServerBuilder::redis)".to_owned()
        })
    }

    #[cfg(feature = "redis")]
    fn deliveries(&self) -> Result<&Arc<crate::jsonrpc::deliveries::Deliveries>, String> {
        self.inner.site.deliveries.as_ref().ok_or_else(|| {
            "webhook deliveries are kept only by a server with Redis and webhooks \
             (ServerBuilder::redis, ServerBuilder::callbacks)"
                .to_owned()
        })
    }

    /// An axum router with every endpoint; merge or nest it into your app.
    pub fn router(&self) -> Router {
        crate::transport::http::router(&self.inner.site, None)
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
        let local = listener.local_addr().ok();
        if let Some(addr) = local {
            self.announce(addr, &self.endpoints());
        }
        let app = crate::transport::http::router(&self.inner.site, local);
        let health = self.inner.site.health.clone();
        self.serve_app(listener, app, health, shutdown).await
    }

    /// Serves `app` until `shutdown` completes: on the signal, readiness (`health`) turns false
    /// first, and the drain begins [`Limits::unready_delay`] later.
    async fn serve_app(
        &self,
        listener: tokio::net::TcpListener,
        app: Router,
        health: Option<Arc<crate::transport::health::Health>>,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let delay = self.inner.site.limits.unready_delay;
        let shutdown = async move {
            shutdown.await;
            if let Some(health) = health {
                health.drain();
            }
            if !delay.is_zero() {
                tracing::info!(delay = ?delay, "shutting down: unready, still serving");
                tokio::time::sleep(delay).await;
            }
        };
        crate::transport::serve::serve(
            listener,
            app,
            &self.inner.site.limits,
            self.inner.site.core.background().clone(),
            shutdown,
        )
        .await
    }
}

impl Server {
    /// Runs queued work (tasks accepted by any instance on the same Redis, fronts included,
    /// and those of stopped instances) without serving requests: on `listener` it answers
    /// `/healthz` and `/readyz` only, until `shutdown` completes. An error without
    /// [`ServerBuilder::redis`] (there is no queue to take work from) or with
    /// `runs_work(false)`.
    pub async fn serve_worker(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let tasks = self.inner.site.core.tasks();
        if !tasks.queued() || tasks.hands_off() {
            return Err(std::io::Error::other(
                "a worker takes its work from the queue on Redis: it needs ServerBuilder::redis \
                 and runs_work(true)",
            ));
        }
        if let Ok(addr) = listener.local_addr() {
            self.announce(addr, "work only (/healthz, /readyz)");
        }
        let health = self.inner.site.health.clone().unwrap_or_default();
        #[allow(unused_mut)]
        let mut app = crate::transport::health::routes(health.clone());
        #[cfg(feature = "otel")]
        if let Some((path, otel)) = &self.inner.site.metrics {
            app = app.merge(crate::transport::metrics::routes(path, otel.clone()));
        }
        self.serve_app(listener, app, Some(health), shutdown).await
    }

    /// `NAME listening on ADDR: WHAT` (the endpoints, `JSON-RPC mcp v1, ...; MCP mcp v1, ...`, or
    /// a worker's `work only ...`) unless quiet: an `info` event when a
    /// `tracing` subscriber is installed, else a line on stderr (a server started from the
    /// quick start, with no logging set up, still says where it is). Scripts read the address
    /// from it: the text after `listening on ` up to the second `:`.
    fn announce(&self, addr: std::net::SocketAddr, what: &str) {
        if self.inner.quiet {
            return;
        }
        let line = format!("{} listening on {addr}: {what}", self.inner.site.name);
        if tracing::dispatcher::has_been_set() {
            tracing::info!("{line}");
        } else {
            eprintln!("{line}");
        }
    }

    /// `JSON-RPC internal v1, mcp v1; MCP mcp v1`.
    pub(crate) fn endpoints(&self) -> String {
        let list = |mcp_only: bool| {
            let v: Vec<String> = self
                .registry()
                .catalogs()
                .filter(|c| !mcp_only || self.mcp_endpoint(c.group().name(), c.version()).is_some())
                .map(|c| format!("{} v{}", c.group().name(), c.version()))
                .collect();
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        format!("JSON-RPC {}; MCP {}", list(false), list(true))
    }
}

/// Runs queued work on the face that accepted it: an MCP task on its endpoint, an
/// asynchronous JSON-RPC call through its catalog and the webhook client.
#[cfg(feature = "redis")]
struct TakeOvers {
    mcp: BTreeMap<(String, u32), Arc<crate::mcp::handler::McpEndpoint>>,
    rpc: Option<RpcTakeOvers>,
    /// The server's task engine, whose bounds taken-over work counts against.
    tasks: crate::core::tasks::Tasks,
}

#[cfg(feature = "redis")]
struct RpcTakeOvers {
    core: Core,
    client: Arc<dyn crate::jsonrpc::callback::CallbackClient>,
    deliveries: crate::jsonrpc::callback::Durable,
    catalogs: BTreeMap<(String, u32), Arc<crate::catalog::Catalog>>,
}

#[cfg(feature = "redis")]
impl crate::core::tasks::Runner for TakeOvers {
    fn run(&self, work: crate::core::tasks::Work) -> futures_util::future::BoxFuture<'static, ()> {
        let key = (work.group.clone(), work.version);
        if work.callback.is_some()
            && let Some(rpc) = &self.rpc
            && let Some(catalog) = rpc.catalogs.get(&key)
        {
            return Box::pin(crate::jsonrpc::callback::take_over(
                rpc.core.clone(),
                rpc.client.clone(),
                rpc.deliveries.clone(),
                catalog.clone(),
                work,
            ));
        }
        match self.mcp.get(&key).filter(|_| work.callback.is_none()) {
            Some(ep) => Box::pin(ep.clone().take_over(work)),
            None => {
                tracing::warn!(
                    task = work.task,
                    group = work.group,
                    version = work.version,
                    "work for an endpoint this instance does not serve: left for another"
                );
                Box::pin(std::future::ready(()))
            }
        }
    }

    fn has_room(&self, work: &crate::core::tasks::Work) -> bool {
        let caller = work.caller.as_deref().map(crate::context::Caller::from_key);
        self.tasks.has_room(caller.as_ref())
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
