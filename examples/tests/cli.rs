//! The standard command line (`mcp_runtime::cli`) on the built `catalog` binary: what
//! `tools` and `openrpc` print is exactly what a live server answers.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_catalog");
const MODERN: &str = "2026-07-28";

fn catalog() -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_remove("REDIS_URL")
        .env_remove("APP_ENV")
        .env("RUST_LOG", "info");
    cmd
}

/// Runs `catalog ARGS` to completion.
fn run(args: &[&str]) -> Output {
    catalog()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run catalog")
}

mod common;

/// A running `catalog --listen 127.0.0.1:0`, killed on drop.
type Live = common::Spawned;

impl Live {
    fn start_live() -> Self {
        Self::catalog(&[])
    }

    /// Every page of a live modern `tools/list`, as one array.
    async fn tools(&self, lang: Option<&str>) -> Value {
        let client = reqwest::Client::new();
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut params = json!({ "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }});
            if let Some(c) = cursor.take() {
                params["cursor"] = c.into();
            }
            let mut req = client
                .post(format!("http://{}/mcp/mcp/v1", self.addr))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", "tools/list")
                .json(
                    &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}),
                );
            if let Some(l) = lang {
                req = req.header("accept-language", l);
            }
            let res = req.send().await.expect("tools/list");
            assert_eq!(res.status(), 200);
            let mut body: Value = res.json().await.expect("JSON");
            assert_eq!(body["result"]["resultType"], "complete", "{body}");
            let result = &mut body["result"];
            tools.extend(result["tools"].take().as_array().cloned().expect("tools"));
            match result["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => return Value::Array(tools),
            }
        }
    }

    async fn openrpc(&self, lang: Option<&str>, query: &str) -> Vec<u8> {
        let mut req = reqwest::Client::new().get(format!("http://{}/rpc/mcp/v1{query}", self.addr));
        if let Some(l) = lang {
            req = req.header("accept-language", l);
        }
        let res = req.send().await.expect("GET openrpc");
        assert_eq!(res.status(), 200);
        res.bytes().await.expect("body").to_vec()
    }
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 stdout")
}

#[tokio::test]
async fn tools_prints_exactly_what_a_live_modern_tools_list_returns() {
    let live = Live::start_live();
    for (args, lang) in [
        (&["tools", "--group", "mcp", "--version", "1"][..], None),
        (
            &["tools", "--group", "mcp", "--version", "1", "--lang", "uk"][..],
            Some("uk"),
        ),
    ] {
        let printed = stdout(&run(args));
        let served = live.tools(lang).await;
        // Byte for byte (the arrays are compact JSON), so member order counts too.
        assert_eq!(printed, serde_json::to_string(&served).unwrap(), "{args:?}");
        let names: Vec<&str> = served
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"Catalog.search"), "{names:?}");
    }
    // The translations really differ: the check above is not vacuous.
    let en = stdout(&run(&["tools", "--group", "mcp", "--version", "1"]));
    let uk = stdout(&run(&[
        "tools",
        "--group",
        "mcp",
        "--version",
        "1",
        "--lang",
        "uk",
    ]));
    assert_ne!(en, uk);
}

#[tokio::test]
async fn openrpc_prints_exactly_the_bytes_of_get() {
    let live = Live::start_live();
    let base = format!("http://{}", live.addr);
    let openrpc = [
        "openrpc",
        "--group",
        "mcp",
        "--version",
        "1",
        "--url",
        &base,
    ];
    let printed = run(&openrpc);
    assert!(printed.status.success());
    assert_eq!(printed.stdout, live.openrpc(None, "").await);
    let printed = run(&[&openrpc[..], &["--lang", "uk"]].concat());
    assert!(printed.status.success());
    assert_eq!(printed.stdout, live.openrpc(Some("uk"), "").await);
    // Unrolled: as `?unroll` (3 levels) and `?unroll=N`.
    let printed = run(&[&openrpc[..], &["--unroll"]].concat());
    assert_eq!(printed.stdout, live.openrpc(None, "?unroll").await);
    let printed = run(&[&openrpc[..], &["--unroll", "5"]].concat());
    assert_eq!(printed.stdout, live.openrpc(None, "?unroll=5").await);
    let refused = run(&[&openrpc[..], &["--unroll", "6"]].concat());
    assert_eq!(refused.status.code(), Some(2), "a usage error");
    // Without --url: under http://127.0.0.1:8080, the default of every printed document.
    let doc: Value = serde_json::from_slice(&run(&openrpc[..5]).stdout).expect("JSON");
    assert_eq!(doc["servers"][0]["url"], "http://127.0.0.1:8080/rpc/mcp/v1");
    let doc: Value = serde_json::from_slice(&printed.stdout).expect("JSON");
    assert_eq!(doc["openrpc"], "1.3.2");
}

#[tokio::test]
async fn card_prints_exactly_the_bytes_of_get() {
    let live = Live::start_live();
    let base = format!("http://{}", live.addr);
    for lang in ["en", "uk"] {
        let printed = run(&["card", "--group", "mcp", "--lang", lang, "--url", &base]);
        assert!(printed.status.success(), "{}", stdout(&printed));
        let got = reqwest::Client::new()
            .get(format!("{base}/mcp/mcp/v1/server-card"))
            .header("accept-language", lang)
            .send()
            .await
            .expect("GET the card");
        assert_eq!(got.status(), 200);
        assert_eq!(
            printed.stdout,
            got.bytes().await.expect("a body").to_vec(),
            "{lang}"
        );
    }
    let printed = run(&["card", "--group", "nope"]);
    assert!(!printed.status.success());
}

#[test]
fn card_registry_prints_the_registry_s_server_json() {
    let printed = run(&[
        "card",
        "--group",
        "mcp",
        "--url",
        "https://shop.example.com",
        "--registry",
    ]);
    assert!(printed.status.success(), "{}", stdout(&printed));
    let doc: Value = serde_json::from_slice(&printed.stdout).expect("JSON");
    assert_eq!(
        doc,
        serde_json::json!({
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
            "name": "com.example.shop/catalog.mcp.v1",
            "version": "0.1.0",
            "title": "Catalog shop",
            "description": "Search the product catalog, show a product, pay an order.",
            "remotes": [{"type": "streamable-http", "url": "https://shop.example.com/mcp/mcp/v1"}]
        })
    );
}

#[test]
fn check_passes_with_a_one_line_summary() {
    let out = run(&["check"]);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("catalog: ok:"), "{text}");
    // The guide shows this very line.
    assert!(
        guide().contains(text.trim_end()),
        "docs/guide/cli.md shows another: {text}"
    );
}

/// `docs/guide/cli.md`.
fn guide() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/guide/cli.md"))
        .expect("the CLI guide")
}

#[test]
fn the_guide_shows_the_real_usage() {
    let help = stdout(&run(&["--help"]));
    let shown = guide()
        .split("```text\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the usage block")
        .to_owned();
    assert_eq!(shown, help);
}

#[test]
fn bad_arguments_exit_2_with_the_usage() {
    for args in [
        &["--bogus"][..],
        &["--listen", "not-an-address"],
        &["tools", "--version", "0"],
        &["--group", "mcp"],
        &["--stdio", "--listen", "127.0.0.1:0"],
        &["frobnicate"],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("Usage: catalog"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let help = run(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let help = String::from_utf8_lossy(&help.stdout);
    for cmd in ["serve", "stdio", "tools", "openrpc", "check"] {
        assert!(help.contains(cmd), "{help}");
    }
}

#[test]
fn unknown_groups_fail_with_a_message() {
    let out = run(&["tools", "--group", "internal", "--version", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not published over MCP"));
    let out = run(&["openrpc", "--group", "nope", "--version", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no group `nope`"));
    assert!(out.stdout.is_empty());
}

/// Writes `lines` to `catalog ARGS` on stdin, closes it, and returns the stdout lines.
fn stdio(args: &[&str], lines: &[Value]) -> Vec<Value> {
    let mut child = catalog()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start catalog --stdio");
    let mut stdin = child.stdin.take().expect("stdin");
    for l in lines {
        writeln!(stdin, "{l}").expect("write");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "exit {:?}", out.status.code());
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("stdout carries only JSON-RPC lines"))
        .collect()
}

#[test]
fn stdio_still_answers_an_initialize_line() {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    for args in [
        &["--stdio", "--group", "mcp", "--version", "1"][..],
        &["--stdio"],
        &["stdio", "--group", "mcp"],
    ] {
        let answers = stdio(args, std::slice::from_ref(&init));
        assert_eq!(answers.len(), 1, "{args:?}: {answers:?}");
        assert_eq!(answers[0]["id"], 1);
        assert_eq!(answers[0]["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(answers[0]["result"]["serverInfo"]["name"], "catalog");
    }
}

#[test]
fn stdio_serves_the_protected_group_only_with_allow_protected() {
    let out = run(&["--stdio", "--group", "admin"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MCP group `admin` is protected and stdio has no token"),
        "{err}"
    );
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    for args in [
        &["--stdio", "--group", "admin", "--allow-protected"][..],
        &["stdio", "--group", "admin", "--allow-protected"],
    ] {
        let answers = stdio(args, std::slice::from_ref(&init));
        assert_eq!(answers.len(), 1, "{args:?}: {answers:?}");
        assert_eq!(answers[0]["result"]["protocolVersion"], "2025-11-25");
    }
}
