//! A throwaway `redis-server`, or a three-master Redis Cluster of them, for tests (this
//! crate's, with `cfg(test)`, and the repository's, through [`crate::test_util`]): one
//! harness, not a copy per test crate.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` on a free loopback port, or a Redis Cluster of three masters, without
/// persistence unless started [`Redis::durable`]; killed on drop.
///
/// [`Redis::start`] and [`Redis::durable`] start a cluster when the environment variable
/// `MCP_TEST_REDIS_CLUSTER` is `1`, so that one suite runs on both (`scripts/test.sh` runs the
/// Redis tests again so); [`Redis::cluster`] always does. A missing server or a failed bind
/// fails the test: the tests that need it are `#[ignore]`d, and `scripts/test.sh` installs it
/// and runs them. `MCP_TEST_REDIS` names another `redis-server` binary, `MCP_TEST_REDIS_CLI`
/// another `redis-cli` (which makes the cluster).
#[derive(Debug)]
pub struct Redis {
    bin: String,
    nodes: Vec<Node>,
    /// Whether the nodes make a cluster.
    cluster: bool,
    /// Where the nodes keep their append-only files and cluster configuration (removed on
    /// drop).
    dir: Option<std::path::PathBuf>,
    durable: bool,
    /// Whether the cluster was made (`redis-cli --cluster create`).
    made: bool,
}

#[derive(Debug)]
struct Node {
    port: u16,
    /// The cluster bus's port (a cluster's nodes talk on it).
    bus: u16,
    child: Option<Child>,
}

/// How many masters a test cluster has (the fewest `redis-cli --cluster create` accepts).
const MASTERS: usize = 3;

impl Redis {
    /// Starts one (a cluster when `MCP_TEST_REDIS_CLUSTER=1`), and waits until it serves.
    pub fn start() -> Self {
        Self::start_with(false, cluster_asked())
    }

    /// Starts one that keeps what it acknowledged as production should: the append-only file
    /// on (`appendfsync everysec`), in a directory of its own; a restart reads it back.
    pub fn durable() -> Self {
        Self::start_with(true, cluster_asked())
    }

    /// Starts a Redis Cluster of three masters (durable as [`Redis::durable`] is), and waits
    /// until every slot is served.
    pub fn cluster() -> Self {
        Self::start_with(true, true)
    }

    fn start_with(durable: bool, cluster: bool) -> Self {
        let bin = std::env::var("MCP_TEST_REDIS").unwrap_or_else(|_| "redis-server".into());
        let dir = (durable || cluster).then(|| {
            let dir = std::env::temp_dir().join(format!(
                "mcp-test-redis-{}-{}",
                std::process::id(),
                crate::ids::random_id()
            ));
            std::fs::create_dir_all(&dir).expect("a directory for Redis's files");
            dir
        });
        let mut r = Redis {
            bin,
            nodes: Vec::new(),
            cluster,
            dir,
            durable,
            made: false,
        };
        // A port found free may be taken by another process before the server binds it:
        // fresh ports, up to three times.
        for attempt in 1..=3 {
            r.nodes = (0..if cluster { MASTERS } else { 1 })
                .map(|_| Node {
                    port: free_port(),
                    bus: free_port(),
                    child: None,
                })
                .collect();
            match r.launch() {
                Ok(()) => break,
                Err(e) if attempt < 3 => {
                    eprintln!("redis-server did not start ({e}); again on other ports");
                    r.stop();
                }
                Err(e) => panic!("redis-server did not start: {e}"),
            }
        }
        if cluster {
            r.create_cluster();
            r.made = true;
        }
        r
    }

    /// Starts it again on the same ports (after [`Self::stop`]): empty, or, when durable, with
    /// what its append-only files kept; a cluster keeps its slots (each node's configuration
    /// file).
    pub fn restart(&mut self) {
        if let Err(e) = self.launch() {
            panic!("redis-server did not start again: {e}");
        }
        // A cluster made before finds its slots again (each node's configuration file).
        if self.made {
            self.wait_for_slots();
        }
    }

    /// Starts every node and waits until each accepts connections; what went wrong (with the
    /// end of the node's log, when it has a directory) otherwise.
    fn launch(&mut self) -> Result<(), String> {
        for i in 0..self.nodes.len() {
            let node = &self.nodes[i];
            let mut cmd = Command::new(&self.bin);
            cmd.args(["--port", &node.port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", ""]);
            if self.durable {
                cmd.args(["--appendonly", "yes", "--appendfsync", "everysec"])
                    .args(["--appendfilename", &format!("appendonly-{}.aof", node.port)])
                    .args(["--appenddirname", &format!("aof-{}", node.port)]);
            } else {
                cmd.args(["--appendonly", "no"]);
            }
            if let Some(dir) = &self.dir {
                cmd.arg("--dir").arg(dir);
                cmd.arg("--logfile")
                    .arg(dir.join(format!("redis-{}.log", node.port)));
            }
            if self.cluster {
                cmd.args(["--cluster-enabled", "yes"])
                    .args(["--cluster-port", &node.bus.to_string()])
                    .args([
                        "--cluster-config-file",
                        &format!("nodes-{}.conf", node.port),
                    ])
                    .args(["--cluster-node-timeout", "2000"]);
            }
            let child = cmd
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| {
                    panic!(
                        "{} cannot run ({e}): scripts/install-test-clients.sh installs it",
                        self.bin
                    )
                });
            self.nodes[i].child = Some(child);
        }
        for i in 0..self.nodes.len() {
            let port = self.nodes[i].port;
            let end = Instant::now() + Duration::from_secs(10);
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                let exited = self.nodes[i]
                    .child
                    .as_mut()
                    .and_then(|c| c.try_wait().ok().flatten());
                if exited.is_some() || Instant::now() > end {
                    let log = self.dir.as_ref().and_then(|d| {
                        std::fs::read_to_string(d.join(format!("redis-{port}.log"))).ok()
                    });
                    let tail: Vec<&str> = log.iter().flat_map(|l| l.lines()).collect();
                    return Err(format!(
                        "port {port}, {}; its log ends: {}",
                        exited.map_or("not listening after 10 s".into(), |s| s.to_string()),
                        tail[tail.len().saturating_sub(5)..].join(" | ")
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            // The port may have been taken by another test's server between `free_port` and
            // the bind (ours then exits, but the connection above reached the other one):
            // the server answering must be the process started here.
            let pid = self.nodes[i].child.as_ref().map_or(0, Child::id);
            let info = ask(port, b"*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n");
            if !info
                .lines()
                .any(|l| l.trim_end() == format!("process_id:{pid}"))
            {
                return Err(format!(
                    "port {port} is answered by another process than redis-server {pid}"
                ));
            }
        }
        Ok(())
    }

    /// `redis-cli --cluster create` of the nodes, as masters without replicas.
    fn create_cluster(&self) {
        let cli = std::env::var("MCP_TEST_REDIS_CLI").unwrap_or_else(|_| "redis-cli".into());
        let addrs: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let out = Command::new(&cli)
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .unwrap_or_else(|e| panic!("{cli} cannot run ({e}): it comes with redis-server"));
        assert!(
            out.status.success(),
            "redis-cli --cluster create: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.wait_for_slots();
    }

    /// Waits until every node says the cluster is up (every slot served).
    fn wait_for_slots(&self) {
        for node in &self.nodes {
            wait_until(
                Duration::from_secs(20),
                "the Redis Cluster did not come up",
                || cluster_ok(node.port),
            );
        }
    }

    /// Stops it (a restart brings it back).
    pub fn stop(&mut self) {
        for node in &mut self.nodes {
            if let Some(mut c) = node.child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }

    /// Hangs it (SIGSTOP, every node): connections stay open, nothing is answered, as a Redis
    /// that is overloaded or on the wrong side of a partition.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused one go on (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, which: &str) {
        for node in &self.nodes {
            let pid = node.child.as_ref().expect("a running redis-server").id();
            let sent = Command::new("kill")
                .args([which, &pid.to_string()])
                .status();
            assert!(sent.is_ok_and(|s| s.success()), "kill {which} {pid}");
        }
    }

    /// How many keys each node holds (`DBSIZE`), in the order of their ports: where a
    /// cluster put what it was given.
    pub fn keys_per_node(&self) -> Vec<u64> {
        self.nodes
            .iter()
            .map(|n| {
                let reply = ask(n.port, b"*1\r\n$6\r\nDBSIZE\r\n");
                reply
                    .strip_prefix(':')
                    .and_then(|r| r.trim_end().parse().ok())
                    .unwrap_or_else(|| panic!("DBSIZE on {}: {reply:?}", n.port))
            })
            .collect()
    }

    /// Its URL: `redis://127.0.0.1:PORT`, or a cluster's `redis+cluster://` with every node.
    pub fn url(&self) -> String {
        if self.cluster {
            let seeds: Vec<String> = self
                .nodes
                .iter()
                .map(|n| format!("127.0.0.1:{}", n.port))
                .collect();
            format!("redis+cluster://{}", seeds.join(","))
        } else {
            format!("redis://127.0.0.1:{}", self.nodes[0].port)
        }
    }

    /// A store on it.
    #[cfg(feature = "redis")]
    pub fn store(&self) -> crate::core::RedisStore {
        crate::core::RedisStore::connect(&self.url()).expect("a Redis URL")
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Whether `MCP_TEST_REDIS_CLUSTER=1` asks for clusters.
fn cluster_asked() -> bool {
    std::env::var("MCP_TEST_REDIS_CLUSTER").is_ok_and(|v| v == "1")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Whether the node on `port` says `cluster_state:ok`.
fn cluster_ok(port: u16) -> bool {
    ask(port, b"*2\r\n$7\r\nCLUSTER\r\n$4\r\nINFO\r\n").contains("cluster_state:ok")
}

/// The reply of the node on `port` to `command` (RESP by hand: no client needed here), as
/// much of it as comes within a second of quiet; empty when the node is not there.
fn ask(port: u16, command: &[u8]) -> String {
    use std::io::{Read as _, Write as _};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    if s.write_all(command).is_err() {
        return String::new();
    }
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        got.extend_from_slice(&buf[..n]);
        if n == 0 || complete(&got) {
            break;
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Whether `reply` is one whole RESP integer or bulk string.
fn complete(reply: &[u8]) -> bool {
    let Some(end) = reply.windows(2).position(|w| w == b"\r\n") else {
        return false;
    };
    match reply.first() {
        Some(b'$') => std::str::from_utf8(&reply[1..end])
            .ok()
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| reply.len() >= end + 2 + n + 2),
        _ => true,
    }
}

fn wait_until(within: Duration, what: &str, mut ok: impl FnMut() -> bool) {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The race that made a cluster of someone else's server: a port found free is bound by
    /// another test's server first. Launching on it must fail (so that fresh ports are
    /// tried), not connect to the other server and call it ours.
    #[test]
    #[ignore = "needs redis-server (scripts/test.sh installs it and runs the ignored tests)"]
    fn a_port_another_server_took_is_not_taken_for_ours() {
        let other = Redis::start_with(false, false);
        let taken = other.nodes[0].port;
        let mut ours = Redis {
            bin: other.bin.clone(),
            nodes: vec![Node {
                port: taken,
                bus: free_port(),
                child: None,
            }],
            cluster: false,
            dir: None,
            durable: false,
            made: false,
        };
        let err = ours.launch().expect_err("the port is another server's");
        assert!(err.contains(&format!("port {taken}")), "{err}");
    }
}
