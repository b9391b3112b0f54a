//! A client-chosen callback cannot be steered into the server's network: the example as it
//! ships (`.webhooks()`), inside a network namespace of its own (`unshare --net --mount`,
//! loopback only, so nothing here can reach a real network).
//!
//! In the namespace, receivers listen on the cloud metadata address (169.254.169.254), a
//! private address (10.0.0.1), NAT64's form of the metadata address (64:ff9b::a9fe:a9fe) and
//! a public-looking control address (93.184.216.34), all on loopback; a DNS stub on
//! 127.0.0.1:53 (the namespace's `/etc/resolv.conf`) answers names of `hooks.example`, one of
//! which rebinds: its A answers alternate between the control address and the metadata one.
//! Only the control receiver may get anything.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{Method, StatusCode, Uri};
use axum::response::IntoResponse;
use serde_json::{Value, json};

/// Set in the test's own process once it runs inside the namespace.
const INSIDE: &str = "MCP_TEST_SSRF_NAMESPACE";
const PORT: u16 = 8080;
const CONTROL: &str = "93.184.216.34";
const METADATA: &str = "169.254.169.254";
const PRIVATE: &str = "10.0.0.1";
const NAT64_METADATA: &str = "64:ff9b::a9fe:a9fe";

#[test]
#[ignore = "needs a network namespace, unshare --net --mount as root; scripts/test.sh provides the peers and runs ignored tests"]
fn callbacks_reach_public_addresses_only_even_when_the_name_rebinds() {
    if std::env::var_os(INSIDE).is_some() {
        return inside();
    }
    // Outside: run this same test again in a namespace with loopback alone, the special
    // addresses on it and our own resolv.conf.
    let dir = std::env::temp_dir().join(format!("mcp-ssrf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let resolv = dir.join("resolv.conf");
    std::fs::write(
        &resolv,
        "nameserver 127.0.0.1\noptions attempts:1 timeout:2\n",
    )
    .unwrap();
    let script = format!(
        "set -e; PATH=\"$PATH:/usr/sbin:/sbin\"; ip link set lo up; \
         for a in {CONTROL}/32 {METADATA}/32 {PRIVATE}/32; do ip addr add $a dev lo; done; \
         ip -6 addr add {NAT64_METADATA}/128 dev lo; \
         mount --bind {} /etc/resolv.conf; exec \"$@\"",
        resolv.display()
    );
    let exe = std::env::current_exe().unwrap();
    let probe = Command::new("unshare")
        .args(["--net", "--mount", "true"])
        .status();
    assert!(
        probe.is_ok_and(|s| s.success()),
        "unshare --net --mount failed: the test runs as root with util-linux and iproute2"
    );
    let status = Command::new("unshare")
        .args(["--net", "--mount", "--", "sh", "-c", &script, "sh"])
        .arg(exe)
        .args([
            "callbacks_reach_public_addresses_only_even_when_the_name_rebinds",
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(INSIDE, "1")
        .status()
        .expect("run unshare");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(status.success(), "the test inside the namespace failed");
}

/// What each receiver got: (address, method, path).
type Seen = Arc<Mutex<Vec<(String, Method, String)>>>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn inside() {
    let seen: Seen = Arc::default();
    for addr in [CONTROL, METADATA, PRIVATE, NAT64_METADATA] {
        receiver(addr.parse().unwrap(), seen.clone()).await;
    }
    let queries = dns_stub().await;

    let server = tests::example_prod().build().unwrap();
    let rpc = format!("{}/rpc/mcp/v1", tests::serve_url(server).await);
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let call = |id: u32, hook: String| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "Catalog.ping",
            "params": {"who": "hook", "$rpc": {"callback": hook}}});
        let (client, rpc) = (client.clone(), rpc.clone());
        async move {
            let r = client.post(&rpc).json(&body).send().await.unwrap();
            r.json::<Value>().await.unwrap()
        }
    };
    let url = |host: &str, path: &str| format!("http://{host}:{PORT}/{path}");

    // Names and addresses that are not public are refused before anything runs.
    for (host, why) in [
        (
            "meta.hooks.example",
            "`meta.hooks.example` resolves to no public address",
        ),
        (
            "private.hooks.example",
            "`private.hooks.example` resolves to no public address",
        ),
        (
            "nat64.hooks.example",
            "`nat64.hooks.example` resolves to no public address",
        ),
        (
            "169.254.169.254",
            "`169.254.169.254` is not a public host name",
        ),
        (
            "[64:ff9b::a9fe:a9fe]",
            "`64:ff9b::a9fe:a9fe` is not a public host name",
        ),
    ] {
        let body = call(1, url(host, "steal")).await;
        assert_eq!(
            body["error"]["message"],
            format!("Invalid $rpc: `callback` cannot be used: {why}"),
            "{host}: {body}"
        );
    }

    // The rebinding name: its first answer (the check) is public, the next (the delivery)
    // the metadata address, which the resolver drops: the result is not delivered at all.
    let ack = call(2, url("rebind.hooks.example", "steal")).await;
    assert_eq!(ack["result"]["async"], true, "{ack}");
    // The control: a public name's result is delivered.
    let ack = call(3, url("public.hooks.example", "control")).await;
    assert_eq!(ack["result"]["async"], true, "{ack}");
    let delivered = async {
        loop {
            let got = seen.lock().unwrap().clone();
            if got
                .iter()
                .any(|(_, m, p)| m == Method::POST && p == "/control")
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), delivered)
        .await
        .expect("the control receiver gets its result");
    // The rebinding delivery was tried (its name looked up again, now to the metadata
    // address) and went nowhere.
    let rebound = async {
        while queries.lock().unwrap().get("rebind.hooks.example").copied() < Some(2) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), rebound)
        .await
        .expect("the delivery looked the name up again");
    tokio::time::sleep(Duration::from_millis(500)).await;

    let got = seen.lock().unwrap().clone();
    let special: Vec<_> = got.iter().filter(|(a, _, _)| a != CONTROL).collect();
    assert!(
        special.is_empty(),
        "special addresses received: {special:?}"
    );
    let control: Vec<_> = got
        .iter()
        .map(|(_, m, p)| format!("{m} {p}"))
        .collect::<Vec<_>>();
    // The rebinding name's check reached the control address (its public answer), nothing
    // after it did; the control name was checked and delivered.
    assert_eq!(
        control,
        ["OPTIONS /steal", "OPTIONS /control", "POST /control"],
        "{got:?}"
    );
}

/// An HTTP receiver on `ip`:8080 that answers `OPTIONS` with `Allow: POST` and records every
/// request.
async fn receiver(ip: IpAddr, seen: Seen) {
    let listener = tokio::net::TcpListener::bind(SocketAddr::new(ip, PORT))
        .await
        .unwrap_or_else(|e| panic!("bind {ip}: {e}"));
    let name = ip.to_string();
    let app = axum::Router::new().fallback(move |method: Method, uri: Uri| {
        let (seen, name) = (seen.clone(), name.clone());
        async move {
            let options = method == Method::OPTIONS;
            seen.lock()
                .unwrap()
                .push((name, method, uri.path().to_owned()));
            // Closed after each answer: the next request looks the name up again rather
            // than reusing this connection.
            if options {
                (
                    StatusCode::OK,
                    [("allow", "POST, OPTIONS"), ("connection", "close")],
                )
                    .into_response()
            } else {
                (StatusCode::OK, [("connection", "close")]).into_response()
            }
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
}

/// A DNS stub on 127.0.0.1:53 answering A and AAAA questions for the test's names; the
/// count of A questions per name.
async fn dns_stub() -> Arc<Mutex<HashMap<String, u32>>> {
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:53").await.unwrap();
    let counts: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let seen = counts.clone();
    tokio::spawn(async move {
        let mut buf = [0u8; 512];
        while let Ok((n, from)) = socket.recv_from(&mut buf).await {
            if let Some(answer) = answer(&buf[..n], &seen) {
                let _ = socket.send_to(&answer, from).await;
            }
        }
    });
    counts
}

/// The answer to one query: the question copied, and at most one record.
fn answer(q: &[u8], counts: &Mutex<HashMap<String, u32>>) -> Option<Vec<u8>> {
    let mut at = 12;
    let mut labels = Vec::new();
    while *q.get(at)? != 0 {
        let len = q[at] as usize;
        labels.push(String::from_utf8_lossy(q.get(at + 1..at + 1 + len)?).to_lowercase());
        at += 1 + len;
    }
    let qtype = u16::from_be_bytes([*q.get(at + 1)?, *q.get(at + 2)?]);
    let question = &q[12..at + 5];
    let name = labels.join(".");
    // An A record's data.
    let a = |ip: &str| {
        ip.parse::<std::net::Ipv4Addr>()
            .ok()
            .map(|ip| ip.octets().to_vec())
    };
    let rdata: Option<Vec<u8>> = match (qtype, name.as_str()) {
        (1, "rebind.hooks.example") => {
            let mut c = counts.lock().unwrap();
            let n = c.entry(name.clone()).or_default();
            *n += 1;
            a(if *n % 2 == 1 { CONTROL } else { METADATA })
        }
        (1, "public.hooks.example") => a(CONTROL),
        (1, "meta.hooks.example") => a(METADATA),
        (1, "private.hooks.example") => a(PRIVATE),
        (28, "nat64.hooks.example") => NAT64_METADATA
            .parse::<std::net::Ipv6Addr>()
            .ok()
            .map(|ip| ip.octets().to_vec()),
        _ => None,
    };
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&q[..2]); // id
    out.extend_from_slice(&[0x81, 0x80]); // a response, recursion desired and available
    out.extend_from_slice(&[0, 1, 0, u8::from(rdata.is_some()), 0, 0, 0, 0]);
    out.extend_from_slice(question);
    if let Some(rdata) = rdata {
        out.extend_from_slice(&[0xc0, 0x0c]); // the question's name
        out.extend_from_slice(&qtype.to_be_bytes());
        out.extend_from_slice(&[0, 1, 0, 0, 0, 0]); // class IN, TTL 0
        out.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
        out.extend_from_slice(&rdata);
    }
    Some(out)
}

#[test]
fn the_stub_answers_like_a_resolver() {
    // A query for public.hooks.example, type A.
    let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    for l in ["public", "hooks", "example"] {
        q.push(l.len() as u8);
        q.extend_from_slice(l.as_bytes());
    }
    q.extend_from_slice(&[0, 0, 1, 0, 1]);
    let a = answer(&q, &Mutex::default()).unwrap();
    assert_eq!(&a[..12], &[0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0]);
    assert_eq!(&a[a.len() - 4..], &[93, 184, 216, 34]);
}
