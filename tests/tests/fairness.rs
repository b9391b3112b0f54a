//! Fair share on the wire: one client fills what it can, and another is still served.
//!
//! Callers are told apart by their address: the flooder's requests come from 127.0.0.1, the
//! other client's from 127.0.0.2 (all of 127/8 is loopback), so the example as it ships
//! computes two callers without any login. Behind a trusted proxy the forwarded address
//! counts instead, and a forged header from anyone else does not.

use std::time::Duration;

use mcp_runtime::Limits;
use serde_json::{Value, json};

const MODERN: &str = "2026-07-28";

/// A 2026-07-28 request from a client that declares the tasks extension.
fn modern(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "fairness", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// POSTs a modern request; the response (its body unread).
async fn send(
    c: &reqwest::Client,
    url: &str,
    req: &Value,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    let method = req["method"].as_str().unwrap();
    let mut b = c
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", method);
    if let Some(n) = req["params"]["name"].as_str() {
        b = b.header("mcp-name", n);
    }
    for (k, v) in extra {
        b = b.header(*k, *v);
    }
    b.body(req.to_string()).send().await.unwrap()
}

fn listen(id: u64) -> Value {
    modern(
        id,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    )
}

#[tokio::test]
async fn a_client_holding_its_share_of_streams_leaves_the_others_theirs() {
    // A ceiling of 20 streams; the default share is 16 a caller.
    let mut limits = Limits::default();
    limits.sse_streams = 20;
    assert_eq!(limits.sse_streams_per_caller, 16);
    let server = tests::example_prod().limits(limits).build().unwrap();
    let url = format!("{}/mcp/mcp/v1", tests::serve_url(server).await);
    let flood = tests::client_from("127.0.0.1");
    let mut held = Vec::new();
    let mut refused = 0;
    for i in 0..20 {
        let r = send(&flood, &url, &listen(i), &[]).await;
        match r.status().as_u16() {
            200 => held.push(r),
            503 => {
                assert_eq!(
                    r.json::<Value>().await.unwrap()["error"]["code"],
                    -32603,
                    "a clear busy error"
                );
                refused += 1;
            }
            s => panic!("unexpected {s}"),
        }
    }
    assert_eq!(
        (held.len(), refused),
        (16, 4),
        "the flooder holds its share only"
    );
    // Another caller is served, stream and call alike.
    let other = tests::client_from("127.0.0.2");
    let r = send(&other, &url, &listen(100), &[]).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let ping = modern(
        101,
        "tools/call",
        json!({"name": "Catalog.ping", "arguments": {}}),
    );
    let r = send(&other, &url, &ping, &[]).await;
    assert_eq!(r.status(), 200);
    // A stream the flooder lets go of is its own again.
    held.pop();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(send(&flood, &url, &listen(200), &[]).await.status(), 200);
}

#[tokio::test]
async fn a_client_holding_its_share_of_tasks_leaves_the_others_theirs() {
    // 12 running tasks in all; a caller runs at most 10.
    let mut limits = Limits::default();
    limits.tasks_running = 12;
    assert_eq!(limits.tasks_running_per_caller, 10);
    let server = tests::example_prod().limits(limits).build().unwrap();
    let url = format!("{}/mcp/mcp/v1", tests::serve_url(server).await);
    let job = |id| {
        modern(
            id,
            "tools/call",
            json!({"name": "Jobs.run", "arguments": {"steps": 2, "step_ms": 2000}}),
        )
    };
    let flood = tests::client_from("127.0.0.1");
    let mut tasks = 0;
    for i in 0..10 {
        let r: Value = send(&flood, &url, &job(i), &[]).await.json().await.unwrap();
        assert_eq!(r["result"]["resultType"], "task", "{r}");
        tasks += 1;
    }
    // Its eleventh is no task (it runs as a plain call, holding its own request).
    let eleventh = {
        let (flood, url, req) = (flood.clone(), url.clone(), job(10));
        tokio::spawn(async move {
            let r: Value = send(&flood, &url, &req, &[]).await.json().await.unwrap();
            r
        })
    };
    // The other caller still gets a task: two of the twelve were left to others.
    let other = tests::client_from("127.0.0.2");
    let r: Value = send(&other, &url, &job(50), &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    let r = eleventh.await.unwrap();
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(tasks, 10);
}

#[tokio::test]
async fn forwarded_addresses_count_only_from_a_trusted_proxy() {
    let mut limits = Limits::default();
    limits.sse_streams = 4;
    limits.sse_streams_per_caller = 1;
    limits.trusted_proxies = vec!["127.0.0.3/32".parse().unwrap()];
    let server = tests::example_prod().limits(limits).build().unwrap();
    let url = format!("{}/mcp/mcp/v1", tests::serve_url(server).await);
    // An untrusted peer cannot pass for many clients by writing the header.
    let direct = tests::client_from("127.0.0.1");
    let _held = send(&direct, &url, &listen(1), &[("x-forwarded-for", "1.1.1.1")]).await;
    assert_eq!(_held.status(), 200);
    let forged = send(&direct, &url, &listen(2), &[("x-forwarded-for", "2.2.2.2")]).await;
    assert_eq!(
        forged.status(),
        503,
        "the same caller, whatever it forwards"
    );
    // Through the trusted proxy, two forwarded clients are two callers.
    let proxy = tests::client_from("127.0.0.3");
    let a = send(
        &proxy,
        &url,
        &listen(3),
        &[("x-forwarded-for", "198.51.100.1")],
    )
    .await;
    let b = send(
        &proxy,
        &url,
        &listen(4),
        &[("forwarded", "for=198.51.100.2")],
    )
    .await;
    assert_eq!((a.status().as_u16(), b.status().as_u16()), (200, 200));
    let again = send(
        &proxy,
        &url,
        &listen(5),
        &[("x-forwarded-for", "198.51.100.1")],
    )
    .await;
    assert_eq!(again.status(), 503, "198.51.100.1 holds its one stream");
}

/// `initialize` on the stateful `conformance` endpoint: the session id.
async fn open_session(c: &reqwest::Client, url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "fairness", "version": "1"}}});
    let r = c
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.headers()["mcp-session-id"].to_str().unwrap().to_owned()
}

/// A `ping` on a session: the HTTP status.
async fn ping_on(c: &reqwest::Client, url: &str, sid: &str) -> u16 {
    c.post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", sid)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_flood_of_initialize_ends_only_the_flooders_sessions() {
    // 6 sessions in all, 4 a caller.
    let mut limits = Limits::default();
    limits.sessions = 6;
    limits.sessions_per_caller = 4;
    let server = tests::example_prod().limits(limits).build().unwrap();
    let url = format!("{}/mcp/conformance/v1", tests::serve_url(server).await);
    let user = tests::client_from("127.0.0.2");
    let mine = open_session(&user, &url).await;
    assert_eq!(ping_on(&user, &url, &mine).await, 200);
    let flood = tests::client_from("127.0.0.1");
    let mut theirs = Vec::new();
    for _ in 0..50 {
        theirs.push(open_session(&flood, &url).await);
    }
    // Every initialize was answered; the flooder keeps its newest four, the user its one.
    assert_eq!(ping_on(&user, &url, &mine).await, 200);
    assert_eq!(ping_on(&flood, &url, &theirs[0]).await, 404);
    for sid in &theirs[46..] {
        assert_eq!(ping_on(&flood, &url, sid).await, 200);
    }
    // Others still get sessions at the ceiling, from the flooder's share.
    for ip in ["127.0.0.3", "127.0.0.4"] {
        let c = tests::client_from(ip);
        let sid = open_session(&c, &url).await;
        assert_eq!(ping_on(&c, &url, &sid).await, 200);
    }
    assert_eq!(ping_on(&user, &url, &mine).await, 200);
}

/// A TCP relay to `upstream` that, like a proxy holding its backend connection, lets the
/// upstream side go only once it writes to a client that has left.
async fn lazy_relay(upstream: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let mut server = tokio::net::TcpStream::connect(&upstream).await.unwrap();
            tokio::spawn(async move {
                let (mut cr, mut cw) = client.split();
                let (mut sr, mut sw) = server.split();
                let mut up = [0u8; 8192];
                let mut down = [0u8; 8192];
                let mut client_open = true;
                loop {
                    tokio::select! {
                        n = cr.read(&mut up), if client_open => match n {
                            // The client left: keep the upstream connection, as such a proxy does.
                            Ok(0) | Err(_) => client_open = false,
                            Ok(n) => { if sw.write_all(&up[..n]).await.is_err() { return; } }
                        },
                        n = sr.read(&mut down) => match n {
                            Ok(0) | Err(_) => return,
                            Ok(n) => {
                                // A write to a client that left ends both sides.
                                if !client_open || cw.write_all(&down[..n]).await.is_err() {
                                    return;
                                }
                            }
                        },
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_stream_whose_client_left_is_given_back_at_its_next_keep_alive() {
    // One stream per caller; the stream writes a comment after 200 ms of silence.
    let mut limits = Limits::default();
    limits.sse_streams_per_caller = 1;
    limits.sse_keep_alive = Duration::from_millis(200);
    let server = tests::example_prod().limits(limits).build().unwrap();
    let base = tests::serve_url(server).await;
    let url = format!(
        "{}/mcp/mcp/v1",
        lazy_relay(base.trim_start_matches("http://").to_owned()).await
    );
    let c = tests::client_from("127.0.0.1");
    let first = send(&c, &url, &listen(1), &[]).await;
    assert_eq!(first.status(), 200);
    assert_eq!(send(&c, &url, &listen(2), &[]).await.status(), 503);
    // The client leaves; the relay keeps the server's connection until the server writes.
    drop(first);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(send(&c, &url, &listen(3), &[]).await.status(), 200);
}
