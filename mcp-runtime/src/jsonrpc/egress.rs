//! Where the server may send a request a client chose (a `$rpc.callback` URL): public
//! addresses only, checked where the connection is made.
//!
//! A name checked by one lookup and connected to after another can be rebound between the two
//! (DNS rebinding): [`PublicResolver`] is the resolver of the HTTP client itself, so the
//! addresses it lets through are the only ones the client can connect to. What counts as
//! public follows IANA's special-purpose address registries for IPv4 and IPv6 (and OWASP's
//! SSRF prevention cheat sheet): every range that is not globally reachable unicast is
//! refused, and an IPv4 address carried inside an IPv6 one (mapped, compatible, translated,
//! NAT64, 6to4, Teredo) is decoded and checked as IPv4.
//!
//! Written here rather than taken from a crate: the crates that classify addresses
//! (`ipnet`, the standard library's unstable `is_global`) leave out the embedded forms, and
//! the resolver has to be reqwest's.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// Whether `ip` is a globally reachable unicast address.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

/// IPv4: everything in IANA's special-purpose registry is refused, globally reachable or not
/// (no webhook lives on an AS112 or AMT relay address).
fn is_public_v4(ip: Ipv4Addr) -> bool {
    let a = u32::from(ip);
    // (network, prefix length)
    const SPECIAL: [(u32, u32); 18] = [
        (0x0000_0000, 8),  // 0.0.0.0/8 "this network", 0.0.0.0 unspecified
        (0x0a00_0000, 8),  // 10.0.0.0/8 private
        (0x6440_0000, 10), // 100.64.0.0/10 shared address space
        (0x7f00_0000, 8),  // 127.0.0.0/8 loopback
        (0xa9fe_0000, 16), // 169.254.0.0/16 link-local (cloud metadata)
        (0xac10_0000, 12), // 172.16.0.0/12 private
        (0xc000_0000, 24), // 192.0.0.0/24 IETF protocol assignments
        (0xc000_0200, 24), // 192.0.2.0/24 TEST-NET-1
        (0xc01f_c400, 24), // 192.31.196.0/24 AS112-v4
        (0xc034_c100, 24), // 192.52.193.0/24 AMT
        (0xc058_6300, 24), // 192.88.99.0/24 6to4 relay anycast (deprecated)
        (0xc0a8_0000, 16), // 192.168.0.0/16 private
        (0xc0af_3000, 24), // 192.175.48.0/24 direct delegation AS112
        (0xc612_0000, 15), // 198.18.0.0/15 benchmarking
        (0xc633_6400, 24), // 198.51.100.0/24 TEST-NET-2
        (0xcb00_7100, 24), // 203.0.113.0/24 TEST-NET-3
        (0xe000_0000, 4),  // 224.0.0.0/4 multicast
        (0xf000_0000, 4),  // 240.0.0.0/4 reserved, 255.255.255.255 broadcast
    ];
    !SPECIAL.iter().any(|&(net, len)| in_v4(a, net, len))
}

fn in_v4(a: u32, net: u32, len: u32) -> bool {
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    a & mask == net
}

fn in_v6(a: u128, net: u128, len: u32) -> bool {
    let mask = if len == 0 {
        0
    } else {
        u128::MAX << (128 - len)
    };
    a & mask == net
}

/// IPv6: only global unicast (2000::/3) outside the special-purpose ranges, or an embedded
/// IPv4 address that is public itself.
fn is_public_v6(ip: Ipv6Addr) -> bool {
    let a = u128::from(ip);
    let low32 = Ipv4Addr::from(a as u32);
    // ::/96 holds ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d; ::ffff:0:0/96 is
    // IPv4-mapped, ::ffff:0:0:0/96 IPv4-translated (SIIT), 64:ff9b::/96 the NAT64 prefix: each
    // reaches the IPv4 address in its last 32 bits.
    if in_v6(a, 0, 96)
        || in_v6(a, 0xffff << 32, 96)
        || in_v6(a, 0xffff << 48, 96)
        || in_v6(a, 0x0064_ff9b << 96, 96)
    {
        return is_public_v4(low32);
    }
    // 2002::/16 6to4: the IPv4 address is bits 16-47.
    if in_v6(a, 0x2002 << 112, 16) {
        return is_public_v4(Ipv4Addr::from((a >> 80) as u32));
    }
    // 2001::/32 Teredo: the server's IPv4 in bits 32-63, the client's (inverted) in the last 32.
    if in_v6(a, 0x2001_0000 << 96, 32) {
        return is_public_v4(Ipv4Addr::from((a >> 64) as u32)) && is_public_v4(!low32);
    }
    const SPECIAL: [(u128, u32); 9] = [
        (0x0064_ff9b_0001 << 80, 48), // 64:ff9b:1::/48 local-use NAT64
        (0x0100 << 112, 64),          // 100::/64 discard-only
        (0x2001 << 112, 23),          // 2001::/23 IETF protocol assignments
        (0x2001_0db8 << 96, 32),      // 2001:db8::/32 documentation
        (0x2620_004f_8000 << 80, 48), // 2620:4f:8000::/48 AS112-v6
        (0x3fff << 112, 20),          // 3fff::/20 documentation
        (0x5f00 << 112, 16),          // 5f00::/16 segment routing SIDs
        (0xfc00 << 112, 7),           // fc00::/7 unique local
        (0xfe80 << 112, 10),          // fe80::/10 link-local (and fec0::/10 below)
    ];
    // Global unicast is 2000::/3; the rest (fec0::/10 site-local, ff00::/8 multicast, 100::/8
    // ...) is not on the internet.
    in_v6(a, 0x2000 << 112, 3) && !SPECIAL.iter().any(|&(net, len)| in_v6(a, net, len))
}

/// Why a host was refused: carried through reqwest's error so the caller's message names it.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` resolves to no public address")]
pub(crate) struct NotPublic(pub String);

/// Whether one of `e`'s causes is a [`NotPublic`] refusal; its message if so.
pub(crate) fn refusal(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(n) = c.downcast_ref::<NotPublic>() {
            return Some(n.to_string());
        }
        cause = c.source();
    }
    None
}

/// reqwest's resolver for client-chosen URLs: the system's lookup, keeping only public
/// addresses (all of them for a name in `allowed`); a name left with none is an error, so no
/// connection is tried.
#[derive(Debug, Clone, Default)]
pub(crate) struct PublicResolver {
    pub allowed: Arc<[String]>,
}

impl PublicResolver {
    /// `addrs` without the non-public ones, unless `host` is allowed.
    fn keep(&self, host: &str, addrs: impl Iterator<Item = SocketAddr>) -> Vec<SocketAddr> {
        let all = self.allowed.iter().any(|a| a.eq_ignore_ascii_case(host));
        addrs.filter(|a| all || is_public(a.ip())).collect()
    }
}

impl reqwest::dns::Resolve for PublicResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let this = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let kept = this.keep(&host, found);
            if kept.is_empty() {
                return Err(Box::new(NotPublic(host)) as _);
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_purpose_ranges_are_not_public() {
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.255",
            "127.0.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.0.170",
            "192.0.2.1",
            "192.31.196.1",
            "192.52.193.1",
            "192.88.99.1",
            "192.168.0.1",
            "192.175.48.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.1",
            "203.0.113.1",
            "224.0.0.1",
            "239.255.255.255",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::127.0.0.1",
            "::169.254.169.254",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:0:a9fe:a9fe",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::10.0.0.1",
            "64:ff9b:1::5db8:d822",
            "100::1",
            "2001::1",
            "2001:0:a9fe:a9fe::5db8:d822",
            "2001:0:5db8:d822::f5ff:fffe",
            "2001:2::1",
            "2001:db8::1",
            "2002:a9fe:a9fe::1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
            "2620:4f:8000::1",
            "3fff::1",
            "5f00::1",
            "fc00::1",
            "fd00::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "4000::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip} is not public");
        }
    }

    #[test]
    fn public_addresses_and_their_embedded_forms_are_public() {
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.1",
            "172.32.0.1",
            "198.20.0.1",
            "223.255.255.255",
            "2606:2800:220:1::1",
            "2a00:1450:4001:81c::200e",
            "::ffff:93.184.216.34",
            "64:ff9b::5db8:d822",
            "2002:5db8:d822::1",
            // Teredo with public server 93.184.216.34 and client 8.8.8.8 (inverted).
            "2001:0:5db8:d822::f7f7:f7f7",
        ] {
            assert!(is_public(ip.parse().unwrap()), "{ip} is public");
        }
    }

    #[test]
    fn the_resolver_keeps_public_addresses_unless_the_host_is_allowed() {
        let addrs = || {
            ["169.254.169.254:80", "93.184.216.34:80", "[::1]:80"]
                .map(|a| a.parse::<SocketAddr>().unwrap())
                .into_iter()
        };
        let r = PublicResolver::default();
        assert_eq!(
            r.keep("a.example", addrs()),
            ["93.184.216.34:80".parse::<SocketAddr>().unwrap()]
        );
        let r = PublicResolver {
            allowed: Arc::from(["HOOKS.internal".to_owned()]),
        };
        assert_eq!(r.keep("hooks.internal", addrs()).len(), 3);
        assert_eq!(r.keep("a.example", addrs()).len(), 1);
    }

    #[tokio::test]
    async fn a_name_of_loopback_addresses_resolves_to_nothing_connectable() {
        use reqwest::dns::Resolve;
        let e = PublicResolver::default()
            .resolve("localhost".parse().unwrap())
            .await
            .err()
            .expect("refused");
        assert_eq!(
            refusal(e.as_ref()).as_deref(),
            Some("`localhost` resolves to no public address")
        );
    }
}
