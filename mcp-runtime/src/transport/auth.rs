//! Per-group authentication: a tower layer in front of the routes of protected groups.
//!
//! JSON-RPC: a missing token is HTTP 401 with -32401 `Unauthorized. Token not found`, a wrong
//! one HTTP 403 with -32403 `Forbidden. Invalid token` (the OpenRPC document too). MCP: an OAuth
//! 2.1 resource server per the MCP authorization spec: 401 with
//! `WWW-Authenticate: Bearer resource_metadata="..."`, the metadata at
//! `/.well-known/oauth-protected-resource/...`, and 403 `insufficient_scope`.
//!
//! The check is a [`TokenValidator`]: static tokens by default (compared in constant time), or
//! your own (JWT verification, a call to your identity provider). To use your own auth
//! instead, leave groups unprotected and add your layer to [`crate::Server::router`].

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::future::BoxFuture;
use subtle::ConstantTimeEq;

use crate::context::Face;
use crate::error::RpcError;

/// What a validator decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthDecision {
    /// The token is valid for this group.
    Allow,
    /// The token is valid and says who is calling: methods read it from their context
    /// ([`crate::RequestContext::identity`]).
    Identified(crate::context::Identity),
    /// The token is not valid.
    Invalid,
    /// The token is valid but lacks scopes (MCP: 403 `insufficient_scope`).
    InsufficientScope(Vec<String>),
}

/// The request being authorized.
#[derive(Debug, Clone, Copy)]
pub struct AuthRequest<'a> {
    /// The protected group.
    pub group: &'a str,
    /// JSON-RPC or MCP.
    pub face: Face,
    /// The bearer token (or the value of the configured token header).
    pub token: &'a str,
}

/// Decides whether a token may use a protected group.
pub trait TokenValidator: Send + Sync + 'static {
    /// Checks a token.
    fn validate<'a>(&'a self, req: AuthRequest<'a>) -> BoxFuture<'a, AuthDecision>;
}

/// A fixed list of tokens, compared in constant time. Empty = nobody gets in (fail closed).
#[derive(Clone, Default)]
pub struct StaticTokens {
    tokens: Vec<Vec<u8>>,
}

impl std::fmt::Debug for StaticTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticTokens")
            .field("count", &self.tokens.len())
            .finish()
    }
}

impl StaticTokens {
    /// These tokens (empty ones are ignored).
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<str>>(tokens: I) -> Self {
        Self {
            tokens: tokens
                .into_iter()
                .map(|t| t.as_ref().trim().as_bytes().to_vec())
                .filter(|t| !t.is_empty())
                .collect(),
        }
    }

    /// Tokens from a comma-separated list (an environment variable's value).
    pub fn from_csv(csv: &str) -> Self {
        Self::new(csv.split(','))
    }
}

impl TokenValidator for StaticTokens {
    fn validate<'a>(&'a self, req: AuthRequest<'a>) -> BoxFuture<'a, AuthDecision> {
        let given = req.token.as_bytes();
        // Compare against every token, without stopping early, so timing tells nothing.
        let mut ok = subtle::Choice::from(0u8);
        for t in &self.tokens {
            ok |= t.as_slice().ct_eq(given);
        }
        let d = if bool::from(ok) {
            AuthDecision::Allow
        } else {
            AuthDecision::Invalid
        };
        Box::pin(std::future::ready(d))
    }
}

/// Authentication settings of a server.
#[derive(Clone)]
pub struct AuthConfig {
    /// The validator.
    pub validator: Arc<dyn TokenValidator>,
    /// The JSON-RPC token header (default `Authorization`, with `Bearer `).
    pub header: String,
    /// The authorization servers named in the MCP resource metadata.
    pub authorization_servers: Vec<String>,
    /// Scopes named in the metadata.
    pub scopes: Vec<String>,
    /// The public base URL (`https://api.example.com`): where the outside world reaches the
    /// root of the app serving the router (any path a reverse proxy strips included); else
    /// `http://{Host}`. A prefix the router is nested under is added to it.
    pub public_url: Option<String>,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            validator: Arc::new(StaticTokens::default()),
            header: "authorization".into(),
            authorization_servers: Vec::new(),
            scopes: Vec::new(),
            public_url: None,
        }
    }
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

/// What the layer of one protected route knows.
#[derive(Clone)]
pub(crate) struct Guard {
    pub config: Arc<AuthConfig>,
    /// The route's HTTP policy: checked before the token, so a foreign origin learns nothing.
    pub policy: crate::edge::policy::Policy,
    pub group: &'static str,
    pub face: Face,
    /// The route path (`/mcp/admin/v1`), for the resource metadata URL.
    pub path: String,
    pub env: crate::env::Environment,
}

fn token_of<'a>(req: &'a Request, header_name: &str) -> Option<&'a str> {
    let v = req.headers().get(header_name)?.to_str().ok()?.trim();
    let t = if header_name.eq_ignore_ascii_case("authorization") {
        v.strip_prefix("Bearer ")
            .or_else(|| v.strip_prefix("bearer "))?
            .trim()
    } else {
        v.strip_prefix("Bearer ").unwrap_or(v).trim()
    };
    (!t.is_empty()).then_some(t)
}

/// The public URL of the router: the origin (configured, else from a checked `Host`) and the
/// prefix an outer app nests the router under (see [`super::mount`]).
fn base_url(g: &Guard, req: &Request) -> String {
    let origin = super::mount::origin(g.config.public_url.as_deref(), req.headers());
    let prefix = super::mount::prefix(
        req.extensions().get::<axum::extract::OriginalUri>(),
        req.uri().path(),
    );
    format!("{origin}{prefix}")
}

/// Scopes as a challenge may quote them (RFC 6750 scope tokens: no quote, backslash or space).
fn scope_list<S: AsRef<str>>(scopes: &[S]) -> String {
    scopes
        .iter()
        .map(AsRef::as_ref)
        .filter(|s| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The metadata URL of a protected MCP route (RFC 9728, path-suffixed well-known URL).
pub(crate) fn metadata_path(route: &str) -> String {
    format!("/.well-known/oauth-protected-resource{route}")
}

/// The layer's function: checks the token before anything is parsed.
pub(crate) async fn require_token(
    State(g): State<Arc<Guard>>,
    req: Request,
    next: Next,
) -> Response {
    let origin = match g.policy.admit(req.method(), req.headers()) {
        Ok(origin) => origin,
        Err(refused) => return refused.into_response(),
    };
    // A CORS preflight carries no credentials; the handler answers it.
    if req.method() == axum::http::Method::OPTIONS {
        return next.run(req).await;
    }
    let Some(token) = token_of(
        &req,
        if g.face == Face::Mcp {
            "authorization"
        } else {
            &g.config.header
        },
    ) else {
        // An allowed page reads the refusal (and its `WWW-Authenticate`) through CORS.
        return g.policy.finish(origin, refuse(&g, &req, None));
    };
    let validation = g.config.validator.validate(AuthRequest {
        group: g.group,
        face: g.face,
        token,
    });
    // The handler's own timeout starts after this: a stalled validator is cut here.
    let decision = match g.policy.timeout {
        Some(limit) => match tokio::time::timeout(limit, validation).await {
            Ok(d) => d,
            Err(_) => return crate::edge::policy::timed_out(),
        },
        None => validation.await,
    };
    match decision {
        AuthDecision::Allow => next.run(req).await,
        AuthDecision::Identified(identity) => {
            let metadata = (g.face == Face::Mcp)
                .then(|| format!("{}{}", base_url(&g, &req), metadata_path(&g.path)));
            let mut req = req;
            req.extensions_mut().insert(Arc::new(identity));
            let mut res = next.run(req).await;
            // A call the identity lacks scopes for: the MCP authorization spec's challenge.
            if let (Some(metadata), Some(ScopeChallenge(scopes))) =
                (metadata, res.extensions_mut().remove::<ScopeChallenge>())
            {
                let challenge = format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{metadata}\"",
                    scope_list(scopes)
                );
                if let Ok(v) = HeaderValue::from_str(&challenge) {
                    res.headers_mut().insert(header::WWW_AUTHENTICATE, v);
                }
            }
            res
        }
        other => g.policy.finish(origin, refuse(&g, &req, Some(other))),
    }
}

/// Set on an MCP response refusing a call for the scopes it requires: the auth layer adds the
/// `insufficient_scope` challenge naming them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScopeChallenge(pub &'static [&'static str]);

fn refuse(g: &Guard, req: &Request, decision: Option<AuthDecision>) -> Response {
    match g.face {
        Face::JsonRpc => {
            let err = if decision.is_none() {
                RpcError::token_not_sent()
            } else {
                RpcError::invalid_token()
            };
            let mut out = Vec::new();
            crate::edge::write::rpc_error(&mut out, crate::edge::write::Id::Null, &err, &g.env);
            let status =
                StatusCode::from_u16(err.http_status()).unwrap_or(StatusCode::UNAUTHORIZED);
            super::http::json_response(status, out)
        }
        Face::Mcp => {
            let metadata = format!("{}{}", base_url(g, req), metadata_path(&g.path));
            let (status, challenge, code, message) = match &decision {
                None => (
                    StatusCode::UNAUTHORIZED,
                    format!("Bearer resource_metadata=\"{metadata}\""),
                    -32401,
                    "Unauthorized: a bearer token is required",
                ),
                Some(AuthDecision::InsufficientScope(scopes)) => (
                    StatusCode::FORBIDDEN,
                    format!(
                        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{metadata}\"",
                        scope_list(scopes)
                    ),
                    -32403,
                    "Forbidden: insufficient scope",
                ),
                Some(_) => (
                    StatusCode::UNAUTHORIZED,
                    format!("Bearer error=\"invalid_token\", resource_metadata=\"{metadata}\""),
                    -32401,
                    "Unauthorized: invalid token",
                ),
            };
            let body =
                crate::edge::write::error_body(crate::edge::write::Id::Null, code, message, None);
            let mut res = super::http::json_response(status, body);
            if let Ok(v) = HeaderValue::from_str(&challenge) {
                res.headers_mut().insert(header::WWW_AUTHENTICATE, v);
            }
            res
        }
    }
}

/// Serves the protected-resource metadata (RFC 9728) of one MCP route.
pub(crate) async fn resource_metadata(State(g): State<Arc<Guard>>, req: Request<Body>) -> Response {
    let origin = match g.policy.admit(req.method(), req.headers()) {
        Ok(origin) => origin,
        Err(refused) => return refused.into_response(),
    };
    let base = base_url(&g, &req);
    let mut doc = serde_json::json!({
        "resource": format!("{base}{}", g.path),
        "authorization_servers": g.config.authorization_servers,
        "bearer_methods_supported": ["header"],
    });
    if !g.config.scopes.is_empty() {
        doc["scopes_supported"] = serde_json::json!(g.config.scopes);
    }
    g.policy
        .finish(origin, (StatusCode::OK, axum::Json(doc)).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn static_tokens() {
        let t = StaticTokens::from_csv("alpha, beta,,");
        let ask = |token| AuthRequest {
            group: "g",
            face: Face::JsonRpc,
            token,
        };
        assert_eq!(t.validate(ask("beta")).await, AuthDecision::Allow);
        assert_eq!(t.validate(ask("bet")).await, AuthDecision::Invalid);
        assert_eq!(t.validate(ask("")).await, AuthDecision::Invalid);
        let none = StaticTokens::from_csv("");
        assert_eq!(
            none.validate(ask("anything")).await,
            AuthDecision::Invalid,
            "no tokens: fail closed"
        );
    }
}
