//! The one HTTP policy, applied to every route (`/rpc`, its OpenRPC `GET`, MCP, the OAuth
//! metadata): `Host`/`Origin` (DNS-rebinding protection and CORS), a JSON `Content-Type` on
//! `POST`, the body limit and the request timeout.
//!
//! Applied in the handlers rather than as router layers: every axum layer boxes each request's
//! future and clones the inner service per request.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Which hosts may reach the server, by `Host` and `Origin`.
///
/// The default is decided by where the server listens: bound to a loopback address (or
/// served through [`crate::Server::router`], where the address is unknown), only `localhost`,
/// `127.0.0.1` and `[::1]` (any port) pass, which defeats DNS rebinding; bound to another
/// address, any `Host` passes but a browser's `Origin` must be the `Host` it calls (same
/// origin), so another site's page cannot call the server. Allowed cross-origin callers get
/// CORS headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostPolicy {
    kind: Kind,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum Kind {
    /// Decided by the bound address (see [`HostPolicy`]).
    #[default]
    Auto,
    /// Exactly these host names, lowercase, any port.
    Only(Vec<String>),
    /// Any `Host`; an `Origin` must name the `Host` it calls.
    SameOrigin,
    /// Any host and any origin.
    Any,
}

const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

impl HostPolicy {
    /// Allows exactly these host names (any port), as `Host` and as the host of `Origin`.
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(hosts: I) -> Self {
        Self {
            kind: Kind::Only(
                hosts
                    .into_iter()
                    .map(|h| h.into().to_ascii_lowercase())
                    .collect(),
            ),
        }
    }

    /// Loopback names only, wherever the server listens.
    pub fn loopback() -> Self {
        Self::only(LOOPBACK)
    }

    /// Allows every host and origin (behind a trusted proxy that checks them).
    pub fn any() -> Self {
        Self { kind: Kind::Any }
    }

    /// The policy for a server bound to `local` (`None`: unknown).
    pub(crate) fn resolve(&self, local: Option<SocketAddr>) -> Self {
        match (&self.kind, local) {
            (Kind::Auto, Some(a)) if !a.ip().is_loopback() => Self {
                kind: Kind::SameOrigin,
            },
            (Kind::Auto, _) => Self::loopback(),
            _ => self.clone(),
        }
    }

    fn allows(&self, host: &str) -> bool {
        // Compared ignoring case, without a lowercase copy of every request's host.
        let name = strip_port(host);
        match &self.kind {
            Kind::Any | Kind::SameOrigin => true,
            Kind::Auto => LOOPBACK.iter().any(|l| l.eq_ignore_ascii_case(name)),
            Kind::Only(list) => list.iter().any(|l| l.eq_ignore_ascii_case(name)),
        }
    }

    /// Checks a request's `Host` alone (a foreign or malformed one → 421), for what any origin
    /// may read but a page must not be served under a host it does not answer for (the server
    /// cards, which name their host in their URLs); returns the host, if sent.
    pub(crate) fn check_host<'h>(
        &self,
        headers: &'h HeaderMap,
    ) -> Result<Option<&'h str>, Rejection> {
        match headers.get(header::HOST) {
            None => Ok(None),
            Some(h) => match h.to_str() {
                Ok(h) if is_host(h) && self.allows(h) => Ok(Some(h)),
                _ => Err(Rejection(
                    StatusCode::MISDIRECTED_REQUEST,
                    "Invalid Host header",
                )),
            },
        }
    }

    /// Checks a request's headers: a foreign or malformed `Host` → 421, a foreign `Origin` →
    /// 403. Returns the allowed origin, if the request had one (for CORS).
    pub(crate) fn check<'h>(
        &self,
        headers: &'h HeaderMap,
    ) -> Result<Option<&'h HeaderValue>, Rejection> {
        let host = self.check_host(headers)?;
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(None);
        };
        let origin_host = origin
            .to_str()
            .ok()
            .and_then(|o| o.split_once("://").map(|(_, rest)| rest))
            .map(|rest| rest.split('/').next().unwrap_or(rest))
            .filter(|h| is_host(h));
        let ok = match (&self.kind, origin_host) {
            (_, None) => false,
            (Kind::SameOrigin, Some(o)) => host.is_some_and(|h| h.eq_ignore_ascii_case(o)),
            (_, Some(o)) => self.allows(o),
        };
        if ok {
            Ok(Some(origin))
        } else {
            Err(Rejection(StatusCode::FORBIDDEN, "Invalid Origin header"))
        }
    }
}

/// Whether a `Host` value is a host name or address with an optional port, and nothing else:
/// only such a value is ever written into another header or a document.
pub(crate) fn is_host(h: &str) -> bool {
    !h.is_empty()
        && h.len() <= 255
        && h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map(|i| &host[..=i]).unwrap_or(host);
    }
    host.rsplit_once(':').map(|(h, _)| h).unwrap_or(host)
}

/// Why a request was refused: its status and a plain-text reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejection(pub StatusCode, pub &'static str);

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        (self.0, self.1).into_response()
    }
}

/// What one route applies to every request.
#[derive(Debug, Clone)]
pub(crate) struct Policy {
    pub hosts: HostPolicy,
    /// The largest body accepted (then 413).
    pub body_bytes: usize,
    /// Until the response head: a slow upload or a stalled handler gets 408.
    pub timeout: Option<Duration>,
    /// The headers a browser may send (CORS preflight).
    allow_headers: HeaderValue,
    /// Whose forwarded headers name the client ([`crate::Limits::trusted_proxies`]).
    pub proxies: std::sync::Arc<[ipnet::IpNet]>,
}

/// Headers every CORS answer exposes to the page.
const EXPOSE: &str = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Content-Language";

impl Policy {
    pub(crate) fn new(
        hosts: HostPolicy,
        body_bytes: usize,
        timeout: Option<Duration>,
        token_header: &str,
    ) -> Self {
        let mut allow = String::from(
            "Content-Type, Accept, Accept-Language, Authorization, Last-Event-ID, \
             Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name",
        );
        if !token_header.eq_ignore_ascii_case("authorization") && is_token(token_header) {
            allow.push_str(", ");
            allow.push_str(token_header);
        }
        Self {
            hosts,
            body_bytes,
            timeout,
            allow_headers: HeaderValue::from_str(&allow)
                .unwrap_or(HeaderValue::from_static("Content-Type")),
            proxies: std::sync::Arc::from([]),
        }
    }

    /// The checks before a handler runs: `Host`/`Origin`, and a JSON `Content-Type` on `POST`
    /// (415). `Ok` carries the allowed origin, for [`Policy::finish`].
    pub(crate) fn admit(
        &self,
        method: &Method,
        headers: &HeaderMap,
    ) -> Result<Option<HeaderValue>, Rejection> {
        let origin = self.hosts.check(headers)?;
        if method == Method::POST && !is_json(headers) {
            return Err(Rejection(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Content-Type must be application/json",
            ));
        }
        Ok(origin.cloned())
    }

    /// Adds the CORS headers of an allowed cross-origin request.
    pub(crate) fn finish(&self, origin: Option<HeaderValue>, mut res: Response) -> Response {
        if let Some(o) = origin {
            let h = res.headers_mut();
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, o);
            h.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static(EXPOSE),
            );
            h.append(header::VARY, HeaderValue::from_static("Origin"));
        }
        res
    }

    /// The answer to a CORS preflight (`OPTIONS`) from an allowed origin.
    pub(crate) fn preflight(&self, headers: &HeaderMap, allow_methods: &'static str) -> Response {
        match self.hosts.check(headers) {
            Err(r) => r.into_response(),
            Ok(origin) => {
                let mut res = StatusCode::NO_CONTENT.into_response();
                let h = res.headers_mut();
                h.insert(header::ALLOW, HeaderValue::from_static(allow_methods));
                if let Some(o) = origin {
                    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, o.clone());
                    h.insert(
                        header::ACCESS_CONTROL_ALLOW_METHODS,
                        HeaderValue::from_static(allow_methods),
                    );
                    h.insert(
                        header::ACCESS_CONTROL_ALLOW_HEADERS,
                        self.allow_headers.clone(),
                    );
                    h.insert(
                        header::ACCESS_CONTROL_MAX_AGE,
                        HeaderValue::from_static("600"),
                    );
                    h.insert(header::VARY, HeaderValue::from_static("Origin"));
                }
                res
            }
        }
    }

    /// Runs a handler under the request timeout. A handler that finishes without waiting never
    /// registers the timer.
    ///
    /// A plain function returning the combinator, not an `async fn`: that would hold the
    /// handler's future twice (as argument and as the timeout's inner future).
    pub(crate) fn run<F: Future<Output = Response>>(
        &self,
        handler: F,
    ) -> impl Future<Output = Response> + use<F> {
        use futures_util::FutureExt as _;
        use futures_util::future::Either;
        fn or_408(r: Result<Response, tokio::time::error::Elapsed>) -> Response {
            r.unwrap_or_else(|_| timed_out())
        }
        match self.timeout {
            Some(limit) => Either::Left(tokio::time::timeout(limit, handler).map(or_408)),
            None => Either::Right(handler),
        }
    }

    /// The whole body, or the answer to one that is too large (413) or broken off (400).
    pub(crate) async fn read(&self, body: Body) -> Result<Bytes, Response> {
        use http_body_util::BodyExt as _;
        match http_body_util::Limited::new(body, self.body_bytes)
            .collect()
            .await
        {
            Ok(collected) => Ok(collected.to_bytes()),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                "Failed to buffer the request body: length limit exceeded",
            )
                .into_response()),
            Err(_) => Err((
                StatusCode::BAD_REQUEST,
                "Failed to buffer the request body: the upload broke off",
            )
                .into_response()),
        }
    }
}

/// The answer once the request timeout has passed.
pub(crate) fn timed_out() -> Response {
    (StatusCode::REQUEST_TIMEOUT, "Request Timeout").into_response()
}

/// Whether the `Content-Type` is JSON (`application/json` or `*/*+json`); a missing one is
/// not: a cross-site form or `fetch` without a preflight can send no other.
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            let mime = ct.split(';').next().unwrap_or("").trim();
            mime.eq_ignore_ascii_case("application/json")
                || mime.to_ascii_lowercase().ends_with("+json")
        })
}

/// An HTTP token (a header name).
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(policy: &HostPolicy, host: &str, origin: Option<&str>) -> Option<u16> {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        policy.check(&h).err().map(|r| r.0.as_u16())
    }

    #[test]
    fn loopback_passes_foreign_fails() {
        let p = HostPolicy::default().resolve(None);
        assert_eq!(check(&p, "127.0.0.1:8080", None), None);
        assert_eq!(check(&p, "localhost", Some("http://localhost:3000")), None);
        assert_eq!(check(&p, "[::1]:80", Some("http://[::1]:80")), None);
        assert_eq!(check(&p, "evil.example.com", None), Some(421));
        assert_eq!(
            check(&p, "127.0.0.1:8080", Some("http://evil.example.com")),
            Some(403)
        );
        assert_eq!(check(&p, "127.0.0.1:8080", Some("null")), Some(403));
        // Nothing but a host name and port is a Host.
        assert_eq!(check(&p, "localhost\", x=\"y", None), Some(421));
    }

    #[test]
    fn bound_elsewhere_any_host_but_same_origin() {
        let p = HostPolicy::default().resolve(Some("10.0.0.5:80".parse().unwrap()));
        assert_eq!(check(&p, "api.example.com", None), None);
        assert_eq!(
            check(&p, "api.example.com", Some("https://api.example.com")),
            None
        );
        assert_eq!(
            check(&p, "api.example.com", Some("https://evil.example")),
            Some(403)
        );
        let listed =
            HostPolicy::only(["app.example.com"]).resolve(Some("10.0.0.5:80".parse().unwrap()));
        assert_eq!(
            check(&listed, "app.example.com", Some("https://app.example.com")),
            None
        );
        assert_eq!(check(&listed, "api.example.com", None), Some(421));
    }
}
