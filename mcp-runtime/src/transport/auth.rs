//! Per-group authentication: every handler of a protected group's routes checks the token
//! right after the HTTP policy admits the request, before it reads or parses anything.
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

use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
/// The future a [`TokenValidator`] returns (re-exported: a validator needs no other crate).
pub use futures_util::future::BoxFuture;
use subtle::ConstantTimeEq;

use crate::context::Face;
use crate::edge::caller::token_of;
use crate::error::{RpcError, codes};

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
///
/// A validator that needs no I/O (a fixed list, a JWT checked against a key it holds) also
/// answers [`validate_now`](Self::validate_now): the server then decides while it reads the
/// request head, and builds no future for it.
///
/// ```
/// use std::future::Future;
/// use std::pin::Pin;
///
/// use mcp_runtime::Identity;
/// use mcp_runtime::transport::auth::{AuthDecision, AuthRequest, TokenValidator};
///
/// /// `user-<name>` tokens say who calls; anything else is refused.
/// struct Named;
///
/// impl Named {
///     fn decide(&self, token: &str) -> AuthDecision {
///         match token.strip_prefix("user-") {
///             Some(name) => AuthDecision::Identified(Identity::new(name, ["read"])),
///             None => AuthDecision::Invalid,
///         }
///     }
/// }
///
/// impl TokenValidator for Named {
///     fn validate<'a>(
///         &'a self,
///         req: AuthRequest<'a>,
///     ) -> Pin<Box<dyn Future<Output = AuthDecision> + Send + 'a>> {
///         Box::pin(std::future::ready(self.decide(req.token)))
///     }
///     // No I/O: the server asks this one, and never builds the future above.
///     fn validate_now(&self, req: AuthRequest<'_>) -> Option<AuthDecision> {
///         Some(self.decide(req.token))
///     }
/// }
///
/// let server = mcp_runtime::Server::builder().token_validator(std::sync::Arc::new(Named));
/// # drop(server);
/// ```
pub trait TokenValidator: Send + Sync + 'static {
    /// Checks a token.
    fn validate<'a>(&'a self, req: AuthRequest<'a>) -> BoxFuture<'a, AuthDecision>;

    /// The decision without waiting, when it needs no I/O; `None` (the default) has the
    /// server await [`validate`](Self::validate). Both must decide alike.
    fn validate_now(&self, req: AuthRequest<'_>) -> Option<AuthDecision> {
        let _ = req;
        None
    }
}

/// One static token and whom it stands for: with a subject or scopes, a caller presenting it
/// is identified ([`crate::RequestContext::identity`]), so per-method `scopes` work without a
/// validator of your own.
///
/// ```
/// use mcp_runtime::transport::auth::ApiToken;
///
/// let ci = ApiToken::new("s3cret").subject("ci").scopes(["notes:admin"]);
/// # let _ = mcp_runtime::Server::builder().api_token(ci);
/// ```
#[derive(Clone)]
pub struct ApiToken {
    token: Vec<u8>,
    subject: Option<String>,
    scopes: Vec<String>,
}

impl std::fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token itself.
        f.debug_struct("ApiToken")
            .field("subject", &self.subject)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl ApiToken {
    /// A token (trimmed) that lets its holder in, anonymously until [`Self::subject`] or
    /// [`Self::scopes`] say more.
    pub fn new(token: impl AsRef<str>) -> Self {
        Self {
            token: token.as_ref().trim().as_bytes().to_vec(),
            subject: None,
            scopes: Vec::new(),
        }
    }

    /// Whom the token stands for (`Identity::subject`: logs, task owners, shares).
    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// What the token may do: the scopes per-method `scopes = [...]` ask for.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The decision for its holder.
    fn decision(&self) -> AuthDecision {
        if self.subject.is_none() && self.scopes.is_empty() {
            return AuthDecision::Allow;
        }
        AuthDecision::Identified(crate::context::Identity::new(
            self.subject.clone().unwrap_or_default(),
            self.scopes.iter().cloned(),
        ))
    }
}

/// A fixed list of tokens, compared in constant time. Empty = nobody gets in (fail closed).
#[derive(Clone, Default)]
pub struct StaticTokens {
    tokens: Vec<ApiToken>,
    /// What each token grants (same order), built once: the server's own guard reads these
    /// instead of a decision, so a request neither rebuilds its identity nor hashes its
    /// token for its caller.
    grants: Vec<Arc<Grant>>,
}

/// What a static token lets its holder in as, and who the holder is for the shares.
#[derive(Clone)]
pub(crate) struct Grant {
    pub identity: Option<Arc<crate::context::Identity>>,
    pub caller: crate::context::Caller,
}

impl Grant {
    fn of(token: &ApiToken) -> Self {
        let identity = match token.decision() {
            AuthDecision::Identified(i) => Some(Arc::new(i)),
            _ => None,
        };
        let caller = match identity.as_deref() {
            Some(i) if !i.subject.is_empty() => crate::context::Caller::subject(&i.subject),
            // The same digest a request's token gets (`ApiToken::new` took it as a `str`).
            _ => crate::context::Caller::token(&String::from_utf8_lossy(&token.token)),
        };
        Self { identity, caller }
    }
}

impl std::fmt::Debug for StaticTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticTokens")
            .field("count", &self.tokens.len())
            .finish()
    }
}

impl StaticTokens {
    /// These tokens (empty ones are ignored), each letting its holder in anonymously.
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<str>>(tokens: I) -> Self {
        Self::of(tokens.into_iter().map(ApiToken::new))
    }

    /// These tokens, each with whom it stands for (empty ones are ignored).
    pub fn of(tokens: impl IntoIterator<Item = ApiToken>) -> Self {
        let tokens: Vec<ApiToken> = tokens.into_iter().filter(|t| !t.token.is_empty()).collect();
        let grants = tokens.iter().map(|t| Arc::new(Grant::of(t))).collect();
        Self { tokens, grants }
    }

    /// Tokens from a comma-separated list (an environment variable's value).
    pub fn from_csv(csv: &str) -> Self {
        Self::new(csv.split(','))
    }

    /// Which of these `token` is, compared against every one without stopping early, so that
    /// timing tells nothing of which one (if any) matched.
    fn find(&self, token: &str) -> Option<usize> {
        use subtle::ConditionallySelectable as _;
        let given = token.as_bytes();
        let mut found = subtle::Choice::from(0u8);
        let mut which = 0u64;
        for (i, t) in self.tokens.iter().enumerate() {
            let eq = t.token.as_slice().ct_eq(given);
            which = u64::conditional_select(&which, &(i as u64), eq);
            found |= eq;
        }
        bool::from(found).then(|| usize::try_from(which).ok())?
    }

    fn decide(&self, token: &str) -> AuthDecision {
        self.find(token)
            .and_then(|i| self.tokens.get(i))
            .map_or(AuthDecision::Invalid, ApiToken::decision)
    }

    /// What `token` grants, built once; `None` for a token that is not one of these.
    pub(crate) fn grant(&self, token: &str) -> Option<&Arc<Grant>> {
        self.grants.get(self.find(token)?)
    }
}

impl TokenValidator for StaticTokens {
    fn validate<'a>(&'a self, req: AuthRequest<'a>) -> BoxFuture<'a, AuthDecision> {
        Box::pin(std::future::ready(self.decide(req.token)))
    }

    fn validate_now(&self, req: AuthRequest<'_>) -> Option<AuthDecision> {
        Some(self.decide(req.token))
    }
}

/// Authentication settings of a server.
#[derive(Clone)]
#[non_exhaustive]
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

/// The auth of one protected route: each of its handlers asks [`Guard::check`] right after
/// the HTTP policy admits the request, before anything is read or parsed.
pub(crate) struct Guard {
    pub config: Arc<AuthConfig>,
    /// The route's HTTP policy (the metadata route's own checks).
    pub policy: crate::edge::policy::Policy,
    pub group: &'static str,
    pub face: Face,
    /// The route path (`/mcp/admin/v1`), for the resource metadata URL.
    pub path: String,
    pub env: crate::env::Environment,
    /// Where the token is: `Authorization` (MCP), else the configured header, parsed once
    /// (`None`: a name no request can carry).
    pub token_header: Option<HeaderName>,
    /// The server's static tokens, when they are its validator: their grants are read
    /// instead of asking the validator.
    pub statics: Option<Arc<StaticTokens>>,
}

/// What a route's auth decided about one request.
pub(crate) enum Verdict {
    /// Let through; who is calling, when the token says.
    Pass(Option<Arc<crate::context::Identity>>),
    /// Let through with a static token's grant (who is calling and who the caller is, built
    /// once).
    Granted(Arc<Grant>),
    /// Refused: the answer (the route adds its CORS headers).
    Refuse(Box<Response>),
    /// The validator must be awaited: [`settle`].
    Wait(Box<Pending>),
}

/// What a request the auth let through showed of itself.
#[derive(Default)]
pub(crate) struct Passed {
    /// Who is calling, when the token says.
    pub identity: Option<Arc<crate::context::Identity>>,
    /// Who the request's shares count against, when the auth knows it already (a static
    /// token's, computed once); else it is computed from the identity and the token.
    pub caller: Option<crate::context::Caller>,
}

/// A token an asynchronous validator has yet to decide on.
pub(crate) struct Pending {
    guard: Arc<Guard>,
    token: String,
    /// The metadata URL a refusal names (MCP), taken from the request head while it was there.
    metadata: Option<String>,
}

/// What a request showed of itself, or the answer refusing it; awaits the validator only
/// when it could not decide at once. No verdict (an unprotected route) lets everything in.
pub(crate) async fn settle(verdict: Option<Verdict>) -> Result<Passed, Response> {
    match verdict {
        None => Ok(Passed::default()),
        Some(Verdict::Pass(identity)) => Ok(Passed {
            identity,
            caller: None,
        }),
        Some(Verdict::Granted(g)) => Ok(Passed {
            identity: g.identity.clone(),
            caller: Some(g.caller.clone()),
        }),
        Some(Verdict::Refuse(answer)) => Err(*answer),
        Some(Verdict::Wait(p)) => {
            let Pending {
                guard,
                token,
                metadata,
            } = *p;
            let decision = guard.config.validator.validate(guard.request(&token)).await;
            guard
                .decided(decision, || metadata)
                .map(|identity| Passed {
                    identity,
                    caller: None,
                })
                .map_err(|answer| *answer)
        }
    }
}

/// A request the HTTP policy and the group's auth let in.
pub(crate) struct Admitted {
    /// The allowed origin, for [`crate::edge::policy::Policy::finish`].
    pub origin: Option<HeaderValue>,
    /// Who is calling, when the token says.
    pub identity: Option<Arc<crate::context::Identity>>,
    /// Who the request's shares count against (`None`: not known at this edge).
    pub caller: Option<crate::context::Caller>,
}

/// What every handler but the preflight's does first (`POST /rpc`, which splits the head
/// before its future, does the same in two steps): the HTTP policy, then the group's auth.
/// An unprotected route builds no verdict and awaits nothing.
pub(crate) async fn admit(
    policy: &crate::edge::policy::Policy,
    auth: Option<&Arc<Guard>>,
    parts: &Parts,
) -> Result<Admitted, Response> {
    let origin = policy
        .admit(&parts.method, &parts.headers)
        .map_err(IntoResponse::into_response)?;
    let Passed { identity, caller } = match auth {
        None => Passed::default(),
        Some(g) => match settle(Some(g.check(parts))).await {
            Ok(passed) => passed,
            Err(refused) => return Err(policy.finish(origin, refused)),
        },
    };
    let caller = caller.or_else(|| {
        let token = auth.and_then(|g| g.token(parts));
        crate::edge::caller::of(parts, &policy.proxies, identity.as_deref(), token)
    });
    Ok(Admitted {
        origin,
        identity,
        caller,
    })
}

impl Guard {
    /// The request's token, if it carries one where this guard reads it.
    pub(crate) fn token<'p>(&self, parts: &'p Parts) -> Option<&'p str> {
        self.token_in(&parts.headers)
    }

    /// [`Self::token`], from the headers alone.
    pub(crate) fn token_in<'h>(&self, headers: &'h HeaderMap) -> Option<&'h str> {
        token_of(headers, self.token_header.as_ref()?)
    }

    /// The verdict on a request's head: at once when the validator can decide without I/O,
    /// else a [`Pending`] for [`settle`].
    pub(crate) fn check(self: &Arc<Self>, parts: &Parts) -> Verdict {
        let Some(token) = self
            .token_header
            .as_ref()
            .and_then(|name| token_of(&parts.headers, name))
        else {
            return Verdict::Refuse(Box::new(self.refuse(self.metadata(parts), None)));
        };
        if let Some(statics) = &self.statics {
            return match statics.grant(token) {
                Some(g) => Verdict::Granted(g.clone()),
                None => Verdict::Refuse(Box::new(
                    self.refuse(self.metadata(parts), Some(AuthDecision::Invalid)),
                )),
            };
        }
        match self.config.validator.validate_now(self.request(token)) {
            Some(decision) => match self.decided(decision, || self.metadata(parts)) {
                Ok(identity) => Verdict::Pass(identity),
                Err(answer) => Verdict::Refuse(answer),
            },
            None => Verdict::Wait(Box::new(Pending {
                guard: self.clone(),
                token: token.to_owned(),
                metadata: self.metadata(parts),
            })),
        }
    }

    fn request<'a>(&'a self, token: &'a str) -> AuthRequest<'a> {
        AuthRequest {
            group: self.group,
            face: self.face,
            token,
        }
    }

    fn decided(
        &self,
        decision: AuthDecision,
        metadata: impl FnOnce() -> Option<String>,
    ) -> Result<Option<Arc<crate::context::Identity>>, Box<Response>> {
        match decision {
            AuthDecision::Allow => Ok(None),
            AuthDecision::Identified(identity) => Ok(Some(Arc::new(identity))),
            refused => Err(Box::new(self.refuse(metadata(), Some(refused)))),
        }
    }

    /// The URL of the route's resource metadata (MCP only: JSON-RPC refusals name none).
    fn metadata(&self, parts: &Parts) -> Option<String> {
        (self.face == Face::Mcp)
            .then(|| format!("{}{}", base_url(self, parts), metadata_path(&self.path)))
    }

    /// A call an identified caller lacks scopes for (see [`ScopeChallenge`]): the MCP
    /// authorization spec's `insufficient_scope` challenge, added to the refusal.
    pub(crate) fn challenge(&self, parts: &Parts, res: &mut Response) {
        let Some(ScopeChallenge(scopes)) = res.extensions_mut().remove::<ScopeChallenge>() else {
            return;
        };
        let Some(metadata) = self.metadata(parts) else {
            return;
        };
        if let Ok(v) = HeaderValue::from_str(&insufficient_scope(scopes, &metadata)) {
            res.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
    }

    fn refuse(&self, metadata: Option<String>, decision: Option<AuthDecision>) -> Response {
        let Some(metadata) = metadata else {
            let err = if decision.is_none() {
                RpcError::token_not_sent()
            } else {
                RpcError::invalid_token()
            };
            let mut out = Vec::new();
            crate::wire::rpc_error(&mut out, crate::wire::Id::Null, &err, &self.env);
            let status =
                StatusCode::from_u16(err.http_status()).unwrap_or(StatusCode::UNAUTHORIZED);
            return super::respond::json_response(status, out);
        };
        let (status, challenge, code, message) = match &decision {
            None => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer resource_metadata=\"{metadata}\""),
                codes::TOKEN_NOT_SENT,
                "Unauthorized: a bearer token is required",
            ),
            Some(AuthDecision::InsufficientScope(scopes)) => (
                StatusCode::FORBIDDEN,
                insufficient_scope(scopes, &metadata),
                codes::INVALID_TOKEN,
                "Forbidden: insufficient scope",
            ),
            Some(_) => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer error=\"invalid_token\", resource_metadata=\"{metadata}\""),
                codes::TOKEN_NOT_SENT,
                "Unauthorized: invalid token",
            ),
        };
        let body = crate::wire::error_body(crate::wire::Id::Null, code, message, None);
        let mut res = super::respond::json_response(status, body);
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            res.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        res
    }
}

/// The public URL of the router: the origin (configured, else from a checked `Host`) and the
/// prefix an outer app nests the router under (see [`super::mount`]).
fn base_url(g: &Guard, parts: &Parts) -> String {
    let origin = super::mount::origin(g.config.public_url.as_deref(), &parts.headers);
    let prefix = super::mount::prefix(
        parts.extensions.get::<axum::extract::OriginalUri>(),
        parts.uri.path(),
    );
    format!("{origin}{prefix}")
}

/// The MCP authorization spec's challenge for a token that lacks `scopes`.
fn insufficient_scope<S: AsRef<str>>(scopes: &[S], metadata: &str) -> String {
    format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{metadata}\"",
        scope_list(scopes)
    )
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

/// Set on an MCP response refusing a call for the scopes it requires: the route adds the
/// `insufficient_scope` challenge naming them ([`Guard::challenge`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScopeChallenge(pub &'static [&'static str]);

/// Serves the protected-resource metadata (RFC 9728) of one MCP route.
pub(crate) async fn resource_metadata(State(g): State<Arc<Guard>>, req: Request) -> Response {
    let (parts, _) = req.into_parts();
    let origin = match g.policy.admit(&parts.method, &parts.headers) {
        Ok(origin) => origin,
        Err(refused) => return refused.into_response(),
    };
    let base = base_url(&g, &parts);
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
        for (token, decision) in [
            ("beta", AuthDecision::Allow),
            ("bet", AuthDecision::Invalid),
            ("", AuthDecision::Invalid),
        ] {
            assert_eq!(t.validate(ask(token)).await, decision, "{token}");
            // The server's path: decided at once, alike.
            assert_eq!(t.validate_now(ask(token)), Some(decision), "{token}");
        }
        let none = StaticTokens::from_csv("");
        assert_eq!(
            none.validate(ask("anything")).await,
            AuthDecision::Invalid,
            "no tokens: fail closed"
        );
    }

    /// The grants the server's guard reads decide as the validator does, and name the caller
    /// as a request's token and identity would.
    #[test]
    fn grants_are_the_decisions_built_once() {
        use crate::context::{Caller, Identity};
        let t = StaticTokens::of([
            ApiToken::new("anon"),
            ApiToken::new("ci").subject("ci").scopes(["admin"]),
            ApiToken::new("scoped").scopes(["read"]),
        ]);
        let anon = t.grant("anon").expect("a token");
        assert_eq!(anon.identity, None);
        assert_eq!(anon.caller, Caller::token("anon"));
        let ci = t.grant("ci").expect("a token");
        assert_eq!(
            ci.identity.as_deref(),
            Some(&Identity::new("ci", ["admin"]))
        );
        assert_eq!(ci.caller, Caller::subject("ci"));
        // Scopes without a subject: identified, but known by the token.
        let scoped = t.grant("scoped").expect("a token");
        assert_eq!(
            scoped.identity.as_deref(),
            Some(&Identity::new("", ["read"]))
        );
        assert_eq!(scoped.caller, Caller::token("scoped"));
        assert!(t.grant("c").is_none() && t.grant("").is_none());
    }
}
