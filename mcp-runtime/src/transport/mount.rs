//! Where a request reached the router from: the path prefix an outer app nests the router
//! under (`Router::new().nest("/api", server.router())`) and the public origin. These are the
//! only parts of a request ever written into a URL or a header: the origin is the configured
//! `public_url` or a checked `Host`, the prefix a plain path axum routed on.

use axum::extract::OriginalUri;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};

/// The longest prefix written into a URL.
const MAX_PREFIX: usize = 256;

/// The prefix the router is nested under: the original path (axum's [`OriginalUri`], set by
/// the outermost router) minus the path this router saw. Empty when the router is not nested,
/// and when the prefix is not a plain path (`/` and RFC 3986 unreserved characters only, at
/// most 256 bytes): a prefix matched by a wildcard is client input and is never copied.
pub(crate) fn prefix<'a>(original: Option<&'a OriginalUri>, path: &str) -> &'a str {
    let Some(original) = original else {
        return "";
    };
    match original.path().strip_suffix(path) {
        Some(p) if is_plain_path(p) => p,
        _ => "",
    }
}

/// [`prefix`] of a request's head.
pub(crate) fn prefix_of(parts: &Parts) -> &str {
    prefix(parts.extensions.get::<OriginalUri>(), parts.uri.path())
}

/// Whether `p` is empty or `/segment...` with unreserved characters only (no `//`, `.`, `..`).
fn is_plain_path(p: &str) -> bool {
    p.is_empty()
        || (p.len() <= MAX_PREFIX
            && p.starts_with('/')
            && p[1..].split('/').all(|s| {
                !s.is_empty()
                    && s != "."
                    && s != ".."
                    && s.bytes().all(|b| {
                        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
                    })
            }))
}

/// The public origin: `public_url` (without a trailing `/`) when configured, else
/// `http://{Host}` when `Host` is a plain host name and port, else `http://localhost`.
pub(crate) fn origin(public_url: Option<&str>, headers: &HeaderMap) -> String {
    match public_url {
        Some(u) => u.trim_end_matches('/').to_owned(),
        None => {
            let host = headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .filter(|h| crate::edge::policy::is_host(h))
                .unwrap_or("localhost");
            format!("http://{host}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn original(path: &str) -> OriginalUri {
        OriginalUri(path.parse().unwrap())
    }

    #[test]
    fn the_prefix_is_the_original_path_minus_the_routed_one() {
        let o = original("/api/v2/rpc/shop/v1?info");
        assert_eq!(prefix(Some(&o), "/rpc/shop/v1"), "/api/v2");
        assert_eq!(prefix(Some(&original("/rpc/shop/v1")), "/rpc/shop/v1"), "");
        assert_eq!(prefix(None, "/rpc/shop/v1"), "");
        assert_eq!(prefix(Some(&original("/other")), "/rpc/shop/v1"), "");
    }

    #[test]
    fn only_a_plain_path_is_a_prefix() {
        for bad in [
            "/a%22b",
            "/a\"b",
            "//evil.example",
            "/a/../b",
            "/./a",
            "/a,b",
            "/a b",
            "api",
            "/api/",
        ] {
            assert!(!is_plain_path(bad), "{bad}");
        }
        assert!(!is_plain_path(&format!("/{}", "a".repeat(MAX_PREFIX))));
        let o = original("/a%22b/rpc/g/v1");
        assert_eq!(prefix(Some(&o), "/rpc/g/v1"), "");
        let ok = original("/t-1_a.b~c/x");
        assert_eq!(prefix(Some(&ok), "/x"), "/t-1_a.b~c");
    }

    #[test]
    fn the_origin_is_configured_or_a_checked_host() {
        let mut h = HeaderMap::new();
        assert_eq!(origin(None, &h), "http://localhost");
        h.insert(header::HOST, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(origin(None, &h), "http://127.0.0.1:8080");
        assert_eq!(
            origin(Some("https://api.example.com/"), &h),
            "https://api.example.com"
        );
        h.insert(header::HOST, "a\"b".parse().unwrap());
        assert_eq!(origin(None, &h), "http://localhost");
    }
}
