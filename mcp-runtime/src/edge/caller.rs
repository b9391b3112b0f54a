//! Who a request comes from, for the per-caller shares ([`crate::Caller`]): computed once per
//! request at the edge, from the identity, the token, and the client's address.
//!
//! Behind a proxy every peer is the proxy: the client's address is then read from the
//! forwarded headers, and only when the peer is one of [`crate::Limits::trusted_proxies`]
//! (anyone can write the headers). Of the addresses they list, the nearest one that is not
//! itself a trusted proxy is the client (the farther ones were written by whoever sent the
//! request, and can say anything).

use std::net::{IpAddr, SocketAddr};

use http::HeaderMap;
use http::request::Parts;

use crate::context::{Caller, Identity};

/// The socket's peer, put in each request's extensions by the accept loop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub SocketAddr);

/// The peer of a request: the accept loop's, else axum's `ConnectInfo` (a router served by
/// the user's own `axum::serve` with connect info).
fn peer(parts: &Parts) -> Option<IpAddr> {
    if let Some(p) = parts.extensions.get::<Peer>() {
        return Some(p.0.ip());
    }
    parts
        .extensions
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
}

/// The W3C trace context a request's headers carry (`traceparent`, `tracestate`), if well
/// formed: the parent of its spans. Read only when this process exports spans (nothing else
/// uses it: a webhook passes on the request's own headers).
pub(crate) fn trace_of(headers: &HeaderMap) -> Option<crate::context::TraceParent> {
    const PARENT: http::HeaderName = http::HeaderName::from_static("traceparent");
    const STATE: http::HeaderName = http::HeaderName::from_static("tracestate");
    if !crate::core::telemetry::traces_on() {
        return None;
    }
    let parent = headers.get(PARENT)?.to_str().ok()?;
    let state = headers.get(STATE).and_then(|v| v.to_str().ok());
    crate::context::TraceParent::new(parent, state)
}

/// The client's address: the peer, or, when the peer is a trusted proxy, the nearest
/// forwarded address that is not one.
pub(crate) fn client_address(parts: &Parts, proxies: &[ipnet::IpNet]) -> Option<IpAddr> {
    let peer = peer(parts)?;
    if proxies.is_empty() || !trusted(proxies, peer) {
        return Some(peer);
    }
    // Nearest first: the last hop of the header is the one the trusted peer wrote.
    let forwarded = forwarded(&parts.headers);
    for ip in forwarded.into_iter().rev() {
        if !trusted(proxies, ip) {
            return Some(ip);
        }
    }
    Some(peer)
}

fn trusted(proxies: &[ipnet::IpNet], ip: IpAddr) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    proxies.iter().any(|n| n.contains(&ip))
}

/// The addresses of `Forwarded` (RFC 7239 `for=`), else of `X-Forwarded-For`, farthest
/// first; names and obfuscated identifiers (`for=_hidden`, `unknown`) are skipped. Bounded:
/// at most 32 hops are read.
fn forwarded(headers: &HeaderMap) -> Vec<IpAddr> {
    const HOPS: usize = 32;
    let mut out = Vec::new();
    let rfc = headers.get_all(http::header::FORWARDED);
    for v in rfc.iter().filter_map(|v| v.to_str().ok()) {
        for element in v.split(',').take(HOPS) {
            for pair in element.split(';') {
                let Some((k, v)) = pair.trim().split_once('=') else {
                    continue;
                };
                if k.trim().eq_ignore_ascii_case("for")
                    && let Some(ip) = node(v.trim().trim_matches('"'))
                {
                    out.push(ip);
                }
            }
        }
    }
    if !out.is_empty() {
        return out;
    }
    for v in headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
    {
        out.extend(v.split(',').take(HOPS).filter_map(|a| node(a.trim())));
    }
    out
}

/// An address as a forwarded header writes it: `1.2.3.4`, `1.2.3.4:80`, `[::1]`, `[::1]:80`,
/// `::1`.
fn node(s: &str) -> Option<IpAddr> {
    if let Ok(ip) = s.parse() {
        return Some(ip);
    }
    if let Some(rest) = s.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    s.parse::<SocketAddr>().ok().map(|a| a.ip())
}

/// Who the request is from: the identity's subject, else the token's digest, else the
/// client's address, else nobody known (`None`: the face falls back to the session).
pub(crate) fn of(
    parts: &Parts,
    proxies: &[ipnet::IpNet],
    identity: Option<&Identity>,
    token: Option<&str>,
) -> Option<Caller> {
    choose(identity, token, client_address(parts, proxies))
}

/// The caller from what a request showed: the identity's subject, else the token's digest,
/// else the client's address.
pub(crate) fn choose(
    identity: Option<&Identity>,
    token: Option<&str>,
    address: Option<IpAddr>,
) -> Option<Caller> {
    if let Some(i) = identity.filter(|i| !i.subject.is_empty()) {
        return Some(Caller::subject(&i.subject));
    }
    if let Some(t) = token {
        return Some(Caller::token(t));
    }
    address.map(Caller::address)
}

/// The token a request carries in header `name`: after `Bearer ` in `Authorization`, the
/// value (with or without that prefix) in another header; `None` when blank.
pub(crate) fn token_of<'a>(
    headers: &'a axum::http::HeaderMap,
    name: &axum::http::HeaderName,
) -> Option<&'a str> {
    let v = headers.get(name)?.to_str().ok()?.trim();
    let t = if name == axum::http::header::AUTHORIZATION {
        v.strip_prefix("Bearer ")
            .or_else(|| v.strip_prefix("bearer "))?
            .trim()
    } else {
        v.strip_prefix("Bearer ").unwrap_or(v).trim()
    };
    (!t.is_empty()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(peer: &str, headers: &[(&str, &str)]) -> Parts {
        let mut b = http::Request::builder();
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        let (mut parts, ()) = b.body(()).unwrap().into_parts();
        parts.extensions.insert(Peer(peer.parse().unwrap()));
        parts
    }

    fn nets(s: &[&str]) -> Vec<ipnet::IpNet> {
        s.iter().map(|n| n.parse().unwrap()).collect()
    }

    #[test]
    fn forwarded_headers_count_only_from_a_trusted_proxy() {
        let spoofed = parts("203.0.113.9:5000", &[("x-forwarded-for", "1.1.1.1")]);
        // No proxy trusted, or the peer is not one: the peer, whatever the header says.
        assert_eq!(
            client_address(&spoofed, &[]),
            Some("203.0.113.9".parse().unwrap())
        );
        assert_eq!(
            client_address(&spoofed, &nets(&["10.0.0.0/8"])),
            Some("203.0.113.9".parse().unwrap())
        );
        // From the proxy: the nearest address that is not a proxy (the first one was written
        // by the client and is not believed).
        let proxied = parts(
            "10.0.0.2:4000",
            &[("x-forwarded-for", "6.6.6.6, 198.51.100.7, 10.0.0.3")],
        );
        assert_eq!(
            client_address(&proxied, &nets(&["10.0.0.0/8"])),
            Some("198.51.100.7".parse().unwrap())
        );
        // RFC 7239 first, with ports and brackets.
        let rfc = parts(
            "127.0.0.1:4000",
            &[
                (
                    "forwarded",
                    r#"for="[2001:db8::1]:4711";proto=https, for=_hidden"#,
                ),
                ("x-forwarded-for", "9.9.9.9"),
            ],
        );
        assert_eq!(
            client_address(&rfc, &nets(&["127.0.0.1/32"])),
            Some("2001:db8::1".parse().unwrap())
        );
    }

    #[test]
    fn the_caller_is_the_subject_then_the_token_then_the_address() {
        let p = parts("[2001:db8::5]:1", &[]);
        let ann = Identity::new("ann", ["read"]);
        assert_eq!(
            of(&p, &[], Some(&ann), Some("t")).unwrap().to_string(),
            "sub:ann"
        );
        let anonymous = Identity::default();
        let by_token = of(&p, &[], Some(&anonymous), Some("secret")).unwrap();
        assert!(by_token.to_string().starts_with("tok:"), "{by_token}");
        assert!(!by_token.to_string().contains("secret"));
        assert_eq!(
            of(&p, &[], None, None).unwrap().to_string(),
            "ip:2001:db8::/64"
        );
        let v4 = parts("[::ffff:192.0.2.1]:1", &[]);
        assert_eq!(
            of(&v4, &[], None, None).unwrap().to_string(),
            "ip:192.0.2.1"
        );
    }
}
