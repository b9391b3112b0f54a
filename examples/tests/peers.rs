//! The example service against real MCP peers: the official Python SDK (auto and legacy
//! modes, HTTP and stdio), the TypeScript SDK client, the Inspector CLI in `--strict` mode,
//! the official conformance suite, a web host of MCP Apps (the official host-side bridge
//! in Debian's Chromium), and the OpenRPC generator on the JSON-RPC face's document.
//!
//! The peers are installed by `scripts/install-test-clients.sh` and found through
//! `MCP_TEST_PYTHON`, `MCP_TEST_NODE` (Node 22), `MCP_TEST_NPM_DIR`, `MCP_TEST_APPS_DIR`,
//! `MCP_TEST_OPENRPC_DIR` and `MCP_TEST_CHROMIUM`. Every test here is `#[ignore]`d with the peers it needs;
//! `scripts/test.sh` runs them, and there a missing peer fails the test.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

/// The tools of the example's `mcp` group, in tools/list order.
const MCP_TOOLS: [&str; 10] = [
    "Catalog.get",
    "Catalog.ping",
    "Catalog.pitch",
    "Catalog.search",
    "Catalog.tree",
    "Jobs.once",
    "Jobs.run",
    "Mail.send",
    "Orders.pay",
    "Stats.hits",
];

mod common;

/// A running `catalog --listen 127.0.0.1:0`, killed on drop.
type Catalog = common::Spawned;

/// A peer's path from the environment. Every test here is `#[ignore]`d (a plain `cargo test`
/// reports it ignored, with the peer it needs); `scripts/test.sh` installs the peers, sets
/// these variables and runs the ignored tests, where a missing peer fails the test.
fn peer(var: &str) -> String {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => v,
        _ => {
            panic!("{var} is not set: scripts/install-test-clients.sh installs the MCP test peers")
        }
    }
}

fn clients_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/clients")
}

fn run(mut cmd: Command) -> Output {
    let out = cmd.output().expect("run peer");
    if !out.status.success() {
        eprintln!(
            "stdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

fn last_json_line(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("null");
    serde_json::from_str(line).expect("peer printed JSON")
}

fn node_cmd(node: &str, script: &str) -> Command {
    let mut c = Command::new(node);
    c.arg(script);
    // Tools that spawn `node` themselves must find the same (Node 22) binary.
    let dir = std::path::Path::new(node)
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    c.env(
        "PATH",
        format!("{dir}:{}", std::env::var("PATH").unwrap_or_default()),
    );
    c
}

fn python(mode: &str, target: &[&str]) -> Value {
    python_script("python_client.py", mode, target)
}

fn python_script(script: &str, mode: &str, target: &[&str]) -> Value {
    let py = peer("MCP_TEST_PYTHON");
    let mut cmd = Command::new(py);
    cmd.arg(clients_dir().join(script)).arg(mode).args(target);
    let out = run(cmd);
    assert!(
        out.status.success(),
        "{script} failed in mode {mode} against {target:?}"
    );
    last_json_line(&out)
}

/// What `python_ask.py` must see: `Orders.pay` asks before paying (accepted, then declined),
/// `Catalog.pitch` samples its sentence through the client.
fn assert_asked(seen: &Value, version: &str) {
    let confirm = |order: u64| {
        serde_json::json!({"message": format!("Pay order {order}?"), "requestedSchema": {
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "description": "Confirm"}},
            "required": ["confirm"]}})
    };
    assert_eq!(
        seen,
        &serde_json::json!({
            "protocol_version": version,
            "elicitations": [confirm(7), confirm(8)],
            "samplings": [{
                "text": "Write one sentence that makes a shopper want this product: Teapot",
                "systemPrompt": "You write short, honest product copy.",
                "maxTokens": 100}],
            "accepted": {"order_id": 7, "paid": true},
            "declined": {"order_id": 8, "paid": false},
            "pitch": "The teapot your tea deserves."
        })
    );
}

#[test]
#[ignore = "needs the official Python MCP SDK at MCP_TEST_PYTHON; scripts/test.sh provides the peers and runs ignored tests"]
fn python_sdk_callbacks_confirm_a_payment_and_write_a_pitch_on_both_eras() {
    // Handshake-era HTTP clients can be asked only within a session.
    let c = Catalog::catalog(&[("CATALOG_STATEFUL", "mcp")]);
    let auto = python_script("python_ask.py", "auto", &[&c.url("mcp")]);
    assert_asked(&auto, "2026-07-28");
    let legacy = python_script("python_ask.py", "legacy", &[&c.url("mcp")]);
    assert_asked(&legacy, "2025-11-25");
    let bin = env!("CARGO_BIN_EXE_catalog");
    let stdio = ["stdio", bin, "--stdio", "--group", "mcp", "--version", "1"];
    let auto = python_script("python_ask.py", "auto", &stdio);
    assert_asked(&auto, "2026-07-28");
    let legacy = python_script("python_ask.py", "legacy", &stdio);
    assert_asked(&legacy, "2025-11-25");
}

#[test]
#[ignore = "needs the official Python MCP SDK at MCP_TEST_PYTHON; scripts/test.sh provides the peers and runs ignored tests"]
fn python_sdk_extension_drives_a_task_to_its_result() {
    let c = Catalog::catalog(&[]);
    let seen = python_script("python_tasks.py", "auto", &[&c.url("mcp")]);
    assert_eq!(
        seen,
        serde_json::json!({
            "protocol_version": "2026-07-28",
            "created": {"status": "working", "tool": "Jobs.run"},
            "final_status": "completed",
            "polled": true,
            "statuses": ["working", "completed"],
            "result": {"result": {"steps": 4}},
            "ping": "pong, task"
        })
    );
}

/// An HTTP proxy on a loopback port that sends each request to the next backend in turn (per
/// request, not per connection), recording which backend served each `Mcp-Method`. A backend
/// that cannot be reached or fails to answer is skipped, as a balancer's retry does.
struct Alternating {
    addr: std::net::SocketAddr,
    served: std::sync::Arc<std::sync::Mutex<Vec<(usize, String)>>>,
    _runtime: tokio::runtime::Runtime,
}

fn alternating(backends: Vec<String>) -> Alternating {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("a free port");
    let addr = listener.local_addr().expect("its address");
    let served: Arc<Mutex<Vec<(usize, String)>>> = Arc::default();
    let next = Arc::new(AtomicUsize::new(0));
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let (log, backends) = (served.clone(), Arc::new(backends));
    let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
        let (http, log, backends, next) =
            (http.clone(), log.clone(), backends.clone(), next.clone());
        async move {
            let first = next.fetch_add(1, Ordering::SeqCst);
            let (parts, body) = req.into_parts();
            let method = parts
                .headers
                .get("mcp-method")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_owned();
            let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
            let mut resp = None;
            for i in (first..first + backends.len()).map(|i| i % backends.len()) {
                let mut out = http.request(
                    parts.method.clone(),
                    format!("{}{}", backends[i], parts.uri),
                );
                for (k, v) in &parts.headers {
                    if k != "host" {
                        out = out.header(k, v);
                    }
                }
                match out.body(body.clone()).send().await {
                    Ok(r) => {
                        log.lock().unwrap().push((i, method));
                        resp = Some(r);
                        break;
                    }
                    // Down, or killed while it answered: the next one is asked.
                    Err(_) => continue,
                }
            }
            let resp = resp.expect("a backend that answers");
            let mut answer = axum::http::Response::builder().status(resp.status());
            for (k, v) in resp.headers() {
                answer = answer.header(k, v);
            }
            answer
                .body(axum::body::Body::from(resp.bytes().await.unwrap()))
                .unwrap()
        }
    });
    runtime.spawn(async move { axum::serve(listener, app).await });
    Alternating {
        addr,
        served,
        _runtime: runtime,
    }
}

#[test]
#[ignore = "needs the official Python MCP SDK at MCP_TEST_PYTHON; scripts/test.sh provides the peers and runs ignored tests"]
fn two_instances_serve_the_rounds_of_one_call_alternately() {
    let key = (
        "CATALOG_REQUEST_STATE_KEY",
        "a shared key of the two instances",
    );
    let (a, b) = (Catalog::catalog(&[key]), Catalog::catalog(&[key]));
    let proxy = alternating(vec![
        format!("http://{}", a.addr),
        format!("http://{}", b.addr),
    ]);
    let url = format!("http://{}/mcp/mcp/v1", proxy.addr);
    let seen = python_script("python_ask.py", "auto", &[&url]);
    assert_asked(&seen, "2026-07-28");
    // Each call that asked took two rounds, and consecutive rounds reached other instances.
    let served = proxy.served.lock().unwrap().clone();
    let calls: Vec<usize> = served
        .iter()
        .filter(|(_, m)| m == "tools/call")
        .map(|(i, _)| *i)
        .collect();
    assert_eq!(calls.len(), 6, "{served:?}");
    assert!(calls.windows(2).any(|w| w[0] != w[1]), "{served:?}");
}

/// The official SDK's task, polled through a proxy in front of two instances on one Redis:
/// the instance that accepted it (and runs it) is killed mid-way; the client's polls reach the
/// other, which says `working` all along, runs the job again and completes it. The client sees
/// nothing but a task that took longer.
#[test]
#[ignore = "needs the official Python MCP SDK at MCP_TEST_PYTHON and redis-server; scripts/test.sh provides the peers and runs ignored tests"]
fn python_sdk_task_completes_when_the_instance_running_it_is_killed() {
    let redis = common::Redis::durable();
    let url = redis.url();
    let env = [("REDIS_URL", url.as_str()), ("APP_ENV", "prod")];
    let mut instances = [Catalog::catalog(&env), Catalog::catalog(&env)];
    let proxy = alternating(
        instances
            .iter()
            .map(|c| format!("http://{}", c.addr))
            .collect(),
    );
    let client = Command::new(peer("MCP_TEST_PYTHON"))
        .arg(clients_dir().join("python_tasks.py"))
        .args(["auto", &format!("http://{}/mcp/mcp/v1", proxy.addr)])
        .arg("takeover")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python runs");
    // The instance that accepted the call runs it: killed a second into its three.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let runner = loop {
        let served = proxy.served.lock().unwrap().clone();
        if let Some((i, _)) = served.iter().find(|(_, m)| m == "tools/call") {
            break *i;
        }
        assert!(std::time::Instant::now() < deadline, "no call: {served:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::thread::sleep(std::time::Duration::from_secs(1));
    instances[runner].kill();
    let out = client.wait_with_output().expect("python ends");
    assert!(out.status.success(), "python_tasks.py takeover failed");
    assert_eq!(
        last_json_line(&out),
        serde_json::json!({
            "protocol_version": "2026-07-28",
            "created": {"status": "working", "tool": "Jobs.run"},
            "statuses": ["working", "completed"],
            "final_status": "completed",
            "polled": true,
            "result": {"result": {"steps": 30, "attempt": 2}}
        })
    );
    // Its polls reached the other instance after the kill.
    let served = proxy.served.lock().unwrap().clone();
    assert!(
        served
            .iter()
            .skip_while(|(_, m)| m != "tools/call")
            .any(|(i, m)| *i != runner && m == "tasks/get"),
        "{served:?}"
    );
}

#[test]
#[ignore = "needs the official Python MCP SDK at MCP_TEST_PYTHON; scripts/test.sh provides the peers and runs ignored tests"]
fn python_sdk_auto_mode_over_http_ends_on_the_modern_revision() {
    let c = Catalog::catalog(&[]);
    let seen = python("auto", &[&c.url("mcp")]);
    assert_eq!(seen["protocol_version"], "2026-07-28");
    assert_eq!(seen["unknown_tool"], "Unknown tool: Nope.nothing");
    assert_surface(&seen);
}

/// What the Python client saw of resources, prompts and completions (it checks the values
/// itself, and fails on the first wrong one).
fn assert_surface(seen: &Value) {
    assert_eq!(
        seen["resources"],
        serde_json::json!([
            "catalog://hours",
            "skill://catalog/shopping/SKILL.md",
            "ui://catalog/product-card"
        ])
    );
    // The MCP App: listed and read with its `_meta.ui`, and linked from `Catalog.get`.
    assert_eq!(
        seen["app"],
        serde_json::json!({
            "uri": "ui://catalog/product-card",
            "mime_type": "text/html;profile=mcp-app",
            "tool": "ui://catalog/product-card"
        })
    );
    // The language carrier (SEP-2792) in `_meta`: the app page read in Ukrainian, a call in
    // English, each answer naming its language.
    assert_eq!(seen["languages"], serde_json::json!(["uk", "en"]));
    assert_eq!(seen["prompts"], serde_json::json!(["recommend"]));
    assert_eq!(seen["resource_not_found"], "Resource not found");
    assert_eq!(
        seen["prompt_missing_argument"],
        "Invalid arguments: 'need': Required parameter \"need\" not passed"
    );
}

#[test]
#[ignore = "needs the official Python MCP SDK at MCP_TEST_PYTHON; scripts/test.sh provides the peers and runs ignored tests"]
fn python_sdk_legacy_mode_over_http_uses_a_handshake_revision() {
    let c = Catalog::catalog(&[]);
    let seen = python("legacy", &[&c.url("mcp")]);
    assert_eq!(seen["protocol_version"], "2025-11-25");
    assert_surface(&seen);
}

#[test]
#[ignore = "needs the official Python MCP SDK at MCP_TEST_PYTHON; scripts/test.sh provides the peers and runs ignored tests"]
fn python_sdk_over_stdio_in_both_modes() {
    let bin = env!("CARGO_BIN_EXE_catalog");
    let auto = python(
        "auto",
        &["stdio", bin, "--stdio", "--group", "mcp", "--version", "1"],
    );
    assert_eq!(auto["protocol_version"], "2026-07-28");
    let legacy = python("legacy", &["stdio", bin, "--stdio"]);
    assert_eq!(legacy["protocol_version"], "2025-11-25");
    assert_eq!(legacy["progress"].as_array().map(Vec::len), Some(3));
    assert_surface(&auto);
    assert_surface(&legacy);
}

#[test]
#[ignore = "needs Node 22 and the npm peers at MCP_TEST_NODE and MCP_TEST_NPM_DIR; scripts/test.sh provides the peers and runs ignored tests"]
fn typescript_sdk_client_lists_and_calls_tools() {
    let (node, npm) = (peer("MCP_TEST_NODE"), peer("MCP_TEST_NPM_DIR"));
    let c = Catalog::catalog(&[]);
    let mut cmd = node_cmd(
        &node,
        &clients_dir().join("ts_client.mjs").display().to_string(),
    );
    cmd.arg(c.url("mcp")).env("MCP_TEST_NPM_DIR", &npm);
    let out = run(cmd);
    assert!(out.status.success(), "TS client failed");
    let seen = last_json_line(&out);
    assert_eq!(seen["tools"], serde_json::json!(MCP_TOOLS));
    let ui = serde_json::json!({"ui": {"prefersBorder": true}});
    assert_eq!(
        seen["app"],
        serde_json::json!({
            "extension": {"mimeTypes": ["text/html;profile=mcp-app"]},
            "tool": {"ui": {"resourceUri": "ui://catalog/product-card"}},
            "resource": {"mimeType": "text/html;profile=mcp-app", "_meta": ui},
            "read": {"mimeType": "text/html;profile=mcp-app", "_meta": ui}
        })
    );
    assert_eq!(
        seen["language"],
        serde_json::json!({
            "refused": {"status": 400, "mismatch": true},
            "read": "uk",
            "page": true,
            "call": "uk"
        })
    );
}

#[test]
#[ignore = "needs Node 22, the apps host's npm packages at MCP_TEST_APPS_DIR and Chromium at MCP_TEST_CHROMIUM; scripts/test.sh provides them and runs ignored tests"]
fn the_product_card_app_shows_catalog_get_s_product_in_a_real_browser_in_two_languages() {
    let (node, apps) = (peer("MCP_TEST_NODE"), peer("MCP_TEST_APPS_DIR"));
    let chromium = peer("MCP_TEST_CHROMIUM");
    let c = Catalog::catalog(&[]);
    // Screenshots for a person to look at: target/tmp/apps/app-{en,uk}.png.
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("apps");
    let mut cmd = node_cmd(
        &node,
        &clients_dir().join("apps/browser.mjs").display().to_string(),
    );
    cmd.arg(c.url("mcp"))
        .args(["Catalog.get", r#"{"id":3}"#])
        .arg(&shots)
        .args(["en", "uk"])
        .env("MCP_TEST_APPS_DIR", &apps)
        .env("MCP_TEST_CHROMIUM", &chromium);
    let out = run(cmd);
    assert!(out.status.success(), "the browser host failed");
    let seen = last_json_line(&out);
    // What the host saw on the wire: the extension, the tool's link, the page's `_meta.ui`,
    // the structured result it hands the view.
    let host = serde_json::json!({
        "extension": {"mimeTypes": ["text/html;profile=mcp-app"]},
        "protocolVersion": "2025-11-25",
        "tool": {"name": "Catalog.get", "_meta": {"ui": {"resourceUri": "ui://catalog/product-card"}}},
        "resource": {
            "uri": "ui://catalog/product-card",
            "mimeType": "text/html;profile=mcp-app",
            "_meta": {"ui": {"prefersBorder": true}}
        },
        "structuredContent": {"result": {"id": 3, "name": "Teapot"}}
    });
    for (lang, label, number) in [("en", "Product", "No. 3"), ("uk", "Товар", "№ 3")] {
        let shot = shots.join(format!("app-{lang}.png"));
        assert_eq!(
            seen[lang],
            serde_json::json!({
                "host": host,
                // What the view shows: the product's name from the structured result, in the
                // page the server wrote in the browser's language.
                "view": {"lang": lang, "label": label, "name": "Teapot", "number": number},
                "errors": [],
                "screenshot": shot.display().to_string()
            }),
            "{lang}"
        );
        let png = std::fs::read(&shot).expect("the screenshot was written");
        assert!(png.starts_with(b"\x89PNG"), "{} is a PNG", shot.display());
        eprintln!("screenshot of the app in {lang}: {}", shot.display());
    }
}

#[test]
#[ignore = "needs Node 22 and @open-rpc/generator at MCP_TEST_OPENRPC_DIR; scripts/test.sh provides them and runs ignored tests"]
fn the_openrpc_document_passes_the_meta_schema_and_its_unrolled_form_generates_a_client() {
    let (node, dir) = (peer("MCP_TEST_NODE"), peer("MCP_TEST_OPENRPC_DIR"));
    let c = Catalog::catalog(&[]);
    let out_dir = std::env::temp_dir().join(format!("mcp-openrpc-gen-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let rpc = format!("http://{}/rpc/mcp/v1", c.addr);
    let mut cmd = node_cmd(
        &node,
        &clients_dir()
            .join("openrpc_generator.mjs")
            .display()
            .to_string(),
    );
    cmd.arg(&rpc)
        .arg(&out_dir)
        .env("MCP_TEST_OPENRPC_DIR", &dir);
    let out = run(cmd);
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(out.status.success(), "the OpenRPC generator failed");
    let seen = last_json_line(&out);
    // Every method of the group (the same as its tools), each a function of the generated
    // client.
    assert_eq!(
        seen,
        serde_json::json!({
            "url": rpc,
            "valid": true,
            "unrolledValid": true,
            "recursive": ["Category"],
            "generated": MCP_TOOLS,
        })
    );
}

#[test]
#[ignore = "needs Node 22 and the TypeScript client 2 at MCP_TEST_APPS_DIR; scripts/test.sh provides them and runs ignored tests"]
fn the_typescript_skills_client_lists_gets_and_verifies_the_shopping_skill_on_both_eras() {
    let (node, apps) = (peer("MCP_TEST_NODE"), peer("MCP_TEST_APPS_DIR"));
    let c = Catalog::catalog(&[]);
    let skill_md = include_str!("../skills/shopping/SKILL.md").len();
    let sizes = include_str!("../skills/shopping/references/sizes.md").len();
    for (mode, version, cache) in [
        (
            "legacy",
            "2025-11-25",
            serde_json::json!({"ttlMs": null, "cacheScope": null}),
        ),
        (
            "auto",
            "2026-07-28",
            serde_json::json!({"ttlMs": 300_000, "cacheScope": "public"}),
        ),
    ] {
        let mut cmd = node_cmd(
            &node,
            &clients_dir()
                .join("skills_client.mjs")
                .display()
                .to_string(),
        );
        cmd.arg(c.url("mcp"))
            .arg(mode)
            .env("MCP_TEST_APPS_DIR", &apps);
        let out = run(cmd);
        assert!(
            out.status.success(),
            "the skills client failed in mode {mode}"
        );
        let root = "skill://catalog/shopping";
        assert_eq!(
            last_json_line(&out),
            serde_json::json!({
                "protocolVersion": version,
                "supported": true,
                "uris": [format!("{root}/SKILL.md")],
                "invalid": [],
                "cache": cache,
                "files": [
                    {"uri": format!("{root}/SKILL.md"), "mimeType": "text/markdown", "verified": true, "bytes": skill_md},
                    {"uri": format!("{root}/references/sizes.md"), "mimeType": "text/markdown", "verified": true, "bytes": sizes}
                ],
                "frontmatter": {
                    "name": "shopping",
                    "description": "Help a customer find, compare and buy products of this catalog, with its tools in the right order.",
                    "license": "MIT",
                    "metadata": {"version": "1.0"}
                },
                "heading": "# Shopping with the catalog",
                "unlisted": "unlisted",
                "unknown": -32602
            }),
            "{mode}"
        );
    }
}

fn inspector(node: &str, npm: &str, args: &[&str]) -> Output {
    let mut cmd = node_cmd(node, &format!("{npm}/node_modules/.bin/mcp-inspector"));
    cmd.arg("--cli").args(args);
    cmd.output().expect("run inspector")
}

#[test]
#[ignore = "needs Node 22 and the npm peers at MCP_TEST_NODE and MCP_TEST_NPM_DIR; scripts/test.sh provides the peers and runs ignored tests"]
fn inspector_cli_strict_accepts_the_tools_over_http_and_stdio() {
    let (node, npm) = (peer("MCP_TEST_NODE"), peer("MCP_TEST_NPM_DIR"));
    let c = Catalog::catalog(&[]);
    let url = c.url("mcp");
    let out = inspector(
        &node,
        &npm,
        &[
            &url,
            "--transport",
            "http",
            "--method",
            "tools/list",
            "--strict",
            "--format",
            "json",
        ],
    );
    assert!(
        out.status.success(),
        "strict tools/list over HTTP: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("unknown format"),
        "schemas use non-standard formats: {stderr}"
    );
    let listed = last_json_line(&out);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, MCP_TOOLS);

    let bin = env!("CARGO_BIN_EXE_catalog");
    let out = inspector(
        &node,
        &npm,
        &[
            "--method",
            "tools/list",
            "--strict",
            "--format",
            "json",
            "--",
            bin,
            "--stdio",
        ],
    );
    assert!(
        out.status.success(),
        "strict tools/list over stdio: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = inspector(
        &node,
        &npm,
        &[
            &url,
            "--transport",
            "http",
            "--method",
            "tools/call",
            "--tool-name",
            "Catalog.search",
            "--tool-arg",
            "query=mug",
            "--tool-arg",
            "limit=1",
            "--format",
            "json",
        ],
    );
    assert!(
        out.status.success(),
        "tools/call (structuredContent checked against outputSchema)"
    );
    assert_eq!(
        last_json_line(&out)["result"]["structuredContent"],
        serde_json::json!({"result":[{"id":5,"name":"Mug rack"}]})
    );

    // A tool error is exit code 5 (`tool_is_error`).
    let out = inspector(
        &node,
        &npm,
        &[
            &url,
            "--transport",
            "http",
            "--method",
            "tools/call",
            "--tool-name",
            "Catalog.get",
            "--tool-arg",
            "id=99",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(5));
}

// The official conformance suite (`conformance server --requirements REVISION`) runs exactly
// the scenarios a spec revision requires, at that revision's wire (the 2025-11-25 handshake, the
// stateless 2026-07-28 `_meta`), and also the not-scored ones (pending, extensions, added after
// the release), which it reports but leaves out of the verdict.
//
// A baseline is the run's `--expected-failures` file: a `scenario` entry where the example does
// not serve the scenario's feature at all, a `scenario:check-id` entry where the rest of the
// scenario passes. The suite fails the run on a failed check (a WARNING counts) that is not
// listed and on a listed entry that passes (stale); the test also requires every entry to be
// reported as an expected failure, so a baseline lists exactly what fails today. Both shrink as
// issues #21, #22 and #23 land: remove what the suite reports under "Stale baseline entries".

/// 2025-11-25: what the example does not serve yet (nothing).
const BASELINE_2025_11_25: &str = "server: []
";

/// 2025-11-25: the scenarios that pass with no failed check. The last three are not scored
/// (added after the release; pending), and pass.
const PASSING_2025_11_25: [&str; 33] = [
    "server-initialize",
    "logging-set-level",
    "ping",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
    "server-sse-multiple-streams",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
    "server-session-lifecycle",
    "json-schema-2020-12",
    "server-sse-polling",
];

/// 2026-07-28: what the example does not serve yet (nothing scored).
const BASELINE_2026_07_28: &str = "server: []
";

/// 2026-07-28: the scenarios that pass with no failed check: every one the suite runs, the
/// not-scored ones included (the tasks extension, SEP-2106 keywords, SEP-2243 headers;
/// `tasks-status-notifications` runs no check in this release).
const PASSING_2026_07_28: [&str; 49] = [
    "server-stateless",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "server-sse-multiple-streams",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "sep-2164-resource-not-found",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
    "caching",
    "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-request-state",
    "input-required-result-multiple-input-requests",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-non-tool-request",
    "input-required-result-result-type",
    "input-required-result-unsupported-methods",
    "input-required-result-tampered-state",
    "input-required-result-capability-check",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
    "json-schema-2020-12",
    "http-header-validation",
    "http-custom-header-server-validation",
];

/// Runs the conformance suite on the `conformance` group with `--requirements revision` and
/// `baseline` as its expected failures: it must pass, report every baseline entry as an
/// expected failure, and show each of `passing` as `✓ NAME: P passed, 0 failed` with P > 0.
fn conformance_suite(revision: &str, baseline: &str, passing: &[&str]) {
    let (node, npm) = (peer("MCP_TEST_NODE"), peer("MCP_TEST_NPM_DIR"));
    let c = Catalog::catalog(&[]);
    let dir =
        std::env::temp_dir().join(format!("mcp-conformance-{revision}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("baseline.yml");
    std::fs::write(&file, baseline).expect("write baseline");
    let mut cmd = node_cmd(&node, &format!("{npm}/node_modules/.bin/conformance"));
    cmd.args([
        "server",
        "--url",
        &c.url("conformance"),
        "--requirements",
        revision,
        "--expected-failures",
    ])
    .arg(&file)
    .arg("-o")
    .arg(dir.join("results"));
    let out = run(cmd);
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("Baseline check passed"),
        "conformance suite failed for {revision} (each scenario's checks.json is in {})",
        dir.display()
    );
    for entry in baseline.lines().filter_map(|l| l.trim().strip_prefix("- ")) {
        assert!(
            stdout.lines().any(|l| l == format!("  ~ {entry}")),
            "{revision}: baseline entry {entry} is not reported as an expected failure"
        );
    }
    for scenario in passing {
        // The summary line of a scenario: `✓ NAME: P passed, F failed` (✗ when F > 0).
        let line = stdout
            .lines()
            .find(|l| {
                l.strip_prefix("✓ ")
                    .or_else(|| l.strip_prefix("✗ "))
                    .and_then(|rest| rest.strip_prefix(scenario))
                    .is_some_and(|rest| rest.starts_with(": "))
            })
            .unwrap_or("");
        assert!(
            line.starts_with('✓')
                && line.ends_with(" passed, 0 failed")
                && !line.contains(": 0 passed"),
            "{revision}: scenario {scenario}: {line:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs Node 22 and the npm peers at MCP_TEST_NODE and MCP_TEST_NPM_DIR; scripts/test.sh provides the peers and runs ignored tests"]
fn official_conformance_suite_2025_11_25_requirements_fail_only_the_baseline() {
    conformance_suite("2025-11-25", BASELINE_2025_11_25, &PASSING_2025_11_25);
}

#[test]
#[ignore = "needs Node 22 and the npm peers at MCP_TEST_NODE and MCP_TEST_NPM_DIR; scripts/test.sh provides the peers and runs ignored tests"]
fn official_conformance_suite_2026_07_28_requirements_fail_only_the_baseline() {
    conformance_suite("2026-07-28", BASELINE_2026_07_28, &PASSING_2026_07_28);
}
