//! Shared by the example's integration tests: a service binary on a free port, killed on drop.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running service binary started with `--listen 127.0.0.1:0`.
pub struct Spawned {
    child: Child,
    /// The address it reported (`127.0.0.1:PORT`).
    pub addr: String,
    /// Every line it wrote to stderr so far (its log).
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Spawned {
    /// Starts `bin` and waits for its `<name> listening on ADDR` log line (stderr).
    /// `REDIS_URL` and `APP_ENV` of the caller are not passed on: tests set what they need.
    pub fn start(bin: &str, name: &str, env: &[(&str, &str)]) -> Self {
        Self::start_command(bin, name, &[], env)
    }

    /// [`Self::start`] of a command (`worker`, ...): `bin COMMAND... --listen 127.0.0.1:0`.
    pub fn start_command(bin: &str, name: &str, command: &[&str], env: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(bin);
        cmd.args(command)
            .args(["--listen", "127.0.0.1:0"])
            .env_remove("REDIS_URL")
            .env_remove("APP_ENV")
            .env_remove("LOG_FORMAT")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
            .env_remove("OTEL_SDK_DISABLED")
            .env("RUST_LOG", "info");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        let marker = format!("{name} listening on ");
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split(marker.as_str()).nth(1) {
                    let _ = tx.send(rest.split(':').take(2).collect::<Vec<_>>().join(":"));
                }
                if let Ok(mut l) = kept.lock() {
                    l.push(line);
                }
            }
        });
        let Ok(addr) = rx.recv_timeout(Duration::from_secs(30)) else {
            // Not left running after the test.
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name} did not report its address");
        };
        Spawned { child, addr, log }
    }

    /// The lines it logged so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The example's `catalog` with extra environment.
    pub fn catalog(env: &[(&str, &str)]) -> Self {
        Self::start(env!("CARGO_BIN_EXE_catalog"), "catalog", env)
    }

    /// The MCP URL of a group, version 1.
    pub fn url(&self, group: &str) -> String {
        format!("http://{}/mcp/{group}/v1", self.addr)
    }
}

impl Spawned {
    /// Kills it at once (SIGKILL: no graceful shutdown), as a crashed instance goes.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Spawned {
    /// Asks it to stop (SIGTERM: a graceful shutdown) and waits at most `within` for it to
    /// exit: whether it exited successfully.
    pub fn terminate(&mut self, within: Duration) -> bool {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A throwaway `redis-server` (the runtime's one harness).
#[allow(unused_imports)] // not every test file starts one
pub use mcp_runtime::test_util::Redis;

/// A handshake-era MCP session on the endpoint `url` (initialize, then initialized): its id.
pub async fn mcp_session(c: &reqwest::Client, url: &str) -> String {
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let r = c
        .post(url)
        .header("accept", "application/json")
        .json(&init)
        .send()
        .await
        .expect("initialize");
    assert_eq!(r.status(), 200);
    let sid = r
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session")
        .to_owned();
    let note = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = c
        .post(url)
        .header("accept", "application/json")
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&note)
        .send()
        .await
        .expect("initialized");
    assert_eq!(r.status(), 202);
    sid
}

/// `catalog tasks ARGS` against the Redis at `redis` (in `prod`, with `env` too): whether it
/// succeeded, and its standard output (its standard error when it failed: why).
#[allow(dead_code)] // not every test file runs it
pub fn tasks_cli(redis: &str, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_catalog"))
        .arg("tasks")
        .args(args)
        .env("REDIS_URL", redis)
        .env("APP_ENV", "prod")
        .envs(env.iter().copied())
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .output()
        .expect("catalog tasks");
    let ok = out.status.success();
    let said = if ok { &out.stdout } else { &out.stderr };
    (ok, String::from_utf8_lossy(said).into_owned())
}

/// An HTTP client whose connections come from `ip` (all of 127/8 is loopback: clients from
/// two addresses are two callers to a server that knows them by address).
pub fn client_from(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .local_address(ip.parse::<std::net::IpAddr>().ok())
        .timeout(Duration::from_secs(30))
        .build()
        .expect("a client")
}

/// A 2026-07-28 request to the MCP endpoint of `group` v1 at `base` (`http://host:port`), as a
/// client that declares elicitation and the tasks extension sends it (with the headers its
/// envelope asks for): the answer's JSON.
pub async fn modern(
    base: &str,
    group: &str,
    id: u64,
    method: &str,
    params: serde_json::Value,
) -> serde_json::Value {
    modern_from(&reqwest::Client::new(), base, group, id, method, params).await
}

/// [`modern`] through `client` (one bound to another loopback address is another caller).
pub async fn modern_from(
    client: &reqwest::Client,
    base: &str,
    group: &str,
    id: u64,
    method: &str,
    mut params: serde_json::Value,
) -> serde_json::Value {
    params["_meta"] = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
    });
    let name = params["name"]
        .as_str()
        .or_else(|| params["taskId"].as_str())
        .map(str::to_owned);
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut req = client
        .post(format!("{base}/mcp/{group}/v1"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .json(&body);
    if let Some(n) = name {
        req = req.header("mcp-name", n);
    }
    req.send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json")
}

/// Polls `tasks/get` of task `task` of `group` at `base` until its status is `status` (at most
/// `secs` seconds): the task.
pub async fn task_status(
    base: &str,
    group: &str,
    task: &str,
    status: &str,
    secs: u64,
) -> serde_json::Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let got = modern(
            base,
            group,
            90,
            "tasks/get",
            serde_json::json!({"taskId": task}),
        )
        .await;
        if got["result"]["status"] == status {
            return got["result"].clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "{status}: {got}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
