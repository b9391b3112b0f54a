//! The example services of `mcp-runtime`: a small product catalog.
//!
//! Group `mcp` is published over JSON-RPC and MCP; `internal` over JSON-RPC only.

pub mod admin;
pub mod catalog;
pub mod conformance;
pub mod events;
pub mod internal;
pub mod jobs;
pub mod shop;

pub use catalog::{Category, Product, ProductStore};

use mcp_runtime::prelude::*;

/// Published over JSON-RPC (`/rpc/mcp/v1`) and MCP (`/mcp/mcp/v1`).
pub const MCP: ApiGroup = ApiGroup::mcp("mcp");
/// Published over JSON-RPC only (`/rpc/internal/v1`).
pub const INTERNAL: ApiGroup = ApiGroup::rpc("internal");

/// The translation files, embedded in the binary at compile time (no files needed beside it).
pub const TRANSLATIONS: &[(&str, &str)] = &[
    ("rpc.en.yaml", include_str!("../translations/rpc.en.yaml")),
    ("rpc.uk.yaml", include_str!("../translations/rpc.uk.yaml")),
    (
        "rpc/mcp.en.yaml",
        include_str!("../translations/rpc/mcp.en.yaml"),
    ),
    (
        "rpc/mcp.uk.yaml",
        include_str!("../translations/rpc/mcp.uk.yaml"),
    ),
];

/// The example server, with in-memory defaults.
pub fn server() -> Result<Server, mcp_runtime::BuildError> {
    builder().build()
}

/// `builder` with the states the example's methods take (`build()` refuses a method whose
/// `State<T>` no one provided): what a test building its own server beside these methods adds.
pub fn with_states(b: mcp_runtime::ServerBuilder) -> mcp_runtime::ServerBuilder {
    b.state(ProductStore::demo()).state(internal::Bad)
}

/// The example server's builder: in-memory cache and locks, or Redis when `REDIS_URL` is set
/// (two processes with one `REDIS_URL` share cache entries and locks). `CATALOG_STATEFUL` names
/// more groups served with sessions (comma-separated), `CATALOG_REQUEST_STATE_KEY` the key
/// instances behind one address share for 2026-07-28 request states, `CATALOG_API_TOKENS` the
/// tokens of the `admin` group, `CATALOG_TRUSTED_PROXIES` the load balancers whose
/// `X-Forwarded-For` names the client, `CATALOG_UNREADY_DELAY_MS` how long a shutdown keeps
/// serving with `/readyz` failing before it drains (behind a balancer),
/// `CATALOG_WEBHOOK_SECRETS` the keys that sign webhook deliveries,
/// `CATALOG_WEBHOOK_ALLOW_HOSTS` private hosts webhooks may reach, `CATALOG_WEBHOOK_HORIZON_MS`
/// how long a delivery is tried (with Redis), `CATALOG_RUNS_WORK=false` a front whose tasks
/// `catalog worker` instances run.
pub fn builder() -> mcp_runtime::ServerBuilder {
    let mut b = with_states(Server::builder())
        .name("catalog")
        .groups([MCP, INTERNAL, admin::ADMIN, conformance::CONFORMANCE])
        .version(env!("CARGO_PKG_VERSION"))
        .instructions(
            "A small product catalog: search products, get one by id, browse the category tree.",
        )
        .mcp_stateful("conformance")
        // The conformance suite's clients answer before they are asked (SEP-2322 allows it);
        // the other groups ask first.
        .mcp_answers_in_advance("conformance")
        .default_language("en")
        .translations_embedded(TRANSLATIONS)
        // The metrics, for a Prometheus scrape.
        .metrics_route("/metrics");
    for kind in EventKind::ALL {
        b = b.on(kind, events::count);
    }
    // The protected `admin` group: bearer JWTs of `CATALOG_JWT_ISSUER` for the audience
    // `CATALOG_JWT_AUDIENCE` when both are set, else static tokens; no tokens configured means
    // nobody gets in (fail closed).
    let jwt = (
        std::env::var("CATALOG_JWT_ISSUER"),
        std::env::var("CATALOG_JWT_AUDIENCE"),
    );
    b = match jwt {
        (Ok(issuer), Ok(audience)) if !issuer.is_empty() && !audience.is_empty() => {
            let mut v = mcp_runtime::transport::jwt::JwtValidator::new(issuer, audience);
            if let Ok(url) = std::env::var("CATALOG_JWT_JWKS_URL") {
                v = v.jwks_url(url);
            }
            b.token_validator(std::sync::Arc::new(v))
        }
        _ => b.api_tokens(
            std::env::var("CATALOG_API_TOKENS")
                .unwrap_or_default()
                .split(','),
        ),
    };
    // More stateful groups (`CATALOG_STATEFUL=mcp`): handshake-era clients then get sessions,
    // and calls that ask the client (`Orders.pay`, `Catalog.pitch`) can ask them over HTTP.
    for group in std::env::var("CATALOG_STATEFUL")
        .unwrap_or_default()
        .split(',')
    {
        if !group.is_empty() && group != "conformance" {
            b = b.mcp_stateful(group);
        }
    }
    // Instances behind one address share the key that signs 2026-07-28 request states.
    if let Ok(key) = std::env::var("CATALOG_REQUEST_STATE_KEY")
        && !key.is_empty()
    {
        b = b.request_state_key(key);
    }
    // Behind a load balancer: its addresses (`CATALOG_TRUSTED_PROXIES=10.0.0.0/8,...`), so the
    // client's address is read from its `X-Forwarded-For` (each caller gets its own shares).
    let proxies = std::env::var("CATALOG_TRUSTED_PROXIES").unwrap_or_default();
    let proxies = proxies.split(',').map(str::trim).filter(|p| !p.is_empty());
    b = b.trusted_proxies(proxies.filter_map(|p| match p.parse() {
        Ok(net) => Some(net),
        // A bare address is its own block.
        Err(_) => match p.parse::<std::net::IpAddr>() {
            Ok(ip) => Some(ip.into()),
            Err(_) => {
                tracing::error!(
                    proxy = p,
                    "CATALOG_TRUSTED_PROXIES: not an address or a CIDR block; ignored"
                );
                None
            }
        },
    }));
    // Asynchronous JSON-RPC calls: `params.$rpc.callback` (public HTTPS hosts), signed
    // (Standard Webhooks) with `CATALOG_WEBHOOK_SECRETS=whsec_...,whsec_...` when given; a
    // secret that does not parse turns webhooks off rather than sending them unsigned.
    let secrets = std::env::var("CATALOG_WEBHOOK_SECRETS").unwrap_or_default();
    let secrets: Vec<&str> = secrets.split(',').filter(|s| !s.is_empty()).collect();
    // `CATALOG_WEBHOOK_ALLOW_HOSTS`: private hosts webhooks may reach (a trusted network).
    let allowed = std::env::var("CATALOG_WEBHOOK_ALLOW_HOSTS").unwrap_or_default();
    let allowed = allowed.split(',').map(str::trim).filter(|h| !h.is_empty());
    let hooks = mcp_runtime::jsonrpc::callback::HttpCallbacks::new().allow_hosts(allowed);
    b = if secrets.is_empty() {
        b.callbacks(std::sync::Arc::new(hooks))
    } else {
        match hooks.signing_secrets(&secrets) {
            Ok(hooks) => b.callbacks(std::sync::Arc::new(hooks)),
            Err(e) => {
                tracing::error!("CATALOG_WEBHOOK_SECRETS: {e}; webhooks are off");
                b
            }
        }
    };
    // A front that leaves the tasks it accepts to the workers (`catalog worker`).
    if std::env::var("CATALOG_RUNS_WORK").is_ok_and(|v| v == "false" || v == "0") {
        b = b.runs_work(false);
    }
    if let Ok(ms) = std::env::var("CATALOG_UNREADY_DELAY_MS") {
        match ms.parse() {
            Ok(ms) => b = b.unready_delay(std::time::Duration::from_millis(ms)),
            Err(_) => tracing::error!(
                value = ms,
                "CATALOG_UNREADY_DELAY_MS: not a number of milliseconds; ignored"
            ),
        }
    }
    // With Redis, how long a webhook delivery is tried before it goes to the dead letters
    // (`catalog tasks dead-letter`, `catalog tasks retry ID`).
    if let Ok(ms) = std::env::var("CATALOG_WEBHOOK_HORIZON_MS") {
        match ms.parse() {
            Ok(ms) => b = b.callback_horizon(std::time::Duration::from_millis(ms)),
            Err(_) => tracing::error!(
                value = ms,
                "CATALOG_WEBHOOK_HORIZON_MS: not a number of milliseconds; ignored"
            ),
        }
    }
    match std::env::var("REDIS_URL") {
        Ok(url) if !url.is_empty() => b.redis(&url),
        _ => b,
    }
}
