//! DNS-rebinding protection: `Host` and `Origin` must name an allowed host.

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Which hosts may reach the server (by `Host` and `Origin`).
#[derive(Debug, Clone)]
pub struct HostPolicy {
    /// `None` allows any host (behind a trusted proxy that checks them).
    allowed: Option<Vec<String>>,
}

impl Default for HostPolicy {
    /// Loopback only: `localhost`, `127.0.0.1`, `[::1]` on any port.
    fn default() -> Self {
        Self::only(["localhost", "127.0.0.1", "[::1]"])
    }
}

impl HostPolicy {
    /// Allows exactly these host names (any port).
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(hosts: I) -> Self {
        Self {
            allowed: Some(
                hosts
                    .into_iter()
                    .map(|h| h.into().to_ascii_lowercase())
                    .collect(),
            ),
        }
    }

    /// Allows every host.
    pub fn any() -> Self {
        Self { allowed: None }
    }

    fn allows(&self, host: &str) -> bool {
        match &self.allowed {
            None => true,
            Some(list) => {
                let h = strip_port(host).to_ascii_lowercase();
                list.contains(&h)
            }
        }
    }

    /// Checks a request's headers: a foreign `Host` → 421, a foreign `Origin` → 403.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), Rejection> {
        if self.allowed.is_none() {
            return Ok(());
        }
        if let Some(host) = headers.get(header::HOST) {
            match host.to_str() {
                Ok(h) if self.allows(h) => {}
                _ => {
                    return Err(Rejection(
                        StatusCode::MISDIRECTED_REQUEST,
                        "Invalid Host header",
                    ));
                }
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let ok = origin
                .to_str()
                .ok()
                .and_then(|o| o.split_once("://").map(|(_, rest)| rest))
                .map(|rest| rest.split('/').next().unwrap_or(rest))
                .is_some_and(|h| self.allows(h));
            if !ok {
                return Err(Rejection(StatusCode::FORBIDDEN, "Invalid Origin header"));
            }
        }
        Ok(())
    }
}

/// Why a request was refused: its status and a plain-text reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejection(pub StatusCode, pub &'static str);

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        (self.0, self.1).into_response()
    }
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map(|i| &host[..=i]).unwrap_or(host);
    }
    host.rsplit_once(':').map(|(h, _)| h).unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn check(host: &str, origin: Option<&str>) -> Option<u16> {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        HostPolicy::default().check(&h).err().map(|r| r.0.as_u16())
    }

    #[test]
    fn loopback_passes_foreign_fails() {
        assert_eq!(check("127.0.0.1:8080", None), None);
        assert_eq!(check("localhost", Some("http://localhost:3000")), None);
        assert_eq!(check("[::1]:80", Some("http://[::1]:80")), None);
        assert_eq!(check("evil.example.com", None), Some(421));
        assert_eq!(
            check("127.0.0.1:8080", Some("http://evil.example.com")),
            Some(403)
        );
        assert_eq!(check("127.0.0.1:8080", Some("null")), Some(403));
    }
}
