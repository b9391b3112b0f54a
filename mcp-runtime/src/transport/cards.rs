//! The routes of server cards (SEP-2127): `GET <MCP endpoint>/server-card`, and the site's
//! catalogs of them, `GET /.well-known/mcp/catalog.json` (the MCP catalog) and
//! `GET /.well-known/ai-catalog.json` (the AI Catalog). Public, read-only metadata: any origin may
//! read them (`Access-Control-Allow-Origin: *`), a client may cache them for an hour, and they
//! are in the language `Accept-Language` asks for (`Content-Language`, `Vary`). The only part
//! of a request written into them is its `Host` (when no `public_url` is set), which must be one
//! the server answers for (421 otherwise, as on every route), and the plain path prefix an
//! outer router nests this one under.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::edge::policy::HostPolicy;
use crate::mcp::card::{CARD_MEDIA_TYPE, Publisher};
use crate::mcp::handler::McpEndpoint;

/// What the card routes read.
pub(super) struct Cards {
    site: Arc<super::site::Site>,
    /// The hosts the server answers for: a card names its host in its URLs, so one asked for
    /// under another host (a rebinding name, a forged `Host`) is refused, as on every route.
    hosts: HostPolicy,
    /// Every MCP endpoint with its path, in the router's order.
    endpoints: Vec<(String, Arc<McpEndpoint>)>,
}

/// The routes: a card per MCP endpoint and the catalog of them all; none without MCP.
pub(super) fn routes(site: &Arc<super::site::Site>, hosts: &HostPolicy) -> Router {
    let endpoints: Vec<(String, Arc<McpEndpoint>)> = site
        .mcp
        .iter()
        .map(|((g, v), ep)| (format!("{}/{g}/v{v}", site.mcp_prefix), ep.clone()))
        .collect();
    if endpoints.is_empty() {
        return Router::new();
    }
    let mut router = Router::new();
    for (i, (path, _)) in endpoints.iter().enumerate() {
        let card =
            move |State(c): State<Arc<Cards>>, parts: Parts| async move { card(&c, i, &parts) };
        router = router.route(&format!("{path}/server-card"), get(card).options(preflight));
    }
    let cards = Arc::new(Cards {
        site: site.clone(),
        hosts: hosts.clone(),
        endpoints,
    });
    router
        .route(MCP_CATALOG, get(mcp_catalog).options(preflight))
        .route(AI_CATALOG, get(ai_catalog).options(preflight))
        .with_state(cards)
}

/// The public origin and the prefix this router is nested under, as the request shows them.
fn base(c: &Cards, parts: &Parts) -> String {
    let origin = super::mount::origin(c.site.auth.public_url.as_deref(), &parts.headers);
    format!("{origin}{}", super::mount::prefix_of(parts))
}

fn lang<'a>(c: &'a Cards, headers: &HeaderMap) -> &'a str {
    let accept = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok());
    c.site
        .translations
        .pick_limited(accept, c.site.limits.language_ranges)
}

/// `GET <endpoint>/server-card`.
fn card(c: &Cards, i: usize, parts: &Parts) -> Response {
    if let Err(refused) = c.hosts.check_host(&parts.headers) {
        return refused.into_response();
    }
    let Some((path, ep)) = c.endpoints.get(i) else {
        return answer(StatusCode::NOT_FOUND, "application/json", Vec::new(), None);
    };
    let base = base(c, parts);
    let publisher = Publisher::of(&base);
    let lang = lang(c, &parts.headers);
    let body = ep.cards.card(lang, &publisher, &format!("{base}{path}"));
    answer(StatusCode::OK, CARD_MEDIA_TYPE, body, Some(lang))
}

/// The MCP catalog's path (SEP-2127's discovery).
const MCP_CATALOG: &str = "/.well-known/mcp/catalog.json";
/// The AI Catalog's path (`application/ai-catalog+json`), which indexes the same cards.
const AI_CATALOG: &str = "/.well-known/ai-catalog.json";

/// `GET /.well-known/mcp/catalog.json`: an entry per MCP endpoint, each naming its card.
async fn mcp_catalog(State(c): State<Arc<Cards>>, parts: Parts) -> Response {
    catalog(&c, &parts, MCP_CATALOG)
}

/// `GET /.well-known/ai-catalog.json`: the same entries in an AI Catalog, without the names
/// the cards carry themselves.
async fn ai_catalog(State(c): State<Arc<Cards>>, parts: Parts) -> Response {
    catalog(&c, &parts, AI_CATALOG)
}

fn catalog(c: &Cards, parts: &Parts, path: &'static str) -> Response {
    if let Err(refused) = c.hosts.check_host(&parts.headers) {
        return refused.into_response();
    }
    let base = base(c, parts);
    let publisher = Publisher::of(&base);
    let lang = lang(c, &parts.headers);
    let mcp = path == MCP_CATALOG;
    let entries: Vec<serde_json::Value> = c
        .endpoints
        .iter()
        .map(|(path, ep)| {
            let card = format!("{base}{path}/server-card");
            ep.cards.catalog_entry(lang, &publisher, &card, mcp)
        })
        .collect();
    let (version, media) = if mcp {
        ("draft", "application/json")
    } else {
        ("1.0", "application/ai-catalog+json")
    };
    let doc = serde_json::json!({ "specVersion": version, "entries": entries });
    let body = serde_json::to_vec(&doc).unwrap_or_default();
    answer(StatusCode::OK, media, body, Some(lang))
}

/// `OPTIONS`: any origin may `GET` them.
async fn preflight() -> Response {
    let mut res = answer(StatusCode::NO_CONTENT, "", Vec::new(), None);
    let h = res.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Content-Type, Accept, Accept-Language"),
    );
    res
}

fn answer(status: StatusCode, media: &'static str, body: Vec<u8>, lang: Option<&str>) -> Response {
    let mut res = Response::new(Body::from(body));
    *res.status_mut() = status;
    let h = res.headers_mut();
    if !media.is_empty() {
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    }
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    if let Some(lang) = lang {
        super::respond::set_language(h, lang);
    }
    res
}
