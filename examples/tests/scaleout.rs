//! Scale-out: three `catalog` instances on one Redis behind HAProxy (Debian's `haproxy`,
//! started here on loopback ports; it adds `X-Forwarded-For`). Under a mixed load (JSON-RPC calls and batches, cached
//! calls, 2026-07-28 `tools/call`, handshake-era calls on Redis-held sessions), one instance is
//! killed mid-run: only requests in flight on it may fail, every request sent after the load
//! balancer has noticed is answered, sessions go on through the others, cache entries and
//! locks hold across instances, and the task it ran is run again and completed by another.
//! Redis runs with its append-only file on, as production should.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

mod common;
use common::{Redis, Spawned};

/// HAProxy on a free loopback port in front of `backends`; killed on drop.
struct HaProxy {
    child: Child,
    port: u16,
    _dir: TempDir,
}

/// A directory removed on drop.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl HaProxy {
    /// Starts one in front of `backends`; a missing `haproxy` or a failed bind fails the test.
    fn start(backends: &[&str]) -> Self {
        let bin = std::env::var("MCP_TEST_HAPROXY").unwrap_or_else(|_| {
            ["/usr/sbin/haproxy", "haproxy"]
                .into_iter()
                .find(|b| Command::new(b).arg("-v").output().is_ok())
                .unwrap_or("haproxy")
                .to_owned()
        });
        if let Err(e) = Command::new(&bin).arg("-v").output() {
            panic!("{bin} cannot run ({e}): scripts/install-test-clients.sh installs it");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let dir = std::env::temp_dir().join(format!("mcp-scaleout-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let servers: String = backends
            .iter()
            .enumerate()
            .map(|(i, b)| format!("    server s{i} {b} check inter 100ms fall 1 rise 2\n"))
            .collect();
        // `retry-on conn-failure empty-response` with `redispatch`: a request whose instance
        // is gone before answering anything is sent to another one.
        let config = format!(
            "global\n    maxconn 512\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 15s\n    \
             timeout server 15s\n    retries 3\n    option redispatch 1\n    \
             retry-on conn-failure empty-response\n\
             frontend fe\n    bind 127.0.0.1:{port}\n    option forwardfor\n    default_backend be\n\
             backend be\n    balance roundrobin\n    option httpchk GET /readyz\n    \
             http-check expect status 200\n{servers}"
        );
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, config).expect("write haproxy.cfg");
        let child = Command::new(&bin)
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start haproxy");
        // Owned at once, so it is killed on every path out of here.
        let lb = HaProxy {
            child,
            port,
            _dir: TempDir(dir),
        };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return lb;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("haproxy did not start");
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for HaProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client")
}

/// A JSON-RPC call of the `mcp` group at `base`.
async fn rpc(c: &reqwest::Client, base: &str, body: &Value) -> Result<Value, String> {
    let r = c
        .post(format!("{base}/rpc/mcp/v1"))
        .json(body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if r.status() != 200 {
        return Err(format!("HTTP {}", r.status()));
    }
    r.json().await.map_err(|e| e.to_string())
}

fn call(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

/// One request of the mixed load, by number; `Ok` when it was answered as it should be.
async fn one(c: &reqwest::Client, base: &str, session: &str, n: usize) -> Result<(), String> {
    let ok = |v: &Value, what: &str| {
        if v.get("error").is_some() || v.is_null() {
            Err(format!("{what}: {v}"))
        } else {
            Ok(())
        }
    };
    match n % 5 {
        0 => ok(
            &rpc(c, base, &call("Catalog.ping", json!({"who": "load"}))).await?["result"],
            "ping",
        ),
        1 => ok(
            &rpc(
                c,
                base,
                &call("Stats.hits", json!({"key": format!("k{}", n % 7)})),
            )
            .await?["result"],
            "cached",
        ),
        2 => {
            let batch = json!([
                call("Catalog.ping", json!({})),
                call("Stats.hits", json!({}))
            ]);
            let v = rpc(c, base, &batch).await?;
            match v.as_array() {
                Some(items)
                    if items.len() == 2 && items.iter().all(|i| i.get("result").is_some()) =>
                {
                    Ok(())
                }
                _ => Err(format!("batch: {v}")),
            }
        }
        3 => {
            let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
                "name": "Catalog.ping", "arguments": {"who": "modern"}, "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {}}}});
            let r = c
                .post(format!("{base}/mcp/mcp/v1"))
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "Catalog.ping")
                .json(&body)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let v: Value = r.json().await.map_err(|e| e.to_string())?;
            ok(&v["result"]["structuredContent"], "modern tools/call")
        }
        _ => {
            // A handshake-era call on this worker's session, held in Redis.
            let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
                "name": "Catalog.ping", "arguments": {"who": "session"}}});
            let r = c
                .post(format!("{base}/mcp/mcp/v1"))
                .header("accept", "application/json")
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25")
                .json(&body)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if r.status() != 200 {
                return Err(format!("session call: HTTP {}", r.status()));
            }
            let v: Value = r.json().await.map_err(|e| e.to_string())?;
            ok(&v["result"]["structuredContent"], "session tools/call")
        }
    }
}

/// Three `catalog` instances (production, with `env` besides) on one fresh, durable Redis behind
/// HAProxy, once its health checks have seen them up.
async fn three_behind_haproxy(env: &[(&str, &str)]) -> (Redis, Vec<Spawned>, HaProxy) {
    // As production runs it: what Redis acknowledged is on disk (AOF, every second).
    three_on(Redis::durable(), env).await
}

/// Three `catalog` instances on `redis` behind HAProxy (see [`three_behind_haproxy`]).
async fn three_on(redis: Redis, env: &[(&str, &str)]) -> (Redis, Vec<Spawned>, HaProxy) {
    let url = redis.url();
    let mut all = vec![("REDIS_URL", url.as_str()), ("APP_ENV", "prod")];
    all.extend_from_slice(env);
    let instances: Vec<Spawned> = (0..3).map(|_| Spawned::catalog(&all)).collect();
    let backends: Vec<&str> = instances.iter().map(|i| i.addr.as_str()).collect();
    let lb = HaProxy::start(&backends);
    // Health checks every 100 ms, two to be up.
    tokio::time::sleep(Duration::from_millis(500)).await;
    (redis, instances, lb)
}

/// `n` workers sending the mixed load through `base`, each on its own handshake session,
/// until `stop`: each gives the failures before and after `mark` was set.
async fn load(
    c: &reqwest::Client,
    base: &str,
    n: usize,
    mark: &Arc<AtomicBool>,
    stop: &Arc<AtomicBool>,
    sent: &Arc<AtomicUsize>,
) -> Vec<tokio::task::JoinHandle<(Vec<String>, Vec<String>)>> {
    let mut workers = Vec::new();
    for w in 0..n {
        let (c, base, mark, stop, sent) = (
            c.clone(),
            base.to_owned(),
            mark.clone(),
            stop.clone(),
            sent.clone(),
        );
        let sid = common::mcp_session(&c, &format!("{base}/mcp/mcp/v1")).await;
        workers.push(tokio::spawn(async move {
            let (mut failed_before, mut failed_after) = (Vec::new(), Vec::new());
            let mut i = w;
            while !stop.load(Ordering::SeqCst) {
                let after = mark.load(Ordering::SeqCst);
                let result = one(&c, &base, &sid, i).await;
                sent.fetch_add(1, Ordering::SeqCst);
                if let Err(e) = result {
                    if after {
                        failed_after.push(e);
                    } else {
                        failed_before.push(e);
                    }
                }
                i += n;
            }
            (failed_before, failed_after)
        }));
    }
    workers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs haproxy and redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn three_instances_behind_haproxy_lose_only_what_was_in_flight_on_a_killed_one() {
    lose_only_what_was_in_flight(Redis::durable()).await;
}

/// The same on a Redis Cluster of three masters (each with its append-only file): the cache,
/// locks, sessions, tasks and the work queue spread over the masters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs haproxy and redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn three_instances_on_a_redis_cluster_lose_only_what_was_in_flight_on_a_killed_one() {
    let redis = lose_only_what_was_in_flight(Redis::cluster()).await;
    // What the instances kept went to every master, not all to one.
    let keys = redis.keys_per_node();
    assert!(keys.iter().all(|&n| n > 0), "keys per master: {keys:?}");
}

/// Runs the load and the kill on three instances on `redis`; gives `redis` back, still up.
async fn lose_only_what_was_in_flight(redis: Redis) -> Redis {
    let (redis, mut instances, lb) = three_on(redis, &[("CATALOG_STATEFUL", "mcp")]).await;
    let addrs: Vec<String> = instances.iter().map(|i| i.addr.clone()).collect();
    let (base, c) = (lb.base(), http());

    // Cache entries hold across instances: two other keys first make instance 0's counter
    // differ from a fresh one's, so a miss elsewhere would show.
    let direct = |i: usize| format!("http://{}", addrs[i]);
    for key in ["w1", "w2"] {
        rpc(&c, &direct(0), &call("Stats.hits", json!({"key": key})))
            .await
            .expect("warm-up");
    }
    let first = rpc(
        &c,
        &direct(0),
        &call("Stats.hits", json!({"key": "shared"})),
    )
    .await
    .expect("cached call")["result"]
        .clone();
    assert_eq!(first["runs"], 3, "{first}");
    for i in 1..3 {
        let other = rpc(
            &c,
            &direct(i),
            &call("Stats.hits", json!({"key": "shared"})),
        )
        .await
        .expect("cached call");
        assert_eq!(
            other["result"], first,
            "instance {i} serves instance 0's entry"
        );
    }
    // Locks hold across instances: through the balancer, two payments of one order land on
    // two instances; the second is refused while the first holds the lock.
    let pay = call("Orders.pay", json!({"order_id": 9, "hold_ms": 800}));
    let hold = rpc(&c, &base, &pay);
    let contend = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        rpc(&c, &base, &call("Orders.pay", json!({"order_id": 9}))).await
    };
    let (held, refused) = tokio::join!(hold, contend);
    assert_eq!(held.expect("paid")["result"]["paid"], true);
    assert_eq!(
        refused.expect("answered")["error"]["message"],
        "Method 'Orders.pay' is locked."
    );

    // The mixed load: 8 workers, each with its own handshake session.
    const WORKERS: usize = 8;
    let killed = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicUsize::new(0));
    let workers = load(&c, &base, WORKERS, &killed, &stop, &sent).await;
    // A task the instance about to be killed runs (two seconds of work).
    let created = common::modern(
        &direct(1),
        "mcp",
        1,
        "tools/call",
        json!({"name": "Jobs.run", "arguments": {"steps": 20, "step_ms": 100}}),
    )
    .await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let before_kill = sent.load(Ordering::SeqCst);
    instances[1].kill();
    tokio::time::sleep(Duration::from_millis(500)).await;
    killed.store(true, Ordering::SeqCst);
    let at_notice = sent.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::SeqCst);
    let mut lost = Vec::new();
    let mut after = Vec::new();
    for w in workers {
        let (b, a) = w.await.expect("worker");
        lost.extend(b);
        after.extend(a);
    }
    let total = sent.load(Ordering::SeqCst);
    eprintln!(
        "scale-out: {total} requests ({before_kill} before the kill, {} after the balancer \
         noticed), {} failed around the kill",
        total - at_notice,
        lost.len()
    );
    assert!(
        before_kill > 50 && total - at_notice > 50,
        "load ran: {before_kill} before the kill, {} after",
        total - at_notice
    );
    // Only what was in flight on the killed instance may fail: at most one request per
    // worker.
    assert!(lost.len() <= WORKERS, "{} lost: {lost:?}", lost.len());
    assert!(after.is_empty(), "failed after the kill: {after:?}");
    // The killed instance's task is run again by another and completes, polled through the
    // balancer.
    let done = common::task_status(&base, "mcp", &task, "completed", 60).await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"result": {"steps": 20, "attempt": 2}}),
        "{done}"
    );
    drop((lb, instances));
    redis
}

/// An instance stopped with SIGTERM behind HAProxy loses nothing: its `/readyz` fails at
/// once, the balancer stops sending to it while it still serves (the unready delay), then it
/// drains what it has and exits; the load through the balancer sees no failure at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs haproxy and redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn an_instance_stopped_with_sigterm_behind_haproxy_fails_no_request() {
    let (redis, mut instances, lb) = three_behind_haproxy(&[
        ("CATALOG_STATEFUL", "mcp"),
        // Health checks every 100 ms, one failure marks an instance down.
        ("CATALOG_UNREADY_DELAY_MS", "600"),
    ])
    .await;
    let addrs: Vec<String> = instances.iter().map(|i| i.addr.clone()).collect();
    let (base, c) = (lb.base(), http());
    let ready = |i: usize| {
        let (c, url) = (c.clone(), format!("http://{}/readyz", addrs[i]));
        async move { c.get(url).send().await.map(|r| r.status().as_u16()) }
    };
    assert_eq!(ready(1).await.ok(), Some(200));

    const WORKERS: usize = 8;
    let (stopping, stop) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let sent = Arc::new(AtomicUsize::new(0));
    let workers = load(&c, &base, WORKERS, &stopping, &stop, &sent).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let before = sent.load(Ordering::SeqCst);
    stopping.store(true, Ordering::SeqCst);
    let stopper = std::thread::spawn(move || {
        let exited = instances[1].terminate(Duration::from_secs(15));
        (exited, instances)
    });
    // Unready while it still serves.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let status = ready(1).await;
    assert_eq!(status.as_ref().ok(), Some(&503), "{status:?}");
    let (exited, instances) = tokio::task::spawn_blocking(move || stopper.join())
        .await
        .expect("joined")
        .expect("the stopping thread");
    assert!(exited, "the instance drained and exited successfully");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    stop.store(true, Ordering::SeqCst);
    let mut failed = Vec::new();
    for w in workers {
        let (b, a) = w.await.expect("worker");
        failed.extend(b.into_iter().chain(a));
    }
    let total = sent.load(Ordering::SeqCst);
    eprintln!(
        "sigterm: {total} requests ({before} before the signal), {} failed",
        failed.len()
    );
    assert!(
        before > 50 && total - before > 50,
        "load ran: {before} before, {total} in all"
    );
    assert!(failed.is_empty(), "failed: {failed:?}");
    drop((instances, lb, redis));
}

/// A 2026-07-28 `subscriptions/listen` through `base`: its response (the stream, held open).
async fn listen(c: &reqwest::Client, base: &str, id: usize) -> reqwest::Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": true}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "fair", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    c.post(format!("{base}/mcp/mcp/v1"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .json(&body)
        .send()
        .await
        .expect("listen")
}

/// Three instances behind HAProxy on one Redis, trusting HAProxy's `X-Forwarded-For`: a client
/// holding its share of streams, spread over the three, is refused a seventeenth on every
/// instance, and one running its share of tasks gets no eleventh task, while another client
/// is served; a rate limit is one limit across the instances, per forwarded address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs haproxy and redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn shares_and_rate_limits_hold_across_instances_behind_haproxy() {
    // Named, so that they live to the end of the test.
    let (_redis, _apps, lb) =
        three_behind_haproxy(&[("CATALOG_TRUSTED_PROXIES", "127.0.0.1")]).await;
    let base = lb.base();

    // The flooder (127.0.0.2) opens its share of streams (16), spread round robin.
    let flood = common::client_from("127.0.0.2");
    let mut held = Vec::new();
    for id in 0..16 {
        let r = listen(&flood, &base, id).await;
        assert_eq!(r.status(), 200, "stream {id}");
        held.push(r);
    }
    // Once the instances have exchanged their counts (every second), none opens a 17th for
    // it, whichever HAProxy picks.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    for id in 16..22 {
        assert_eq!(listen(&flood, &base, id).await.status(), 503, "stream {id}");
    }
    // Another client is served, on every instance.
    let other = common::client_from("127.0.0.3");
    for id in 0..3 {
        assert_eq!(listen(&other, &base, id).await.status(), 200);
    }

    // Tasks: ten running tasks of the flooder, spread over the three; once the instances
    // have exchanged their counts its eleventh is no task on any of them (it runs as a plain
    // call), while the other client still gets one.
    let job = |id: usize| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "Jobs.run", "arguments": {"steps": 2, "step_ms": 3000}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "fair", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities":
                    {"extensions": {"io.modelcontextprotocol/tasks": {}}}}}})
    };
    let start = |c: reqwest::Client, id: usize| {
        let (base, body) = (base.clone(), job(id));
        async move {
            let v: Value = c
                .post(format!("{base}/mcp/mcp/v1"))
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "Jobs.run")
                .timeout(Duration::from_secs(20))
                .json(&body)
                .send()
                .await
                .expect("tools/call")
                .json()
                .await
                .expect("JSON");
            v["result"]["resultType"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        }
    };
    for id in 0..10 {
        assert_eq!(start(flood.clone(), id).await, "task", "task {id}");
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(start(other.clone(), 50).await, "task");
    assert_eq!(start(flood.clone(), 10).await, "complete");

    // `Mail.send`, 60 a minute and 10 at once per caller: ten through HAProxy (spread over
    // the three instances), then refused everywhere; another address has its own ten.
    let mail = |id: usize| {
        call(
            "Mail.send",
            json!({"email": "ann@example.com", "subject": "Hi", "text": "0123456789"}),
        )
        .as_object()
        .map(|o| {
            let mut o = o.clone();
            o.insert("id".into(), id.into());
            Value::Object(o)
        })
        .expect("an object")
    };
    let send = |c: reqwest::Client, id: usize| {
        let (base, body) = (base.clone(), mail(id));
        async move {
            c.post(format!("{base}/rpc/mcp/v1"))
                .json(&body)
                .send()
                .await
                .expect("POST")
                .status()
                .as_u16()
        }
    };
    for id in 0..10 {
        assert_eq!(send(flood.clone(), id).await, 200, "mail {id}");
    }
    for id in 10..13 {
        assert_eq!(send(flood.clone(), id).await, 429, "mail {id}");
    }
    assert_eq!(send(other.clone(), 0).await, 200);
}
