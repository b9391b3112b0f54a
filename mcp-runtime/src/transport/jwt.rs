//! Bearer JWTs checked against the issuer's published keys (feature `jwt`): the resource
//! server of the MCP authorization specification.
//!
//! A token passes when its signature verifies with a key of the issuer's JWKS (RS256/384/512,
//! PS256/384/512, ES256/384, EdDSA; chosen by the token's `kid`), its `iss` is the issuer, its
//! `aud` names this resource (RFC 8707: the audience is the resource indicator clients ask
//! tokens for), and `exp`/`nbf` hold (60 s leeway). The caller's identity is its `sub`, its
//! scopes the `scope` claim (space-separated) or `scp` (a list). The JWKS is fetched on the
//! first token and again when a token names an unknown `kid` (at most once every 30 s, so
//! made-up `kid`s cannot make the server hammer the issuer).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use tokio::sync::Mutex;

use super::auth::{AuthDecision, AuthRequest, TokenValidator};
use crate::context::Identity;

/// How often an unknown `kid` may refresh the keys.
const REFRESH: Duration = Duration::from_secs(30);

/// Checks bearer JWTs ([module](self)).
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_runtime::transport::jwt::JwtValidator;
///
/// let jwt = JwtValidator::new("https://auth.example.com", "https://api.example.com/mcp/admin/v1")
///     .jwks_url("https://auth.example.com/.well-known/jwks.json");
/// let server = mcp_runtime::Server::builder().token_validator(Arc::new(jwt));
/// ```
pub struct JwtValidator {
    issuer: String,
    audience: String,
    jwks_url: String,
    scopes: Vec<String>,
    refresh: Duration,
    client: reqwest::Client,
    keys: Mutex<Keys>,
}

#[derive(Default)]
struct Keys {
    by_kid: HashMap<String, (DecodingKey, Algorithm)>,
    fetched: Option<Instant>,
}

impl std::fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtValidator")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("jwks_url", &self.jwks_url)
            .finish_non_exhaustive()
    }
}

impl JwtValidator {
    /// Tokens of `issuer` for `audience` (this resource's URL); the keys are fetched from
    /// `<issuer>/.well-known/jwks.json` unless [`Self::jwks_url`] says otherwise.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        let issuer = issuer.into();
        let jwks_url = format!("{}/.well-known/jwks.json", issuer.trim_end_matches('/'));
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self {
            issuer,
            audience: audience.into(),
            jwks_url,
            scopes: Vec::new(),
            refresh: REFRESH,
            client,
            keys: Mutex::default(),
        }
    }

    /// Where the issuer publishes its keys.
    pub fn jwks_url(mut self, url: impl Into<String>) -> Self {
        self.jwks_url = url.into();
        self
    }

    /// Scopes every token must carry (else 403 `insufficient_scope` naming them).
    pub fn require_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How long after a fetch an unknown `kid` may fetch the keys again (default 30 s).
    pub fn refresh_interval(mut self, every: Duration) -> Self {
        self.refresh = every;
        self
    }

    /// Fetches the JWKS, unless it was fetched less than the refresh interval ago.
    async fn refresh(&self, keys: &mut Keys) {
        if keys.fetched.is_some_and(|t| t.elapsed() < self.refresh) {
            return;
        }
        keys.fetched = Some(Instant::now());
        let set = match self.client.get(&self.jwks_url).send().await {
            Ok(r) if r.status().is_success() => r.json::<JwkSet>().await,
            Ok(r) => {
                tracing::warn!(status = r.status().as_u16(), url = %self.jwks_url, "JWKS not fetched");
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e.without_url(), url = %self.jwks_url, "JWKS not fetched");
                return;
            }
        };
        let Ok(set) = set else {
            tracing::warn!(url = %self.jwks_url, "JWKS is not a JWK set");
            return;
        };
        keys.by_kid = set
            .keys
            .iter()
            .filter_map(|jwk| {
                let kid = jwk.common.key_id.clone()?;
                let alg = jwk
                    .common
                    .key_algorithm
                    .and_then(|a| a.to_string().parse::<Algorithm>().ok())
                    .or_else(|| default_alg(jwk))?;
                Some((kid, (DecodingKey::from_jwk(jwk).ok()?, alg)))
            })
            .collect();
    }

    async fn key(&self, kid: &str) -> Option<(DecodingKey, Algorithm)> {
        let mut keys = self.keys.lock().await;
        if !keys.by_kid.contains_key(kid) {
            self.refresh(&mut keys).await;
        }
        keys.by_kid.get(kid).cloned()
    }

    async fn check(&self, token: &str) -> AuthDecision {
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            return AuthDecision::Invalid;
        };
        let Some((key, alg)) = (match header.kid.as_deref() {
            Some(kid) => self.key(kid).await,
            None => None,
        }) else {
            return AuthDecision::Invalid;
        };
        self.verify(token, header.alg, &key, alg)
    }

    /// The decision on a token whose key is known.
    fn verify(
        &self,
        token: &str,
        named: Algorithm,
        key: &DecodingKey,
        alg: Algorithm,
    ) -> AuthDecision {
        if named != alg {
            return AuthDecision::Invalid;
        }
        let mut v = Validation::new(alg);
        v.set_issuer(&[&self.issuer]);
        v.set_audience(&[&self.audience]);
        v.validate_nbf = true;
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let Ok(data) = jsonwebtoken::decode::<Value>(token, key, &v) else {
            return AuthDecision::Invalid;
        };
        let claims = data.claims;
        let subject = claims["sub"].as_str().unwrap_or_default().to_owned();
        let scopes: Vec<String> = match (&claims["scope"], &claims["scp"]) {
            (Value::String(s), _) => s.split_whitespace().map(str::to_owned).collect(),
            (_, Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        let missing: Vec<String> = self
            .scopes
            .iter()
            .filter(|s| !scopes.contains(s))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return AuthDecision::InsufficientScope(missing);
        }
        AuthDecision::Identified(Identity {
            subject,
            scopes,
            claims,
        })
    }
}

/// The algorithm of a key that does not name one.
fn default_alg(jwk: &jsonwebtoken::jwk::Jwk) -> Option<Algorithm> {
    use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve};
    match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Some(Algorithm::RS256),
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => Some(Algorithm::ES256),
            EllipticCurve::P384 => Some(Algorithm::ES384),
            _ => None,
        },
        AlgorithmParameters::OctetKeyPair(_) => Some(Algorithm::EdDSA),
        AlgorithmParameters::OctetKey(_) => None,
    }
}

impl TokenValidator for JwtValidator {
    fn validate<'a>(&'a self, req: AuthRequest<'a>) -> BoxFuture<'a, AuthDecision> {
        Box::pin(self.check(req.token))
    }

    /// Decides at once when the token's key is already fetched (and no fetch holds the keys);
    /// else the server awaits [`Self::validate`], which fetches.
    fn validate_now(&self, req: AuthRequest<'_>) -> Option<AuthDecision> {
        let Ok(header) = jsonwebtoken::decode_header(req.token) else {
            return Some(AuthDecision::Invalid);
        };
        let Some(kid) = header.kid.as_deref() else {
            return Some(AuthDecision::Invalid);
        };
        let (key, alg) = self.keys.try_lock().ok()?.by_kid.get(kid)?.clone();
        Some(self.verify(req.token, header.alg, &key, alg))
    }
}

/// An [`Arc`]'d validator, for [`crate::ServerBuilder::token_validator`].
impl From<JwtValidator> for Arc<dyn TokenValidator> {
    fn from(v: JwtValidator) -> Self {
        Arc::new(v)
    }
}
