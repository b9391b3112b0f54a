//! The test kit shared by this crate's test files: what more than one of them needs (servers
//! on loopback ports, HTTP clients and requests, SSE bodies, an endpoint over stdio, paths of
//! the build).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_runtime::{Environment, Server, ServerBuilder};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// This build's target directory: `CARGO_TARGET_DIR`, or the one holding the running test
/// binary (`<target>/debug/deps/<binary>`).
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .expect("<target>/debug/deps/<binary>")
        .to_path_buf()
}

/// The workspace's root directory.
pub fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is in the workspace")
}

/// The cargo running the tests (`CARGO`), else the one on the path.
pub fn cargo() -> std::process::Command {
    std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// The example service's builder, in production (no debug data in errors).
pub fn example_prod() -> ServerBuilder {
    examples::builder().env(Environment::PROD)
}

/// Serves `server` on a free loopback port of this test's runtime (it stops with the runtime).
pub async fn serve(server: Server) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("the bound address");
    tokio::spawn(async move {
        server
            .serve_listener(listener, std::future::pending())
            .await
    });
    addr
}

/// An HTTP client whose connections come from `ip` (any of 127/8 is loopback: two clients
/// from two addresses are two callers to a server that knows them by address).
pub fn client_from(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .local_address(ip.parse::<std::net::IpAddr>().ok())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .expect("a client")
}

/// [`serve`], as a base URL: `http://127.0.0.1:PORT`.
pub async fn serve_url(server: Server) -> String {
    format!("http://{}", serve(server).await)
}

/// How long a test's HTTP request may take.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// A loopback HTTP client: no proxy, [`TIMEOUT`].
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(TIMEOUT)
        .build()
        .expect("a client")
}

/// Sends a request and returns its status, headers and body. With a body,
/// `Content-Type: application/json` and `Accept: application/json, text/event-stream` are
/// sent unless `headers` names them; a name `headers` gives twice is sent twice.
pub async fn send(
    method: reqwest::Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, HeaderMap, String) {
    let mut h = HeaderMap::new();
    if body.is_some() {
        h.insert("content-type", HeaderValue::from_static("application/json"));
        h.insert(
            "accept",
            HeaderValue::from_static("application/json, text/event-stream"),
        );
    }
    let mut given: Vec<HeaderName> = Vec::new();
    for (k, v) in headers {
        let name = HeaderName::from_bytes(k.as_bytes()).expect("a header name");
        let value = HeaderValue::from_str(v).expect("a header value");
        if given.contains(&name) {
            h.append(name, value);
        } else {
            given.push(name.clone());
            h.insert(name, value);
        }
    }
    let mut req = client().request(method, url).headers(h);
    if let Some(b) = body {
        req = req.body(b.to_owned());
    }
    let resp = req.send().await.expect("the server answers");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.expect("a body");
    (status, headers, text)
}

/// [`send`] of a POST.
pub async fn post(url: &str, headers: &[(&str, &str)], body: &str) -> (u16, HeaderMap, String) {
    send(reqwest::Method::POST, url, headers, Some(body)).await
}

/// [`send`] of a GET.
pub async fn get(url: &str, headers: &[(&str, &str)]) -> (u16, HeaderMap, String) {
    send(reqwest::Method::GET, url, headers, None).await
}

/// [`send`] of a DELETE.
pub async fn delete(url: &str, headers: &[(&str, &str)]) -> (u16, HeaderMap, String) {
    send(reqwest::Method::DELETE, url, headers, None).await
}

/// POSTs a JSON value; returns the status, the headers and the body parsed.
pub async fn post_json(
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, HeaderMap, Value) {
    let (s, h, t) = post(url, headers, &body.to_string()).await;
    (s, h, parse(&t))
}

/// A body as JSON, or a failure that shows it.
pub fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}"))
}

/// A header's value as text.
pub fn hdr<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).map(|v| v.to_str().expect("a text header"))
}

pub use mcp_runtime::test_util::{SseEvent as Event, sse_events, sse_events_so_far};

/// An MCP endpoint served over stdio (`serve_io` on in-memory pipes): lines in, lines out.
pub struct Stdio {
    input: Option<tokio::io::DuplexStream>,
    output: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Stdio {
    /// Serves `group` v1 of `server`.
    pub fn start(server: &Server, group: &str) -> Self {
        let ep = server.mcp_endpoint(group, 1).unwrap().clone();
        let (client_w, server_r) = tokio::io::duplex(1 << 16);
        let (server_w, client_r) = tokio::io::duplex(1 << 16);
        let task = tokio::spawn(mcp_runtime::test_util::serve_io(ep, server_r, server_w));
        Self {
            input: Some(client_w),
            output: BufReader::new(client_r).lines(),
            task,
        }
    }

    /// Writes one line.
    pub async fn send(&mut self, line: &str) {
        let w = self.input.as_mut().unwrap();
        w.write_all(line.as_bytes()).await.unwrap();
        w.write_all(b"\n").await.unwrap();
        w.flush().await.unwrap();
    }

    /// The next line written, within [`TIMEOUT`].
    pub async fn recv(&mut self) -> String {
        tokio::time::timeout(TIMEOUT, self.output.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("output still open")
    }

    /// Writes a line and reads the one written back, as JSON.
    pub async fn roundtrip(&mut self, line: &str) -> Value {
        self.send(line).await;
        let out = self.recv().await;
        assert!(!out.contains('\n'));
        parse(&out)
    }

    /// Closes the input: the loop must end, having written nothing more.
    pub async fn close(mut self) {
        drop(self.input.take());
        let r = tokio::time::timeout(TIMEOUT, self.task)
            .await
            .expect("serve_io returns when input closes")
            .unwrap();
        assert!(r.is_ok(), "{r:?}");
        // Nothing more was written.
        assert_eq!(self.output.next_line().await.unwrap(), None);
    }
}
