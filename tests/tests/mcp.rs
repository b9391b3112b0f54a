//! The MCP endpoint on the wire: Streamable HTTP (both eras, stateless and stateful groups)
//! and stdio, with exact JSON bodies.
//!
//! Every test starts its own in-process server on a free loopback port.

use std::time::Duration;

use examples::{ProductStore, internal};
use mcp_runtime::HostPolicy;
use mcp_runtime::mcp::InvalidArguments;
use mcp_runtime::record::{
    Handler, MethodDef, ParamDef, ParamKind, Params, SourceLocation, ToolAnnotations,
};
use mcp_runtime::{ApiGroup, Environment, Output, RequestContext, RpcError, Server, ServerBuilder};
use serde_json::{Value, json};

use tests::{
    Event, Stdio, client, delete, example_prod, get, hdr, parse, post, post_json, serve_url,
    sse_events,
};

// ---------------------------------------------------------------------------------------------
// Fixtures and helpers
// ---------------------------------------------------------------------------------------------

const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";
const INSTRUCTIONS: &str =
    "A small product catalog: search products, get one by id, browse the category tree.";
const MODERN: &str = "2026-07-28";
const TIMEOUT: Duration = Duration::from_secs(10);

fn server_info() -> Value {
    json!({"name": "catalog", "version": "0.1.0"})
}

/// The `_meta` member every modern request carries (`<env>` of the reference).
fn env_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "ExampleClient", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// The `_meta` member of modern results.
fn result_meta() -> Value {
    json!({"io.modelcontextprotocol/serverInfo": server_info()})
}

/// The example's methods without its translation files: tool texts come from the doc comments.
fn untranslated() -> ServerBuilder {
    Server::builder()
        .name("catalog")
        .version("0.1.0")
        .state(ProductStore::demo())
        .state(internal::Bad)
        .instructions(INSTRUCTIONS)
        .env(Environment::PROD)
}

/// The tool names group `mcp` v1 must list: every method of its catalog, sorted.
fn mcp_tool_names(server: &Server) -> Vec<String> {
    let catalog = server.registry().catalog("mcp", 1).unwrap();
    let mut names: Vec<String> = catalog
        .methods()
        .iter()
        .map(|m| m.name().to_owned())
        .collect();
    names.sort();
    for n in MCP_TOOLS {
        assert!(names.iter().any(|m| m == n), "{n} is in group mcp");
    }
    for n in ["Bad:ping", "Chaos.panic"] {
        assert!(!names.iter().any(|m| m == n), "{n} is JSON-RPC only");
    }
    names
}

fn tool_names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The example server (`examples::server()`), served.
async fn example() -> String {
    serve_url(examples::server().unwrap()).await
}

fn ok(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn err(id: Value, code: i32, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn err_data(id: Value, code: i32, message: &str, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": data}})
}

fn initialize(id: i64, version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "ExampleClient", "version": "1.0.0"}
    }})
}

/// The capabilities of the example's groups (tools, resources, prompts, completions, logging);
/// `live`: the connection carries change notifications (a session, stdio, 2026-07-28).
fn capabilities(live: bool) -> Value {
    json!({
        "tools": {"listChanged": live},
        "resources": {"subscribe": live, "listChanged": live},
        "prompts": {"listChanged": live},
        "completions": {},
        "logging": {}
    })
}

/// The MCP Apps extension, which the example's `mcp` group declares (its product card).
fn apps_extension() -> Value {
    json!({"mimeTypes": ["text/html;profile=mcp-app"]})
}

/// The 2026-07-28 capabilities of the `mcp` group (`server/discover`): the tasks extension,
/// which both example groups have, and MCP Apps.
fn modern_capabilities() -> Value {
    let mut caps = capabilities(true);
    caps["extensions"] = json!({
        "io.modelcontextprotocol/tasks": {},
        "io.modelcontextprotocol/ui": apps_extension(),
        "io.modelcontextprotocol/skills": {}
    });
    caps
}

/// The initialize result of a stateful group (the conformance group, without apps): its
/// sessions own their tasks, so 2025-11-25 `tasks/list` is offered.
fn session_initialize(version: &str) -> Value {
    let mut init = initialize_with(version, true, false);
    if let Some(tasks) = init["capabilities"].get_mut("tasks") {
        tasks["list"] = json!({});
    }
    init
}

/// The initialize result of the stateless HTTP group `mcp` (no stream for change
/// notifications).
fn initialize_result(version: &str) -> Value {
    initialize_with(version, false, true)
}

/// The initialize result of the `mcp` group over a stdio connection.
fn initialize_live(version: &str) -> Value {
    initialize_with(version, true, true)
}

/// `mcp_group`: the example's `mcp` group, which has MCP Apps and skills.
fn initialize_with(version: &str, live: bool, mcp_group: bool) -> Value {
    let mut caps = capabilities(live);
    if mcp_group {
        caps["extensions"] = json!({
            "io.modelcontextprotocol/ui": apps_extension(),
            "io.modelcontextprotocol/skills": {}
        });
    }
    if version == "2025-11-25" {
        // Both example groups have task tools, and 2025-11-25 has tasks.
        caps["tasks"] = json!({"cancel": {}, "requests": {"tools": {"call": {}}}});
    }
    json!({
        "protocolVersion": version,
        "capabilities": caps,
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS
    })
}

fn call(id: i64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
}

/// The successful tools/call result of `Catalog.ping` for `who`.
fn pong(who: &str) -> Value {
    let s = format!("pong, {who}");
    json!({
        "content": [{"type": "text", "text": serde_json::to_string(&s).unwrap()}],
        "structuredContent": {"result": s},
        "isError": false
    })
}

/// A modern request: params with `_meta` added.
fn modern_req(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = env_meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The routing headers of a modern request.
fn modern_headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut h = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
    if let Some(n) = name {
        h.push(("mcp-name", n));
    }
    h
}

/// Whether `s` is 32 lowercase hex digits (a session or stream id).
fn is_hex32(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Checks the priming event of a resumable stream and returns the stream id.
fn priming(e: &Event) -> String {
    let id = e.id.as_deref().expect("priming event has an id");
    let (stream, seq) = id.rsplit_once('_').expect("id is <stream>_<seq>");
    assert!(is_hex32(stream), "stream id {stream:?}");
    assert_eq!(seq, "0");
    assert_eq!(
        e,
        &Event {
            id: Some(format!("{stream}_0")),
            event: None,
            retry: Some("1000".into()),
            data: String::new(),
        }
    );
    stream.to_owned()
}

/// Asserts that `events` are `message` events `<stream>_<first_seq + i>` carrying these JSON
/// payloads, in order.
fn assert_messages(events: &[Event], stream: &str, first_seq: usize, expected: &[Value]) {
    assert_eq!(events.len(), expected.len(), "events: {events:#?}");
    for (i, (e, want)) in events.iter().zip(expected).enumerate() {
        assert_eq!(
            (e.id.as_deref(), e.event.as_deref(), e.retry.as_deref()),
            (
                Some(format!("{stream}_{}", first_seq + i).as_str()),
                Some("message"),
                None
            ),
            "event {i}"
        );
        assert_eq!(&parse(&e.data), want, "event {i}");
    }
}

/// Opens a session on the stateful group; returns its id.
async fn open_session(url: &str, version: &str) -> String {
    let (status, h, body) = post_json(url, &[], &initialize(1, version)).await;
    assert_eq!(status, 200);
    assert_eq!(body, ok(json!(1), session_initialize(version)));
    let sid = hdr(&h, "mcp-session-id")
        .expect("initialize returns mcp-session-id")
        .to_owned();
    assert!(is_hex32(&sid), "session id {sid:?}");
    sid
}

// ---------------------------------------------------------------------------------------------
// Handshake era, stateless group `mcp`
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn initialize_echoes_every_handshake_revision() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    for (i, v) in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
        .into_iter()
        .enumerate()
    {
        let id = i as i64 + 1;
        let (status, h, body) = post_json(&url, &[], &initialize(id, v)).await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(hdr(&h, "content-type"), Some("application/json"));
        assert_eq!(hdr(&h, "mcp-session-id"), None, "stateless: no session");
        assert_eq!(body, ok(json!(id), initialize_result(v)), "{v}");
    }
}

#[tokio::test]
async fn initialize_counter_offers_latest_handshake_revision() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    for v in [MODERN, "2099-01-01", "banana"] {
        let (status, h, body) = post_json(&url, &[], &initialize(7, v)).await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(hdr(&h, "mcp-session-id"), None);
        assert_eq!(body, ok(json!(7), initialize_result("2025-11-25")), "{v}");
    }
}

#[tokio::test]
async fn initialize_result_exact_bytes() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (status, _, text) = post(&url, &[], &initialize(1, "2025-06-18").to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(
        text,
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"protocolVersion\":\"2025-06-18\",\
             \"capabilities\":{{\"tools\":{{\"listChanged\":false}},\
             \"resources\":{{\"subscribe\":false,\"listChanged\":false}},\
             \"prompts\":{{\"listChanged\":false}},\"completions\":{{}},\"logging\":{{}},\
             \"extensions\":{{\"io.modelcontextprotocol/ui\":\
             {{\"mimeTypes\":[\"text/html;profile=mcp-app\"]}},\
             \"io.modelcontextprotocol/skills\":{{}}}}}},\
             \"serverInfo\":{{\"name\":\"catalog\",\"version\":\"0.1.0\"}},\
             \"instructions\":\"{INSTRUCTIONS}\"}}}}"
        )
    );
}

#[tokio::test]
async fn initialized_notification_is_accepted_with_202() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (status, h, body) = post(
        &url,
        &[("mcp-protocol-version", "2025-11-25")],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(status, 202);
    assert_eq!(body, "");
    assert_eq!(hdr(&h, "content-length"), Some("0"));
    assert_eq!(hdr(&h, "mcp-session-id"), None);
}

#[tokio::test]
async fn ping_answers_empty_result() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (status, _, text) = post(&url, &[], r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#).await;
    assert_eq!(status, 200);
    assert_eq!(text, r#"{"jsonrpc":"2.0","id":"p","result":{}}"#);
}

fn ping_tool() -> Value {
    json!({
        "name": "Catalog.ping",
        "title": "Ping.",
        "description": "Ping.",
        "inputSchema": {
            "$schema": DIALECT,
            "type": "object",
            "properties": {"who": {"type": "string", "description": "Who is pinging", "default": "x"}},
            "additionalProperties": false
        },
        "outputSchema": {
            "$schema": DIALECT,
            "type": "object",
            "properties": {"result": {"type": "string"}},
            "required": ["result"]
        }
    })
}

fn product_def() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer", "description": "Its id.", "minimum": 0, "maximum": u64::MAX},
            "name": {"type": "string", "description": "Its name."}
        },
        "required": ["id", "name"],
        "description": "A product."
    })
}

fn search_tool() -> Value {
    json!({
        "name": "Catalog.search",
        "title": "Search products by name.",
        "description": "Search products by name.\n\nReturns up to limit products, the most relevant first.",
        "inputSchema": {
            "$schema": DIALECT,
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Search text"},
                "limit": {
                    "type": "integer", "minimum": 0, "maximum": u32::MAX,
                    "description": "How many products at most", "default": 10
                }
            },
            "required": ["query"],
            "additionalProperties": false
        },
        "outputSchema": {
            "$schema": DIALECT,
            "type": "object",
            "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Product"}}},
            "required": ["result"],
            "$defs": {"Product": product_def()}
        },
        "annotations": {"readOnlyHint": true, "idempotentHint": true}
    })
}

const MCP_TOOLS: [&str; 6] = [
    "Catalog.get",
    "Catalog.ping",
    "Catalog.pitch",
    "Catalog.search",
    "Catalog.tree",
    "Jobs.run",
];

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("tool {name} not listed"))
}

#[tokio::test]
async fn tools_list_exact_tools_sorted_without_rpc_only_methods() {
    let server = examples::server().unwrap();
    let expected = mcp_tool_names(&server);
    let url = format!("{}/mcp/mcp/v1", serve_url(server).await);
    let (status, _, body) = post_json(
        &url,
        &[],
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], 2);
    let result = body["result"].as_object().unwrap();
    assert_eq!(
        result.keys().collect::<Vec<_>>(),
        ["tools"],
        "one page, no nextCursor"
    );
    let tools = result["tools"].as_array().unwrap();
    let names = tool_names(tools);
    assert_eq!(names, expected, "sorted, and no Bad:ping / Chaos.panic");
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert_eq!(tool(tools, "Catalog.ping"), &ping_tool());
    let search = tool(tools, "Catalog.search").as_object().unwrap();
    assert_eq!(
        search.keys().collect::<Vec<_>>(),
        [
            "name",
            "title",
            "description",
            "inputSchema",
            "outputSchema",
            "annotations"
        ]
    );
    assert_eq!(
        search["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true})
    );
    assert_eq!(search["outputSchema"], search_tool()["outputSchema"]);
    // Every tool has a non-empty description and an object inputSchema.
    for t in tools {
        assert!(!t["description"].as_str().unwrap().is_empty(), "{t}");
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert_eq!(t["inputSchema"]["$schema"], DIALECT, "{t}");
    }
}

#[tokio::test]
async fn tools_list_exact_untranslated_tools() {
    // Without translation files, titles and descriptions come from the doc comments.
    let url = format!(
        "{}/mcp/mcp/v1",
        serve_url(untranslated().build().unwrap()).await
    );
    let (status, _, body) = post_json(
        &url,
        &[],
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    )
    .await;
    assert_eq!(status, 200);
    let tools = body["result"]["tools"].as_array().unwrap();
    assert_eq!(tool(tools, "Catalog.ping"), &ping_tool());
    assert_eq!(tool(tools, "Catalog.search"), &search_tool());
}

#[tokio::test]
async fn tools_list_schema_dialect_can_be_switched_off() {
    let base = serve_url(example_prod().mcp_schema_dialect(false).build().unwrap()).await;
    let url = format!("{base}/mcp/mcp/v1");
    let (_, _, body) = post_json(
        &url,
        &[],
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    )
    .await;
    let mut want = ping_tool();
    want["inputSchema"]
        .as_object_mut()
        .unwrap()
        .remove("$schema");
    want["outputSchema"]
        .as_object_mut()
        .unwrap()
        .remove("$schema");
    assert_eq!(
        tool(body["result"]["tools"].as_array().unwrap(), "Catalog.ping"),
        &want
    );
}

#[tokio::test]
async fn tools_list_pagination() {
    let server = example_prod().mcp_page_size(2).build().unwrap();
    let expected = mcp_tool_names(&server);
    let url = format!("{}/mcp/mcp/v1", serve_url(server).await);
    let list = |id: i64, cursor: Option<&str>| match cursor {
        None => json!({"jsonrpc":"2.0","id":id,"method":"tools/list"}),
        Some(c) => json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":{"cursor":c}}),
    };

    let (s, _, p1) = post_json(&url, &[], &list(1, None)).await;
    assert_eq!(s, 200);
    let r1 = &p1["result"];
    assert_eq!(
        tool_names(r1["tools"].as_array().unwrap()),
        ["Catalog.get", "Catalog.ping"]
    );
    assert_eq!(
        r1.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["tools", "nextCursor"]
    );
    let c1 = r1["nextCursor"].as_str().unwrap().to_owned();

    let (_, _, p2) = post_json(&url, &[], &list(2, Some(&c1))).await;
    let r2 = &p2["result"];
    assert_eq!(
        tool_names(r2["tools"].as_array().unwrap()),
        ["Catalog.pitch", "Catalog.search"]
    );
    assert_eq!(
        r2.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["tools", "nextCursor"]
    );

    // Follow nextCursor to the end: every tool once, in order, full pages but the last.
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        pages += 1;
        let (status, _, page) = post_json(&url, &[], &list(pages, cursor.as_deref())).await;
        assert_eq!(status, 200);
        assert_eq!(page["id"], pages);
        let r = page["result"].as_object().unwrap();
        let names = tool_names(r["tools"].as_array().unwrap());
        match r.get("nextCursor") {
            Some(c) => {
                assert_eq!(names.len(), 2);
                assert_eq!(r.keys().collect::<Vec<_>>(), ["tools", "nextCursor"]);
                let c = c.as_str().unwrap().to_owned();
                assert_ne!(Some(&c), cursor.as_ref());
                cursor = Some(c);
            }
            None => {
                assert!((1..=2).contains(&names.len()));
                assert_eq!(
                    r.keys().collect::<Vec<_>>(),
                    ["tools"],
                    "last page has no nextCursor"
                );
                all.extend(names);
                break;
            }
        }
        all.extend(names);
        assert!(pages < 100);
    }
    assert_eq!(all, expected);
    assert_eq!(pages as usize, expected.len().div_ceil(2));

    // A stable cursor: asking again gives the same page.
    let (_, _, again) = post_json(&url, &[], &list(2, Some(&c1))).await;
    assert_eq!(again, p2);

    // `cursor: null` is the first page.
    let (_, _, null) = post_json(
        &url,
        &[],
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":null}}),
    )
    .await;
    assert_eq!(null, p1);

    // Bad cursors: garbage, not base64 of a page start, past the end.
    for c in ["bogus", "MQ==", "MTAw", "", "MA=="] {
        let (s, _, body) = post_json(&url, &[], &list(9, Some(c))).await;
        assert_eq!(s, 200, "{c:?}");
        assert_eq!(
            body,
            err(
                json!(9),
                -32602,
                &format!("Invalid value for pagination parameter \"cursor\": \"{c}\"")
            ),
            "{c:?}"
        );
    }
}

#[tokio::test]
async fn tools_call_success_exact() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (status, h, text) = post(
        &url,
        &[],
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Catalog.ping","arguments":{"who":"x"}}}"#,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"pong, x\""}],"structuredContent":{"result":"pong, x"},"isError":false}}"#
    );

    let (_, _, body) = post_json(&url, &[], &call(4, "Catalog.ping", json!({"who": "Ann"}))).await;
    assert_eq!(body, ok(json!(4), pong("Ann")));

    let (_, _, body) = post_json(
        &url,
        &[],
        &call(5, "Catalog.search", json!({"query": "mug", "limit": 2})),
    )
    .await;
    let hits = json!([{"id": 5, "name": "Mug rack"}, {"id": 1, "name": "Red mug"}]);
    assert_eq!(
        body,
        ok(
            json!(5),
            json!({
                "content": [{"type": "text", "text": hits.to_string()}],
                "structuredContent": {"result": hits},
                "isError": false
            })
        )
    );
}

#[tokio::test]
async fn tools_call_without_arguments_uses_empty_object() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    for params in [
        json!({"name": "Catalog.ping"}),
        json!({"name": "Catalog.ping", "arguments": null}),
        json!({"name": "Catalog.ping", "arguments": {}}),
    ] {
        let req = json!({"jsonrpc":"2.0","id":"a","method":"tools/call","params":params});
        let (status, _, body) = post_json(&url, &[], &req).await;
        assert_eq!(status, 200);
        assert_eq!(body, ok(json!("a"), pong("x")), "{params}");
    }
}

#[tokio::test]
async fn tools_call_method_error_is_tool_error() {
    let base = serve_url(example_prod().build().unwrap()).await;
    let url = format!("{base}/mcp/mcp/v1");
    let (status, _, body) = post_json(&url, &[], &call(6, "Catalog.get", json!({"id": 99}))).await;
    assert_eq!(status, 200);
    let error = json!({
        "code": -32404,
        "message": "Product 99 not found",
        "data": {"exception": "examples::catalog::CatalogError"}
    });
    assert_eq!(
        body,
        ok(
            json!(6),
            json!({
                "content": [{"type": "text", "text": error.to_string()}],
                "isError": true
            })
        )
    );
}

const SEARCH_INVALID_MESSAGE: &str = "Invalid parameters for tool 'Catalog.search': \
     Property '/limit': Parameter \"limit\" must be of type integer, string given; \
     Property '/query': Required parameter \"query\" not passed";

#[tokio::test]
async fn tools_call_invalid_arguments_is_jsonrpc_error_by_default() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (status, _, body) =
        post_json(&url, &[], &call(7, "Catalog.search", json!({"limit": "a"}))).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        err_data(
            json!(7),
            -32602,
            SEARCH_INVALID_MESSAGE,
            json!({"validation_errors": [
                {"pointer": "/limit", "keyword": "type",
                 "message": "Parameter \"limit\" must be of type integer, string given"},
                {"pointer": "/query", "keyword": "required",
                 "message": "Required parameter \"query\" not passed"}
            ]})
        )
    );

    // An unknown argument is refused too (additionalProperties: false).
    let (_, _, body) = post_json(
        &url,
        &[],
        &call(8, "Catalog.ping", json!({"who": "x", "extra": 1})),
    )
    .await;
    assert_eq!(
        body,
        err_data(
            json!(8),
            -32602,
            "Invalid parameters for tool 'Catalog.ping': Property '/extra': Unknown parameter \"extra\"",
            json!({"validation_errors": [{"pointer": "/extra", "keyword": "additionalProperties",
                "message": "Unknown parameter \"extra\""}]})
        )
    );

    // More than three violations: three are named, then a count.
    let (_, _, body) = post_json(
        &url,
        &[],
        &call(9, "Catalog.ping", json!({"who": 1, "a": 1, "b": 2, "c": 3})),
    )
    .await;
    assert_eq!(body["error"]["code"], -32602);
    assert_eq!(
        body["error"]["data"]["validation_errors"]
            .as_array()
            .unwrap()
            .len(),
        4,
        "{body}"
    );
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Invalid parameters for tool 'Catalog.ping': Property '/")
            && message.ends_with("; ...and more errors."),
        "{message}"
    );
    assert_eq!(message.matches("Property '/").count(), 3, "{message}");

    // Past 20 violations, one last entry counts the rest: the data stays small.
    let mut args = serde_json::Map::new();
    for i in 0..500 {
        args.insert(format!("x{i:03}"), json!(i));
    }
    let (_, _, body) = post_json(&url, &[], &call(10, "Catalog.ping", Value::Object(args))).await;
    let errors = body["error"]["data"]["validation_errors"]
        .as_array()
        .unwrap();
    assert_eq!(errors.len(), 21, "{body}");
    assert_eq!(
        errors[0],
        json!({"pointer": "/x000", "keyword": "additionalProperties",
            "message": "Unknown parameter \"x000\""})
    );
    assert_eq!(
        errors[20],
        json!({"pointer": "", "keyword": "truncated", "message": "... and 480 more"})
    );
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Invalid parameters for tool 'Catalog.ping': Property '/x000'")
            && message.ends_with("; ...and more errors."),
        "{message}"
    );
}

#[tokio::test]
async fn tools_call_invalid_arguments_as_tool_error_option() {
    let server = example_prod()
        .mcp_invalid_arguments(InvalidArguments::ToolError)
        .build()
        .unwrap();
    let url = format!("{}/mcp/mcp/v1", serve_url(server).await);
    let (status, _, body) =
        post_json(&url, &[], &call(7, "Catalog.search", json!({"limit": "a"}))).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        ok(
            json!(7),
            json!({
                "content": [{"type": "text", "text": SEARCH_INVALID_MESSAGE}],
                "isError": true
            })
        )
    );
    // Valid calls are unaffected.
    let (_, _, body) = post_json(&url, &[], &call(8, "Catalog.ping", json!({}))).await;
    assert_eq!(body, ok(json!(8), pong("x")));
}

#[tokio::test]
async fn tools_call_unknown_tool() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    for name in ["Nope", "Bad:ping", "Chaos.panic", "test_simple_text"] {
        let (status, _, body) = post_json(&url, &[], &call(9, name, json!({}))).await;
        assert_eq!(status, 200);
        assert_eq!(
            body,
            err(json!(9), -32602, &format!("Unknown tool: {name}"))
        );
    }
}

#[tokio::test]
async fn tools_call_bad_params_shape() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let cases = [
        (
            json!({"name": "Catalog.ping", "arguments": [1, 2]}),
            "Invalid request parameters: `arguments` must be an object",
        ),
        (
            json!({"name": "Catalog.ping", "arguments": "who"}),
            "Invalid request parameters: `arguments` must be an object",
        ),
        (
            json!({"arguments": {}}),
            "Invalid request parameters: `name` must be a string",
        ),
        (
            json!({"name": 5}),
            "Invalid request parameters: `name` must be a string",
        ),
        (json!([1]), "Invalid request parameters"),
    ];
    for (params, message) in cases {
        let req = json!({"jsonrpc":"2.0","id":10,"method":"tools/call","params":params});
        let (status, _, body) = post_json(&url, &[], &req).await;
        assert_eq!(status, 200, "{params}");
        assert_eq!(body, err(json!(10), -32602, message), "{params}");
    }
    // No params at all.
    let (_, _, body) = post_json(
        &url,
        &[],
        &json!({"jsonrpc":"2.0","id":11,"method":"tools/call"}),
    )
    .await;
    assert_eq!(body, err(json!(11), -32602, "Invalid request parameters"));
}

#[tokio::test]
async fn unknown_method_is_32601_at_200() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (status, _, body) = post_json(
        &url,
        &[("mcp-protocol-version", "2025-11-25")],
        &json!({"jsonrpc":"2.0","id":12,"method":"sampling/createMessage"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        err_data(
            json!(12),
            -32601,
            "Method not found",
            json!("sampling/createMessage")
        )
    );
}

#[tokio::test]
async fn server_discover_on_handshake_era_is_method_not_found() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = json!({"jsonrpc":"2.0","id":6,"method":"server/discover"});
    for headers in [vec![], vec![("mcp-protocol-version", "2025-11-25")]] {
        let (status, h, body) = post_json(&url, &headers, &req).await;
        assert_eq!(status, 200, "{headers:?}");
        assert_eq!(hdr(&h, "content-type"), Some("application/json"));
        assert_eq!(
            body,
            err_data(
                json!(6),
                -32601,
                "Method not found",
                json!("server/discover")
            )
        );
    }
}

#[tokio::test]
async fn invalid_jsonrpc_envelopes_on_handshake_era() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (s, _, body) = post(&url, &[], r#"{"jsonrpc":"#).await;
    assert_eq!(s, 400);
    assert_eq!(parse(&body), err(Value::Null, -32700, "Parse error"));

    let (s, _, body) = post(&url, &[], r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#).await;
    assert_eq!(s, 400);
    assert_eq!(
        parse(&body),
        err(
            json!(1),
            -32600,
            "Invalid Request: `jsonrpc` must be \"2.0\""
        )
    );
}

// ---------------------------------------------------------------------------------------------
// Content tools of the stateful group `conformance`, over a session
// ---------------------------------------------------------------------------------------------

const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";
const WAV_SILENCE: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==";

#[tokio::test]
async fn conformance_content_tools_exact_blocks() {
    let base = serve_url(example_prod().build().unwrap()).await;
    let url = format!("{base}/mcp/conformance/v1");
    let sid = open_session(&url, "2025-11-25").await;
    let session = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let runtime_error = json!({
        "code": -32500,
        "message": "This tool intentionally returns an error for testing",
        "data": {"exception": "Ufo\\RpcError\\RpcRuntimeException"}
    });
    let cases = [
        (
            "test_simple_text",
            json!({"content": [{"type": "text", "text": "This is a simple text response for testing."}], "isError": false}),
        ),
        (
            "test_image_content",
            json!({"content": [{"type": "image", "data": PNG_1X1, "mimeType": "image/png"}], "isError": false}),
        ),
        (
            "test_audio_content",
            json!({"content": [{"type": "audio", "data": WAV_SILENCE, "mimeType": "audio/wav"}], "isError": false}),
        ),
        (
            "test_embedded_resource",
            json!({"content": [{"type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content."}}], "isError": false}),
        ),
        (
            "test_multiple_content_types",
            json!({"content": [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource",
                    "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}
            ], "isError": false}),
        ),
        (
            "test_error_handling",
            json!({"content": [{"type": "text", "text": runtime_error.to_string()}], "isError": true}),
        ),
    ];
    for (i, (name, result)) in cases.into_iter().enumerate() {
        let id = i as i64 + 10;
        // No `arguments` (as the conformance suite sends them).
        let req = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name}});
        let (status, h, text) = post(&url, &session, &req.to_string()).await;
        assert_eq!(status, 200, "{name}");
        // They answer at once without sending anything: plain JSON, even in a session.
        assert_eq!(hdr(&h, "content-type"), Some("application/json"), "{name}");
        assert_eq!(parse(&text), ok(json!(id), result), "{name}");
    }

    // A client that accepts only JSON gets a plain JSON answer on the session.
    let (status, h, body) = post_json(
        &url,
        &[
            ("mcp-session-id", sid.as_str()),
            ("accept", "application/json"),
        ],
        &json!({"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"test_simple_text"}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(
        body,
        ok(
            json!(20),
            json!({"content": [{"type": "text", "text": "This is a simple text response for testing."}], "isError": false})
        )
    );
}

#[tokio::test]
async fn conformance_tools_list_has_the_suite_tools() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let sid = open_session(&url, "2025-11-25").await;
    let (status, _, body) = post_json(
        &url,
        &[("mcp-session-id", &sid)],
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    )
    .await;
    assert_eq!(status, 200);
    let tools = body["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "confirm_delete",
            "failing_job",
            "greet",
            "json_schema_2020_12_tool",
            "multi_input",
            "protocol_error_job",
            "slow_compute",
            "test_audio_content",
            "test_custom_header",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "test_embedded_resource",
            "test_error_handling",
            "test_image_content",
            "test_input_required_result_capabilities",
            "test_input_required_result_elicitation",
            "test_input_required_result_list_roots",
            "test_input_required_result_multi_round",
            "test_input_required_result_multiple_inputs",
            "test_input_required_result_request_state",
            "test_input_required_result_sampling",
            "test_input_required_result_tampered_state",
            "test_logging_tool",
            "test_missing_capability",
            "test_multiple_content_types",
            "test_reconnection",
            "test_sampling",
            "test_simple_text",
            "test_streaming_elicitation",
            "test_tool_with_logging",
            "test_tool_with_progress",
            "test_tool_with_task",
            "test_trigger_prompt_change",
            "test_trigger_resource_update",
            "test_trigger_tool_change",
        ]
    );
    // ToolOutput results have no outputSchema; no-parameter tools take an empty closed object.
    assert_eq!(
        tool(tools, "test_simple_text"),
        &json!({
            "name": "test_simple_text",
            "title": "Returns simple text.",
            "description": "Returns simple text.",
            "inputSchema": {"$schema": DIALECT, "type": "object", "additionalProperties": false}
        })
    );
}

// ---------------------------------------------------------------------------------------------
// Modern era 2026-07-28 (stateless, on the same endpoint)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn modern_server_discover_exact() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = modern_req(json!("discover-1"), "server/discover", json!({}));
    let (status, h, body) = post_json(&url, &modern_headers("server/discover", None), &req).await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(hdr(&h, "mcp-session-id"), None);
    assert_eq!(
        body,
        ok(
            json!("discover-1"),
            json!({
                "resultType": "complete",
                "supportedVersions": [MODERN],
                "capabilities": modern_capabilities(),
                "instructions": INSTRUCTIONS,
                "ttlMs": 300_000,
                "cacheScope": "public",
                "_meta": result_meta()
            })
        )
    );
}

#[tokio::test]
async fn modern_server_discover_on_stateful_group_needs_no_session() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let req = modern_req(json!(1), "server/discover", json!({}));
    let (status, h, body) = post_json(&url, &modern_headers("server/discover", None), &req).await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "mcp-session-id"), None);
    assert_eq!(body["result"]["supportedVersions"], json!([MODERN]));
    assert_eq!(body["result"]["resultType"], "complete");
}

#[tokio::test]
async fn modern_tools_list_has_cache_members() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (_, _, legacy) = post_json(
        &url,
        &[],
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    )
    .await;
    let req = modern_req(json!(2), "tools/list", json!({}));
    let (status, h, body) = post_json(&url, &modern_headers("tools/list", None), &req).await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "mcp-session-id"), None);
    assert_eq!(
        body,
        ok(
            json!(2),
            json!({
                "resultType": "complete",
                "tools": legacy["result"]["tools"].clone(),
                "ttlMs": 300_000,
                "cacheScope": "public",
                "_meta": result_meta()
            })
        )
    );
    assert_eq!(
        tool(body["result"]["tools"].as_array().unwrap(), "Catalog.ping"),
        &ping_tool()
    );
}

/// A page is sent as the written opening plus the shared precomputed page: one body with an
/// exact `Content-Length` (not chunked), byte for byte what one buffer would hold.
#[tokio::test]
async fn tools_list_pages_are_sent_with_their_length() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let legacy = r#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/list"}"#;
    let (status, h, body) = post(&url, &[], legacy).await;
    assert_eq!(status, 200);
    assert!(
        body.starts_with(r#"{"jsonrpc":"2.0","id":"a\"b","result":{"tools":[{"#),
        "{body}"
    );
    assert!(body.ends_with("]}}"), "{body}");
    assert_eq!(
        hdr(&h, "content-length"),
        Some(body.len().to_string().as_str())
    );
    assert_eq!(hdr(&h, "transfer-encoding"), None);

    let req = modern_req(json!(9), "tools/list", json!({})).to_string();
    let (status, h, body) = post(&url, &modern_headers("tools/list", None), &req).await;
    assert_eq!(status, 200);
    assert!(
        body.starts_with(r#"{"jsonrpc":"2.0","id":9,"result":{"resultType":"complete","tools":[{"#),
        "{body}"
    );
    let meta = json!({ "_meta": result_meta() }).to_string();
    let tail = format!(r#","cacheScope":"public",{}}}}}"#, &meta[1..meta.len() - 1]);
    assert!(body.ends_with(&tail), "{body}");
    assert_eq!(
        hdr(&h, "content-length"),
        Some(body.len().to_string().as_str())
    );
    assert_eq!(hdr(&h, "transfer-encoding"), None);
}

#[tokio::test]
async fn modern_tools_list_pages_keep_cache_scope() {
    let base = serve_url(example_prod().mcp_page_size(2).build().unwrap()).await;
    let url = format!("{base}/mcp/mcp/v1");
    let req = modern_req(json!(1), "tools/list", json!({}));
    let (_, _, p1) = post_json(&url, &modern_headers("tools/list", None), &req).await;
    let r1 = p1["result"].as_object().unwrap();
    assert_eq!(
        r1.keys().collect::<Vec<_>>(),
        [
            "resultType",
            "tools",
            "nextCursor",
            "ttlMs",
            "cacheScope",
            "_meta"
        ]
    );
    let c = r1["nextCursor"].as_str().unwrap();
    let req = modern_req(json!(2), "tools/list", json!({"cursor": c}));
    let (_, _, p2) = post_json(&url, &modern_headers("tools/list", None), &req).await;
    assert_eq!(p2["result"]["cacheScope"], "public");
    assert_eq!(p2["result"]["ttlMs"], 300_000);
    assert_eq!(p2["result"]["tools"][0]["name"], "Catalog.pitch");

    let req = modern_req(json!(3), "tools/list", json!({"cursor": "bogus"}));
    let (status, _, body) = post_json(&url, &modern_headers("tools/list", None), &req).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(
            json!(3),
            -32602,
            "Invalid value for pagination parameter \"cursor\": \"bogus\""
        )
    );
}

#[tokio::test]
async fn modern_tools_call_success() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = modern_req(
        json!(3),
        "tools/call",
        json!({"name": "Catalog.ping", "arguments": {"who": "y"}}),
    );
    let (status, h, text) = post(
        &url,
        &modern_headers("tools/call", Some("Catalog.ping")),
        &req.to_string(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(hdr(&h, "mcp-session-id"), None);
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"\"pong, y\""}],"structuredContent":{"result":"pong, y"},"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"catalog","version":"0.1.0"}}}}"#
    );
}

#[tokio::test]
async fn modern_tools_call_tool_errors_at_200() {
    let base = serve_url(example_prod().build().unwrap()).await;
    let url = format!("{base}/mcp/mcp/v1");
    let req = modern_req(
        json!(4),
        "tools/call",
        json!({"name": "Catalog.get", "arguments": {"id": 99}}),
    );
    let (status, _, body) = post_json(
        &url,
        &modern_headers("tools/call", Some("Catalog.get")),
        &req,
    )
    .await;
    assert_eq!(status, 200);
    let error = json!({
        "code": -32404,
        "message": "Product 99 not found",
        "data": {"exception": "examples::catalog::CatalogError"}
    });
    assert_eq!(
        body,
        ok(
            json!(4),
            json!({
                "resultType": "complete",
                "content": [{"type": "text", "text": error.to_string()}],
                "isError": true,
                "_meta": result_meta()
            })
        )
    );
}

#[tokio::test]
async fn modern_tools_call_bad_arguments_are_400() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = modern_req(
        json!(5),
        "tools/call",
        json!({"name": "Catalog.ping", "arguments": [1, 2]}),
    );
    let (status, _, body) = post_json(
        &url,
        &modern_headers("tools/call", Some("Catalog.ping")),
        &req,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(
            json!(5),
            -32602,
            "Invalid request parameters: `arguments` must be an object"
        )
    );
}

#[tokio::test]
async fn modern_unsupported_version_w12() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = json!({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"1900-01-01",
        "io.modelcontextprotocol/clientCapabilities":{}}}});
    let (status, h, body) = post_json(
        &url,
        &[
            ("mcp-protocol-version", "1900-01-01"),
            ("mcp-method", "tools/list"),
        ],
        &req,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(
        body,
        err_data(
            json!(7),
            -32022,
            "Unsupported protocol version",
            json!({"supported": [MODERN], "requested": "1900-01-01"})
        )
    );
}

#[tokio::test]
async fn modern_missing_mcp_method_header_w13() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = modern_req(json!(8), "tools/list", json!({}));
    let (status, h, body) = post_json(&url, &[("mcp-protocol-version", MODERN)], &req).await;
    assert_eq!(status, 400);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(
        body,
        err(
            json!(8),
            -32020,
            "mcp-method header does not match the request body's method"
        )
    );
    // A wrong one is the same error.
    let (status, _, body) = post_json(&url, &modern_headers("tools/call", None), &req).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], -32020);
}

#[tokio::test]
async fn modern_mcp_name_mismatch_w13() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = modern_req(json!(9), "tools/call", json!({"name": "Catalog.ping"}));
    let want = err(
        json!(9),
        -32020,
        "mcp-name header does not match the request body's 'name' parameter",
    );
    let (status, _, body) = post_json(&url, &modern_headers("tools/call", Some("foo")), &req).await;
    assert_eq!(status, 400);
    assert_eq!(body, want);
    // Missing Mcp-Name on tools/call.
    let (status, _, body) = post_json(&url, &modern_headers("tools/call", None), &req).await;
    assert_eq!(status, 400);
    assert_eq!(body, want);
}

#[tokio::test]
async fn modern_repeated_routing_headers_are_32020() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = modern_req(json!(15), "tools/call", json!({"name": "Catalog.ping"}));
    let (status, _, body) = post_json(
        &url,
        &[
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "Catalog.ping"),
        ],
        &req,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(
            json!(15),
            -32020,
            "mcp-method header does not match the request body's method"
        )
    );
    let (status, _, body) = post_json(
        &url,
        &[
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-name", "Catalog.ping"),
            ("mcp-name", "Catalog.ping"),
        ],
        &req,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(
            json!(15),
            -32020,
            "mcp-name header does not match the request body's 'name' parameter"
        )
    );
}

#[tokio::test]

async fn modern_version_header_meta_mismatch_w13() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = json!({"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2025-11-25",
        "io.modelcontextprotocol/clientCapabilities":{}}}});
    let (status, _, body) = post_json(&url, &modern_headers("tools/list", None), &req).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(
            json!(10),
            -32020,
            "mcp-protocol-version header does not match the request envelope's protocol version"
        )
    );
}

#[tokio::test]
async fn modern_version_header_meta_mismatch_reverse() {
    // _meta says 2026-07-28, the header a handshake revision (or nothing): -32020.
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = modern_req(json!(10), "tools/list", json!({}));
    let want = err(
        json!(10),
        -32020,
        "mcp-protocol-version header does not match the request envelope's protocol version",
    );
    for headers in [
        vec![
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-method", "tools/list"),
        ],
        vec![("mcp-method", "tools/list")],
    ] {
        let (status, _, body) = post_json(&url, &headers, &req).await;
        assert_eq!(status, 400, "{headers:?}");
        assert_eq!(body, want, "{headers:?}");
    }
}

#[tokio::test]
async fn modern_meta_missing_client_capabilities_w13() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = json!({"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":MODERN,
        "io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"}}}});
    let (status, h, body) = post_json(&url, &modern_headers("tools/list", None), &req).await;
    assert_eq!(status, 400);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(
        body,
        err(
            json!(12),
            -32602,
            "params._meta is missing the required envelope key(s): io.modelcontextprotocol/clientCapabilities"
        )
    );
}

#[tokio::test]
async fn modern_mcp_name_base64_form_is_accepted() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = modern_req(json!(9), "tools/call", json!({"name": "Catalog.ping"}));
    // base64("Catalog.ping")
    let (status, _, body) = post_json(
        &url,
        &modern_headers("tools/call", Some("=?base64?Q2F0YWxvZy5waW5n?=")),
        &req,
    )
    .await;
    assert_eq!(status, 200);
    let mut want = pong("x");
    let m = want.as_object_mut().unwrap();
    let mut result = serde_json::Map::new();
    result.insert("resultType".into(), json!("complete"));
    result.extend(m.clone());
    result.insert("_meta".into(), result_meta());
    assert_eq!(body, ok(json!(9), Value::Object(result)));
}

#[tokio::test]
async fn modern_removed_ping_is_404() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = modern_req(json!(13), "ping", json!({}));
    let (status, _, body) = post_json(&url, &modern_headers("ping", None), &req).await;
    assert_eq!(status, 404);
    assert_eq!(
        body,
        err_data(json!(13), -32601, "Method not found", json!("ping"))
    );
}

#[tokio::test]
async fn modern_unknown_tool_is_400() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = modern_req(json!(14), "tools/call", json!({"name": "Nope"}));
    let (status, _, body) =
        post_json(&url, &modern_headers("tools/call", Some("Nope")), &req).await;
    assert_eq!(status, 400);
    assert_eq!(body, err(json!(14), -32602, "Unknown tool: Nope"));
}

#[tokio::test]
async fn modern_get_and_delete_are_405() {
    for group in ["mcp", "conformance"] {
        let url = format!("{}/mcp/{group}/v1", example().await);
        let h = [("mcp-protocol-version", MODERN)];
        for (status, headers, body) in [get(&url, &h).await, delete(&url, &h).await] {
            assert_eq!(status, 405, "{group}");
            assert_eq!(hdr(&headers, "allow"), Some("POST"), "{group}");
            assert_eq!(body, "");
        }
    }
}

#[tokio::test]
async fn modern_batch_is_400() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let batch = json!([modern_req(json!(1), "tools/list", json!({}))]);
    let (status, h, body) = post_json(&url, &modern_headers("tools/list", None), &batch).await;
    assert_eq!(status, 400);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(
        body,
        err(
            Value::Null,
            -32600,
            "Body must be a single JSON-RPC request or notification object"
        )
    );
}

#[tokio::test]
async fn modern_parse_error_is_400() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (status, h, body) = post(&url, &modern_headers("tools/list", None), r#"{"jsonrpc":"#).await;
    assert_eq!(status, 400);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(parse(&body), err(Value::Null, -32700, "Parse error"));
}

#[tokio::test]
async fn modern_notification_is_202() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let mut n = modern_req(
        Value::Null,
        "notifications/cancelled",
        json!({"requestId": 1}),
    );
    n.as_object_mut().unwrap().remove("id");
    let (status, _, body) = post(
        &url,
        &modern_headers("notifications/cancelled", None),
        &n.to_string(),
    )
    .await;
    assert_eq!(status, 202);
    assert_eq!(body, "");
}

// ---------------------------------------------------------------------------------------------
// Batches (2025-03-26 only)
// ---------------------------------------------------------------------------------------------

fn batch_body() -> Value {
    json!([
        call(1, "Catalog.ping", json!({"who": "a"})),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        call(2, "Catalog.ping", json!({"who": "b"}))
    ])
}

#[tokio::test]
async fn batch_on_2025_03_26_answers_in_order() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    for headers in [vec![], vec![("mcp-protocol-version", "2025-03-26")]] {
        let (status, h, body) = post_json(&url, &headers, &batch_body()).await;
        assert_eq!(status, 200, "{headers:?}");
        assert_eq!(hdr(&h, "content-type"), Some("application/json"));
        assert_eq!(
            body,
            json!([ok(json!(1), pong("a")), ok(json!(2), pong("b"))]),
            "{headers:?}"
        );
    }
    // Only notifications: 202.
    let (status, _, body) = post(
        &url,
        &[],
        r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
    )
    .await;
    assert_eq!(status, 202);
    assert_eq!(body, "");
}

#[tokio::test]
async fn batch_on_later_revisions_is_400() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let want = err(
        Value::Null,
        -32600,
        "Body must be a single JSON-RPC request or notification object",
    );
    for v in ["2025-06-18", "2025-11-25", "2024-11-05"] {
        let (status, _, body) =
            post_json(&url, &[("mcp-protocol-version", v)], &batch_body()).await;
        assert_eq!(status, 400, "{v}");
        assert_eq!(body, want, "{v}");
    }
    // An empty batch is refused on 2025-03-26 too.
    let (status, _, body) = post(&url, &[], "[]").await;
    assert_eq!(status, 400);
    assert_eq!(parse(&body), want);
}

#[tokio::test]
async fn batch_follows_the_session_revision() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text"}},
        {"jsonrpc":"2.0","method":"notifications/initialized"},
        {"jsonrpc":"2.0","id":2,"method":"ping"}
    ]);
    let old = open_session(&url, "2025-03-26").await;
    let (status, h, body) = post_json(&url, &[("mcp-session-id", &old)], &batch).await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(
        body,
        json!([
            ok(
                json!(1),
                json!({"content": [{"type": "text", "text": "This is a simple text response for testing."}], "isError": false})
            ),
            ok(json!(2), json!({}))
        ])
    );
    // initialize cannot be batched.
    let (status, _, body) = post_json(
        &url,
        &[("mcp-session-id", &old)],
        &json!([initialize(3, "2025-03-26")]),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!([err(
            json!(3),
            -32600,
            "Invalid Request: initialize cannot be batched"
        )])
    );

    let new = open_session(&url, "2025-11-25").await;
    let (status, _, body) = post_json(&url, &[("mcp-session-id", &new)], &batch).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(
            Value::Null,
            -32600,
            "Body must be a single JSON-RPC request or notification object"
        )
    );
    // A batch needs the session too.
    let (status, _, body) = post_json(&url, &[], &batch).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(Value::Null, -32600, "Bad Request: Missing session ID")
    );
}

// ---------------------------------------------------------------------------------------------
// Stateful group `conformance`: sessions and SSE
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn session_is_created_required_and_ended() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let sid = open_session(&url, "2025-11-25").await;

    let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"});
    let (status, h, text) = post(&url, &[], &list.to_string()).await;
    assert_eq!(status, 400);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: Missing session ID"}}"#
    );

    let not_found = err(Value::Null, -32600, "Session not found");
    let (status, _, body) = post_json(
        &url,
        &[("mcp-session-id", "0123456789abcdef0123456789abcdef")],
        &list,
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(body, not_found);

    // With the session: served.
    let (status, h, body) = post_json(&url, &[("mcp-session-id", &sid)], &list).await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(body["id"], 2);
    let mut expected: Vec<String> = examples::server()
        .unwrap()
        .registry()
        .catalog("conformance", 1)
        .unwrap()
        .methods()
        .iter()
        .map(|m| m.name().to_owned())
        .collect();
    expected.sort();
    assert_eq!(
        tool_names(body["result"]["tools"].as_array().unwrap()),
        expected
    );

    // notifications/initialized on the session: 202.
    let (status, _, body) = post(
        &url,
        &[
            ("mcp-session-id", &sid),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(status, 202);
    assert_eq!(body, "");

    // A second session is a different id.
    let other = open_session(&url, "2025-03-26").await;
    assert_ne!(other, sid);

    // DELETE ends it; then it is unknown.
    let (status, _, body) = delete(&url, &[("mcp-session-id", &sid)]).await;
    assert_eq!(status, 200);
    assert_eq!(body, "");
    let (status, _, body) = post_json(&url, &[("mcp-session-id", &sid)], &list).await;
    assert_eq!(status, 404);
    assert_eq!(body, not_found);
    let (status, _, body) = delete(&url, &[("mcp-session-id", &sid)]).await;
    assert_eq!(status, 404);
    assert_eq!(parse(&body), not_found);
    let (status, _, body) = get(&url, &[("mcp-session-id", &sid)]).await;
    assert_eq!(status, 404);
    assert_eq!(parse(&body), not_found);

    // The other session lives on.
    let (status, _, _) = post_json(&url, &[("mcp-session-id", &other)], &list).await;
    assert_eq!(status, 200);

    // DELETE without a session id.
    let (status, _, body) = delete(&url, &[]).await;
    assert_eq!(status, 400);
    assert_eq!(
        parse(&body),
        err(Value::Null, -32600, "Bad Request: Missing session ID")
    );
}

#[tokio::test]
async fn session_ping_and_server_discover_legacy() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let sid = open_session(&url, "2025-11-25").await;
    let h = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let (status, _, body) =
        post_json(&url, &h, &json!({"jsonrpc":"2.0","id":1,"method":"ping"})).await;
    assert_eq!(status, 200);
    assert_eq!(body, ok(json!(1), json!({})));
    let (status, _, body) = post_json(
        &url,
        &h,
        &json!({"jsonrpc":"2.0","id":6,"method":"server/discover"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        err_data(
            json!(6),
            -32601,
            "Method not found",
            json!("server/discover")
        )
    );
}

#[tokio::test]
async fn session_tools_call_answers_at_once_in_json_and_on_sse_with_priming_when_it_waits() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let sid = open_session(&url, "2025-11-25").await;
    let headers = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    // Answered on its first poll, with nothing sent before: JSON, nothing to resume.
    let req =
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_simple_text"}});
    let (status, h, text) = post(&url, &headers, &req.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(hdr(&h, "mcp-session-id"), None);
    assert_eq!(
        parse(&text),
        ok(
            json!(3),
            json!({"content": [{"type": "text", "text": "This is a simple text response for testing."}], "isError": false})
        )
    );

    // Still running after its first poll: a resumable stream, primed.
    let req = json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{
        "name":"slow_compute","arguments":{"seconds":1,"label":"waited"}}});
    let (status, h, text) = post(&url, &headers, &req.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("text/event-stream"));
    assert_eq!(hdr(&h, "cache-control"), Some("no-cache, no-transform"));
    assert_eq!(hdr(&h, "x-accel-buffering"), Some("no"));
    assert_eq!(hdr(&h, "mcp-session-id"), None);
    let events = sse_events(&text);
    assert_eq!(events.len(), 2, "{text}");
    let stream = priming(&events[0]);
    assert_ne!(stream, sid, "stream ids are not session ids");
    // The raw frames exactly.
    let data = events[1].data.clone();
    assert_eq!(
        text,
        format!(
            "id: {stream}_0\nretry: 1000\ndata: \n\nid: {stream}_1\nevent: message\ndata: {data}\n\n"
        )
    );
    assert_eq!(
        parse(&data),
        ok(
            json!(4),
            json!({"content": [{"type": "text", "text": "waited: computed in 1 s"}], "isError": false})
        )
    );
}

#[tokio::test]
async fn session_progress_notifications_precede_the_response() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let sid = open_session(&url, "2025-11-25").await;
    let req = json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{
        "name":"test_tool_with_progress","_meta":{"progressToken":"progress-test-1"}}});
    let (status, h, text) = post(
        &url,
        &[
            ("mcp-session-id", &sid),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        &req.to_string(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("text/event-stream"));
    let events = sse_events(&text);
    let stream = priming(&events[0]);
    let progress = |p: f64| {
        json!({"jsonrpc":"2.0","method":"notifications/progress",
            "params":{"progressToken":"progress-test-1","progress":p,"total":100.0}})
    };
    assert_messages(
        &events[1..],
        &stream,
        1,
        &[
            progress(0.0),
            progress(50.0),
            progress(100.0),
            ok(
                json!(4),
                json!({"content":[{"type":"text","text":"Progress test completed"}],"isError":false}),
            ),
        ],
    );
}

#[tokio::test]
async fn session_reconnection_resumes_with_last_event_id() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let sid = open_session(&url, "2025-11-25").await;
    let req =
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_reconnection"}});
    let (status, h, text) = post(
        &url,
        &[
            ("mcp-session-id", &sid),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        &req.to_string(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("text/event-stream"));
    // The server closed the stream after the priming event.
    let events = sse_events(&text);
    assert_eq!(events.len(), 1, "{text}");
    let stream = priming(&events[0]);
    let last = events[0].id.clone().unwrap();

    // GET with Last-Event-ID of a stream of another session: not resumed.
    let other = open_session(&url, "2025-11-25").await;
    let (status, _, _) = get(
        &url,
        &[("mcp-session-id", &other), ("last-event-id", &last)],
    )
    .await;
    assert_eq!(status, 404);

    let (status, h, text) = get(&url, &[("mcp-session-id", &sid), ("last-event-id", &last)]).await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("text/event-stream"));
    let events = sse_events(&text);
    assert_messages(
        &events,
        &stream,
        1,
        &[ok(
            json!(5),
            json!({"content":[{"type":"text","text":"Reconnection test completed"}],"isError":false}),
        )],
    );

    // Resuming again after the last event: an empty, finished stream.
    let (status, _, text) = get(
        &url,
        &[
            ("mcp-session-id", &sid),
            ("last-event-id", &format!("{stream}_1")),
        ],
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(text, "");
}

#[tokio::test]
async fn session_get_needs_sse_and_unknown_streams_are_404() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let sid = open_session(&url, "2025-11-25").await;
    // A GET that cannot take an event stream: 406.
    let json_only = [
        ("mcp-session-id", sid.as_str()),
        ("accept", "application/json"),
    ];
    let (status, _, body) = get(&url, &json_only).await;
    assert_eq!(status, 406);
    assert_eq!(body, "");
    // An unknown Last-Event-ID names no stream: 404.
    let (status, _, body) = get(
        &url,
        &[("mcp-session-id", &sid), ("last-event-id", "nope_3")],
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(parse(&body), err(Value::Null, -32600, "Stream not found"));
    // Without a session: 400.
    let (status, _, body) = get(&url, &[]).await;
    assert_eq!(status, 400);
    assert_eq!(
        parse(&body),
        err(Value::Null, -32600, "Bad Request: Missing session ID")
    );
}

#[tokio::test]
async fn stateless_group_get_and_delete_are_405() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    for (status, h, body) in [get(&url, &[]).await, delete(&url, &[]).await] {
        assert_eq!(status, 405);
        assert_eq!(hdr(&h, "allow"), Some("POST"));
        assert_eq!(body, "");
    }
}

#[tokio::test]
async fn stateless_progress_token_answers_on_plain_sse() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let req = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"Jobs.run","arguments":{"steps":2,"step_ms":1},"_meta":{"progressToken":"p1"}}});
    let (status, h, text) = post(&url, &[], &req.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("text/event-stream"));
    let events = sse_events(&text);
    // No session: events without ids and no priming event.
    let progress = |i: f64| {
        json!({"jsonrpc":"2.0","method":"notifications/progress","params":{
            "progressToken":"p1","progress":i,"total":2.0,"message":format!("step {i} of 2")}})
    };
    let report = json!({"steps": 2});
    let want = [
        progress(1.0),
        progress(2.0),
        ok(
            json!(1),
            json!({"content":[{"type":"text","text":report.to_string()}],
                "structuredContent":{"result":report},"isError":false}),
        ),
    ];
    assert_eq!(events.len(), want.len(), "{text}");
    for (e, w) in events.iter().zip(&want) {
        assert_eq!(
            (e.id.as_deref(), e.event.as_deref(), e.retry.as_deref()),
            (None, Some("message"), None)
        );
        assert_eq!(&parse(&e.data), w);
    }
}

// ---------------------------------------------------------------------------------------------
// Security and limits
// ---------------------------------------------------------------------------------------------

fn init_body() -> String {
    initialize(1, "2025-11-25").to_string()
}

#[tokio::test]
async fn foreign_host_is_421() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (status, _, body) = post(&url, &[("host", "evil.example.com")], &init_body()).await;
    assert_eq!(status, 421);
    assert_eq!(body, "Invalid Host header");
    let (status, _, _) = get(&url, &[("host", "evil.example.com:80")]).await;
    assert_eq!(status, 421);
}

#[tokio::test]
async fn foreign_origin_is_403() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    for origin in ["http://evil.example.com", "http://evil.example", "null"] {
        let (status, _, body) = post(&url, &[("origin", origin)], &init_body()).await;
        assert_eq!(status, 403, "{origin}");
        assert_eq!(body, "Invalid Origin header", "{origin}");
    }
    // Host and Origin both foreign (the conformance dns-rebinding check): 4xx.
    let (status, _, _) = post(
        &url,
        &[
            ("host", "evil.example.com"),
            ("origin", "http://evil.example.com"),
        ],
        &init_body(),
    )
    .await;
    assert_eq!(status, 421, "Host is checked first");
}

#[tokio::test]
async fn local_origin_passes() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1:8080",
        "https://localhost",
    ] {
        let (status, _, body) = post(&url, &[("origin", origin)], &init_body()).await;
        assert_eq!(status, 200, "{origin}");
        assert_eq!(parse(&body), ok(json!(1), initialize_result("2025-11-25")));
    }
    let (status, _, _) = post(&url, &[("host", "localhost:1234")], &init_body()).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn non_json_content_type_is_415() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (status, _, body) = post(&url, &[("content-type", "text/plain")], &init_body()).await;
    assert_eq!(status, 415);
    assert_eq!(body, "Content-Type must be application/json");
    let (status, _, _) = post(
        &url,
        &[("content-type", "application/json; charset=utf-8")],
        &init_body(),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn accept_without_json_or_sse_is_406() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (status, _, body) = post(&url, &[("accept", "text/html")], &init_body()).await;
    assert_eq!(status, 406);
    assert_eq!(body, "");
}

#[tokio::test]
async fn body_over_limit_is_413() {
    let server = example_prod().body_bytes(256).build().unwrap();
    let url = format!("{}/mcp/mcp/v1", serve_url(server).await);
    let big = call(1, "Catalog.ping", json!({"who": "w".repeat(300)})).to_string();
    let (status, _, body) = post(&url, &[], &big).await;
    assert_eq!(status, 413);
    assert_eq!(
        body,
        "Failed to buffer the request body: length limit exceeded"
    );
    // Under the limit: served.
    let (status, _, body) = post(&url, &[], &init_body()).await;
    assert_eq!(status, 200);
    assert_eq!(parse(&body), ok(json!(1), initialize_result("2025-11-25")));
}

#[tokio::test]
async fn host_policy_any_lets_foreign_hosts_through() {
    let server = example_prod()
        .allowed_hosts(HostPolicy::any())
        .build()
        .unwrap();
    let url = format!("{}/mcp/mcp/v1", serve_url(server).await);
    let (status, _, body) = post(
        &url,
        &[
            ("host", "evil.example.com"),
            ("origin", "http://evil.example.com"),
        ],
        &init_body(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(parse(&body), ok(json!(1), initialize_result("2025-11-25")));
}

#[tokio::test]
async fn host_policy_only_allows_named_hosts() {
    let server = example_prod()
        .allowed_hosts(HostPolicy::only(["mcp.example.com"]))
        .build()
        .unwrap();
    let url = format!("{}/mcp/mcp/v1", serve_url(server).await);
    let (status, _, _) = post(&url, &[("host", "mcp.example.com:443")], &init_body()).await;
    assert_eq!(status, 200);
    let (status, _, _) = post(&url, &[], &init_body()).await;
    assert_eq!(status, 421, "127.0.0.1 is not in the list");
}

// ---------------------------------------------------------------------------------------------
// The run-time tool-name check
// ---------------------------------------------------------------------------------------------

fn bad_ping(_: RequestContext, _: Params) -> Result<Output, RpcError> {
    Output::json(&"x")
}

const G: ApiGroup = ApiGroup::mcp("g");

static BAD: MethodDef = MethodDef {
    name: "Bad:ping",
    groups: &[G],
    since: 1,
    removed_in: None,
    docs: "Ping.",
    params: &[ParamDef {
        name: "who",
        description: "Who is pinging",
        kind: ParamKind::Optional,
        schema: |g| g.subschema_for::<String>(),
        constraints: "",
    }],
    annotations: ToolAnnotations::NONE,
    output_schema: |_| None,
    handler: Handler::Sync(bad_ping),
    cache: None,
    lock: None,
    rate_limit: None,
    task: mcp_runtime::record::TaskSupport::Forbidden,
    retry: true,
    transform: None,
    location: SourceLocation {
        file: "tests/tests/mcp.rs",
        line: 1,
        rust_path: "mcp::bad_ping",
    },
    states: &[],
    scopes: &[],
    app: None,
};

async fn bad_server(env: Environment) -> String {
    let server = Server::builder()
        .without_registered_methods()
        .method(&BAD)
        .env(env)
        .build()
        .unwrap();
    serve_url(server).await
}

async fn assert_every_mcp_request_fails(base: &str, message: &str) {
    let url = format!("{base}/mcp/g/v1");
    let want = err(Value::Null, -32603, message);
    let requests = [
        initialize(1, "2025-11-25"),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        json!({"jsonrpc":"2.0","id":3,"method":"ping"}),
        modern_req(json!(4), "server/discover", json!({})),
    ];
    for req in &requests {
        let (status, h, body) = post_json(&url, &[], req).await;
        assert_eq!(status, 500, "{req}");
        assert_eq!(hdr(&h, "content-type"), Some("application/json"));
        assert_eq!(body, want, "{req}");
    }
    let (status, _, body) =
        post_json(&url, &modern_headers("server/discover", None), &requests[3]).await;
    assert_eq!(status, 500);
    assert_eq!(body, want);
    for (status, _, body) in [get(&url, &[]).await, delete(&url, &[]).await] {
        assert_eq!(status, 500);
        assert_eq!(parse(&body), want);
    }
}

#[tokio::test]
async fn invalid_tool_name_fails_every_mcp_request_dev_details() {
    let base = bad_server(Environment::DEV).await;
    let message = "MCP group `g` has methods with invalid tool names: \
                   `Bad:ping` (mcp::bad_ping (tests/tests/mcp.rs:1)) does not match ^[a-zA-Z0-9_.-]{1,128}$";
    assert_every_mcp_request_fails(&base, message).await;

    // JSON-RPC still serves the method.
    let (status, _, body) = post(
        &format!("{base}/rpc/g/v1"),
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"Bad:ping"}"#,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(parse(&body), ok(json!(1), json!("x")));
}

#[tokio::test]
async fn invalid_tool_name_fails_every_mcp_request_prod_hides_details() {
    let base = bad_server(Environment::PROD).await;
    assert_every_mcp_request_fails(&base, "Internal Server Error").await;
    let (status, _, body) = post(
        &format!("{base}/rpc/g/v1"),
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"Bad:ping","params":{"who":"y"}}"#,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(parse(&body), ok(json!(1), json!("x")));
}

// ---------------------------------------------------------------------------------------------
// stdio
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn stdio_handshake_and_tools() {
    let server = examples::server().unwrap();
    let mut io = Stdio::start(&server, "mcp");

    let r = io.roundtrip(&initialize(1, "2025-06-18").to_string()).await;
    assert_eq!(r, ok(json!(1), initialize_live("2025-06-18")));

    // A notification gets no reply: the next line answers the next request.
    io.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;

    let r = io
        .roundtrip(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(r, ok(json!(2), json!({})));

    let r = io
        .roundtrip(&call(3, "Catalog.ping", json!({"who": "stdio"})).to_string())
        .await;
    assert_eq!(r, ok(json!(3), pong("stdio")));

    let r = io
        .roundtrip(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#)
        .await;
    let tools = r["result"]["tools"].as_array().unwrap();
    assert_eq!(tool_names(tools), mcp_tool_names(&server));
    assert_eq!(tool(tools, "Catalog.ping"), &ping_tool());

    let r = io.roundtrip(&call(5, "Nope", json!({})).to_string()).await;
    assert_eq!(r, err(json!(5), -32602, "Unknown tool: Nope"));

    // Blank lines are skipped.
    io.send("").await;
    let r = io
        .roundtrip(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#)
        .await;
    assert_eq!(r, ok(json!(6), json!({})));

    io.close().await;
}

#[tokio::test]
async fn stdio_counts_its_one_peer_against_a_rate_limit() {
    // `Mail.send`: 60 a minute, 10 at once, per caller; a stdio connection is one caller.
    let server = examples::builder().env(Environment::PROD).build().unwrap();
    let mut io = Stdio::start(&server, "mcp");
    io.roundtrip(&initialize(1, "2025-06-18").to_string()).await;
    io.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let mail = json!({"email": "ann@example.com", "subject": "Hi", "text": "0123456789"});
    for id in 2..=11 {
        let r = io
            .roundtrip(&call(id, "Mail.send", mail.clone()).to_string())
            .await;
        assert_eq!(r["result"]["isError"], false, "{r}");
    }
    let mut r = io.roundtrip(&call(12, "Mail.send", mail).to_string()).await;
    let ms = r["error"]["data"]["retryAfterMs"]
        .as_u64()
        .expect("retryAfterMs");
    assert!((1..=1000).contains(&ms), "{ms}");
    r["error"]["data"]["retryAfterMs"] = json!(0);
    assert_eq!(
        r,
        err_data(
            json!(12),
            -32429,
            &format!("Too many requests: `Mail.send` is rate limited; retry in {ms} ms"),
            json!({"exception": "Ufo\\RpcError\\RpcTooManyRequestsException", "retryAfterMs": 0})
        )
    );
    io.close().await;
}

#[tokio::test]
async fn stdio_modern_server_discover_and_tools_call() {
    let server = examples::server().unwrap();
    let mut io = Stdio::start(&server, "mcp");

    let r = io
        .roundtrip(&modern_req(json!("d"), "server/discover", json!({})).to_string())
        .await;
    assert_eq!(
        r,
        ok(
            json!("d"),
            json!({
                "resultType": "complete",
                "supportedVersions": [MODERN],
                "capabilities": modern_capabilities(),
                "instructions": INSTRUCTIONS,
                "ttlMs": 300_000,
                "cacheScope": "public",
                "_meta": result_meta()
            })
        )
    );

    let r = io
        .roundtrip(
            &modern_req(
                json!(2),
                "tools/call",
                json!({"name": "Catalog.ping", "arguments": {"who": "m"}}),
            )
            .to_string(),
        )
        .await;
    let mut result = serde_json::Map::new();
    result.insert("resultType".into(), json!("complete"));
    result.extend(pong("m").as_object().unwrap().clone());
    result.insert("_meta".into(), result_meta());
    assert_eq!(r, ok(json!(2), Value::Object(result)));

    let r = io
        .roundtrip(&modern_req(json!(3), "ping", json!({})).to_string())
        .await;
    assert_eq!(
        r,
        err_data(json!(3), -32601, "Method not found", json!("ping"))
    );

    let r = io
        .roundtrip(
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        )
        .await;
    assert_eq!(
        r,
        err_data(
            json!(4),
            -32022,
            "Unsupported protocol version",
            json!({"supported": [MODERN], "requested": "1900-01-01"})
        )
    );

    io.close().await;
}

#[tokio::test]
async fn stdio_parse_error_and_close() {
    let server = examples::server().unwrap();
    let mut io = Stdio::start(&server, "mcp");
    let r = io.roundtrip("this is not json").await;
    assert_eq!(r, err(Value::Null, -32700, "Parse error"));
    let r = io.roundtrip(r#"{"jsonrpc":"#).await;
    assert_eq!(r, err(Value::Null, -32700, "Parse error"));
    // The server keeps serving after a bad line.
    let r = io
        .roundtrip(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    assert_eq!(r, ok(json!(1), json!({})));
    io.close().await;
}

#[tokio::test]
async fn stdio_progress_notifications_precede_the_result() {
    let server = examples::server().unwrap();
    let mut io = Stdio::start(&server, "mcp");
    io.send(
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
            "name":"Jobs.run","arguments":{"steps":2,"step_ms":1},"_meta":{"progressToken":7}}})
        .to_string(),
    )
    .await;
    for i in [1.0, 2.0] {
        assert_eq!(
            parse(&io.recv().await),
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{
                "progressToken":7,"progress":i,"total":2.0,"message":format!("step {i} of 2")}})
        );
    }
    let report = json!({"steps": 2});
    assert_eq!(
        parse(&io.recv().await),
        ok(
            json!(1),
            json!({"content":[{"type":"text","text":report.to_string()}],
                "structuredContent":{"result":report},"isError":false})
        )
    );
    io.close().await;
}

#[tokio::test]
async fn stdio_returns_when_input_closes() {
    let server = examples::server().unwrap();
    let io = Stdio::start(&server, "mcp");
    io.close().await;
}

// ---------------------------------------------------------------------------------------------
// Session bounds
// ---------------------------------------------------------------------------------------------

/// Past the session cap, `initialize` is answered 503 without a session; an ended session
/// frees its place.
#[tokio::test]
async fn initialize_past_the_session_cap_ends_the_callers_oldest_session() {
    let sessions = mcp_runtime::mcp::MemorySessions::new(1, Duration::from_secs(3600));
    let server = example_prod()
        .session_store(std::sync::Arc::new(sessions))
        .build()
        .unwrap();
    let url = format!("{}/mcp/conformance/v1", serve_url(server).await);
    let old = open_session(&url, "2025-11-25").await;
    // The store is full: the caller's own session gives way, never a refusal.
    let new = open_session(&url, "2025-11-25").await;
    assert_ne!(old, new);
    let gone = [("mcp-session-id", old.as_str())];
    let (status, _, body) = post_json(
        &url,
        &gone,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    let (status, _, _) = delete(&url, &[("mcp-session-id", &new)]).await;
    assert_eq!(status, 200);
    open_session(&url, "2025-11-25").await;
}

#[tokio::test]
async fn a_session_belongs_to_the_endpoint_that_made_it() {
    let server = examples::builder()
        .env(mcp_runtime::Environment::PROD)
        .mcp_stateful("mcp")
        .build()
        .unwrap();
    let base = serve_url(server).await;
    let (conformance, mcp) = (
        format!("{base}/mcp/conformance/v1"),
        format!("{base}/mcp/mcp/v1"),
    );
    let sid = open_session(&conformance, "2025-11-25").await;
    let with = [("mcp-session-id", sid.as_str())];
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    // Another endpoint on the same store does not know it, nor can it end it.
    let (status, _, body) = post_json(&mcp, &with, &ping).await;
    assert_eq!(status, 404, "{body}");
    let (status, _, _) = delete(&mcp, &with).await;
    assert_eq!(status, 404);
    // Its own endpoint still serves it.
    let (status, _, body) = post_json(&conformance, &with, &ping).await;
    assert_eq!((status, &body["result"]), (200, &json!({})), "{body}");
}

// ---------------------------------------------------------------------------------------------
// Resources, prompts, completions, logging and change notices
// ---------------------------------------------------------------------------------------------

/// A modern request and its routing headers; returns status and body.
async fn modern(url: &str, method: &str, name: Option<&str>, params: Value) -> (u16, Value) {
    let (status, _, body) = post_json(
        url,
        &modern_headers(method, name),
        &modern_req(json!(1), method, params),
    )
    .await;
    (status, body)
}

/// A complete modern result: the members plus `resultType` and the `_meta` stamp.
fn complete(mut members: Value) -> Value {
    members["resultType"] = json!("complete");
    members["_meta"] = result_meta();
    ok(json!(1), members)
}

/// A request on a session.
async fn on_session(url: &str, sid: &str, id: i64, method: &str, params: Value) -> Value {
    let (status, _, body) = post_json(
        url,
        &[("mcp-session-id", sid)],
        &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
    )
    .await;
    assert_eq!(status, 200, "{method}: {body}");
    body
}

/// Reads server-sent events from a streaming response until `n` came (or the time is up).
async fn next_events(resp: &mut reqwest::Response, buf: &mut String, n: usize) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let done: Vec<Value> = buf
            .split("\n\n")
            .filter_map(|f| f.lines().find_map(|l| l.strip_prefix("data: ")))
            .map(parse)
            .collect();
        if done.len() >= n && buf.ends_with("\n\n") {
            buf.clear();
            return done;
        }
        let chunk = tokio::time::timeout_at(deadline, resp.chunk())
            .await
            .expect("events in time")
            .unwrap()
            .expect("the stream is open");
        buf.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

#[tokio::test]
async fn resources_are_listed_and_read_on_both_eras() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let hours = json!({
        "uri": "catalog://hours", "name": "hours", "title": "The store's opening hours.",
        "description": "The store's opening hours.", "mimeType": "text/plain"
    });
    let (status, body) = modern(&url, "resources/list", None, json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        complete(json!({
            "resources": [hours, shopping_skill_resource(), product_card()],
            "ttlMs": 300_000,
            "cacheScope": "public"
        }))
    );
    let (_, body) = modern(&url, "resources/templates/list", None, json!({})).await;
    assert_eq!(
        body,
        complete(json!({"resourceTemplates": [{
            "uriTemplate": "catalog://products/{id}", "name": "product",
            "title": "A product, by id.",
            "description": "A product, by id.\n\nThe product's id and name as JSON.",
            "mimeType": "application/json"
        }], "ttlMs": 300_000, "cacheScope": "public"}))
    );
    // A template variable binds the typed parameter; the result is JSON text.
    let uri = "catalog://products/2";
    let (_, body) = modern(&url, "resources/read", Some(uri), json!({"uri": uri})).await;
    assert_eq!(
        body,
        complete(
            json!({"contents": [{"uri": uri, "mimeType": "application/json",
            "text": "{\"id\":2,\"name\":\"Blue mug\"}"}], "ttlMs": 0, "cacheScope": "public"})
        )
    );
    // The handshake era: no resultType, no cache hints.
    let (status, _, body) = post_json(
        &url,
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "catalog://hours"}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        ok(
            json!(1),
            json!({"contents": [{"uri": "catalog://hours", "mimeType": "text/plain",
            "text": "Monday to Friday 9:00-18:00, Saturday 10:00-14:00, closed on Sunday."}]})
        )
    );
}

/// The list entry of the example's MCP App.
fn product_card() -> Value {
    json!({
        "uri": "ui://catalog/product-card", "name": "product-card", "title": "The product card.",
        "description": "The product card.\n\nAn MCP App: shows the product of a `Catalog.get` call.",
        "mimeType": "text/html;profile=mcp-app",
        "_meta": {"ui": {"prefersBorder": true}}
    })
}

/// The page of the product card as the example writes it in `lang` (`en` or `uk`).
fn product_card_page(lang: &str) -> String {
    let page = examples::catalog::product_card_page(Some(lang));
    // The page is the embedded file with the language's words in it.
    assert!(
        page.starts_with(&format!("<!DOCTYPE html>\n<html lang=\"{lang}\">")),
        "{page}"
    );
    assert!(!page.contains("{{"), "every placeholder is filled: {page}");
    page.to_owned()
}

#[tokio::test]
async fn an_app_is_listed_read_and_linked_on_both_eras() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let uri = "ui://catalog/product-card";
    // The tool names the app; the app is read with its `_meta.ui`, in the request's language.
    let (_, body) = modern(&url, "tools/list", None, json!({})).await;
    let tools = body["result"]["tools"].as_array().unwrap();
    assert_eq!(
        tool(tools, "Catalog.get")["_meta"],
        json!({"ui": {"resourceUri": uri}})
    );
    // Only the linked tool carries `_meta`.
    let with_meta: Vec<&Value> = tools.iter().filter(|t| t.get("_meta").is_some()).collect();
    assert_eq!(with_meta.len(), 1, "{with_meta:?}");
    let read = |lang: &str| {
        json!({"contents": [{
            "uri": uri, "mimeType": "text/html;profile=mcp-app", "text": product_card_page(lang),
            "_meta": {"ui": {"prefersBorder": true}}
        }]})
    };
    let (status, body) = modern(&url, "resources/read", Some(uri), json!({"uri": uri})).await;
    assert_eq!(status, 200);
    let mut modern_read = read("en");
    modern_read["ttlMs"] = json!(0);
    modern_read["cacheScope"] = json!("public");
    assert_eq!(body, complete(modern_read));
    // The handshake era, in Ukrainian: the page's own words follow `Accept-Language`.
    let req =
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}});
    let (status, h, body) = post_json(&url, &[("accept-language", "uk")], &req).await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-language"), Some("uk"));
    assert_eq!(body, ok(json!(1), read("uk")));
    let req = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (_, _, body) = post_json(&url, &[], &req).await;
    let tools = body["result"]["tools"].as_array().unwrap();
    assert_eq!(
        tool(tools, "Catalog.get")["_meta"],
        json!({"ui": {"resourceUri": uri}})
    );
    let req = json!({"jsonrpc": "2.0", "id": 3, "method": "resources/list"});
    let (_, _, body) = post_json(&url, &[], &req).await;
    assert_eq!(body["result"]["resources"][2], product_card());
}

#[tokio::test]
async fn a_group_without_apps_declares_no_apps_extension() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let (_, body) = modern(&url, "server/discover", None, json!({})).await;
    let extensions = &body["result"]["capabilities"]["extensions"];
    assert_eq!(extensions, &json!({"io.modelcontextprotocol/tasks": {}}));
}

/// The files of the example's shopping skill, as `examples/skills/shopping` holds them.
const SKILL_MD: &str = include_str!("../../examples/skills/shopping/SKILL.md");
const SKILL_SIZES: &str = include_str!("../../examples/skills/shopping/references/sizes.md");

/// `sha256:` and the hex SHA-256 of a text's bytes.
fn sha256(text: &str) -> String {
    use sha2::Digest as _;
    let hex: String = sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The `Skill` entry of the example's shopping skill (SEP-2640): its frontmatter as JSON, and
/// every file with its digest and size.
fn shopping_skill() -> Value {
    let root = "skill://catalog/shopping";
    json!({
        "uri": format!("{root}/SKILL.md"),
        "frontmatter": {
            "name": "shopping",
            "description": "Help a customer find, compare and buy products of this catalog, with its tools in the right order.",
            "license": "MIT",
            "metadata": {"version": "1.0"}
        },
        "resources": [
            {"uri": format!("{root}/SKILL.md"), "digest": sha256(SKILL_MD), "size": SKILL_MD.len()},
            {
                "uri": format!("{root}/references/sizes.md"),
                "digest": sha256(SKILL_SIZES),
                "size": SKILL_SIZES.len()
            }
        ]
    })
}

/// The `resources/list` entry of the shopping skill's `SKILL.md`.
fn shopping_skill_resource() -> Value {
    json!({
        "uri": "skill://catalog/shopping/SKILL.md", "name": "shopping",
        "description": "Help a customer find, compare and buy products of this catalog, with its tools in the right order.",
        "mimeType": "text/markdown", "size": SKILL_MD.len()
    })
}

#[tokio::test]
async fn skills_are_listed_got_and_read_on_both_eras() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let hints = |mut v: Value| {
        v["ttlMs"] = json!(300_000);
        v["cacheScope"] = json!("public");
        v
    };
    // 2026-07-28: one page of entries, with the lists' cache hints.
    let (status, body) = modern(&url, "skills/list", None, json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(body, complete(hints(json!({"skills": [shopping_skill()]}))));
    let uri = "skill://catalog/shopping/SKILL.md";
    let (_, body) = modern(&url, "skills/get", None, json!({"uri": uri})).await;
    assert_eq!(body, complete(hints(json!({"skill": shopping_skill()}))));
    // Its files are resources, read as the digests cover them.
    let (_, body) = modern(&url, "resources/read", Some(uri), json!({"uri": uri})).await;
    assert_eq!(
        body,
        complete(hints(json!({"contents": [
            {"uri": uri, "mimeType": "text/markdown", "text": SKILL_MD}
        ]})))
    );
    let sizes = "skill://catalog/shopping/references/sizes.md";
    let (_, body) = modern(&url, "resources/read", Some(sizes), json!({"uri": sizes})).await;
    assert_eq!(
        body["result"]["contents"],
        json!([{"uri": sizes, "mimeType": "text/markdown", "text": SKILL_SIZES}])
    );
    // The handshake era: the same entries, without cache hints.
    let req = |id: i64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let (status, _, body) = post_json(&url, &[], &req(1, "skills/list", json!({}))).await;
    assert_eq!(status, 200);
    assert_eq!(body, ok(json!(1), json!({"skills": [shopping_skill()]})));
    let (_, _, body) = post_json(&url, &[], &req(2, "skills/get", json!({"uri": uri}))).await;
    assert_eq!(body, ok(json!(2), json!({"skill": shopping_skill()})));
    let (_, _, body) = post_json(&url, &[], &req(3, "resources/read", json!({"uri": uri}))).await;
    assert_eq!(
        body,
        ok(
            json!(3),
            json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": SKILL_MD}]})
        )
    );
    // `SKILL.md` is listed among the resources, named and described by its frontmatter.
    let (_, _, body) = post_json(&url, &[], &req(4, "resources/list", json!({}))).await;
    assert_eq!(body["result"]["resources"][1], shopping_skill_resource());
    // stdio answers the same.
    let server = examples::server().unwrap();
    let mut io = Stdio::start(&server, "mcp");
    let r = io
        .roundtrip(&modern_req(json!("s"), "skills/get", json!({"uri": uri})).to_string())
        .await;
    let mut expected = hints(json!({"skill": shopping_skill()}));
    expected["resultType"] = json!("complete");
    expected["_meta"] = result_meta();
    assert_eq!(r, ok(json!("s"), expected));
    io.close().await;
}

const SKILL_MD_UK: &str = include_str!("../../examples/skills/shopping.uk/SKILL.md");

#[tokio::test]
async fn a_translated_skill_is_listed_got_and_read_in_the_request_s_language() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let uri = "skill://catalog/shopping/SKILL.md";
    let description = "Допомогти покупцеві знайти, порівняти й купити товари цього каталогу, викликаючи його інструменти в правильному порядку.";
    // The Ukrainian entry: its frontmatter, and the digests of the files a request in
    // Ukrainian reads (its own `SKILL.md`, the untranslated `sizes.md` as it is).
    let mut uk = shopping_skill();
    uk["frontmatter"]["description"] = json!(description);
    uk["resources"][0]["digest"] = json!(sha256(SKILL_MD_UK));
    uk["resources"][0]["size"] = json!(SKILL_MD_UK.len());
    let req = |id: i64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let in_uk = [("accept-language", "uk")];
    let (_, h, body) = post_json(&url, &in_uk, &req(1, "skills/list", json!({}))).await;
    assert_eq!(body, ok(json!(1), json!({"skills": [uk.clone()]})));
    assert_eq!(h["content-language"], "uk");
    let (_, _, body) = post_json(&url, &in_uk, &req(2, "skills/get", json!({"uri": uri}))).await;
    assert_eq!(body, ok(json!(2), json!({"skill": uk.clone()})));
    let (_, _, body) =
        post_json(&url, &in_uk, &req(3, "resources/read", json!({"uri": uri}))).await;
    assert_eq!(
        body["result"]["contents"],
        json!([{"uri": uri, "mimeType": "text/markdown", "text": SKILL_MD_UK}])
    );
    let sizes = "skill://catalog/shopping/references/sizes.md";
    let (_, _, body) = post_json(
        &url,
        &in_uk,
        &req(4, "resources/read", json!({"uri": sizes})),
    )
    .await;
    assert_eq!(body["result"]["contents"][0]["text"], SKILL_SIZES);
    let (_, _, body) = post_json(&url, &in_uk, &req(5, "resources/list", json!({}))).await;
    let mut resource = shopping_skill_resource();
    resource["description"] = json!(description);
    resource["size"] = json!(SKILL_MD_UK.len());
    assert_eq!(body["result"]["resources"][1], resource);
    // The same through the request's `_meta` language (SEP-2792), on 2026-07-28.
    let carried = json!({"uri": uri, "_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/acceptLanguage": "uk-UA"
    }});
    let (_, _, body) = post_json(
        &url,
        &modern_headers("skills/get", None),
        &json!({"jsonrpc": "2.0", "id": 6, "method": "skills/get", "params": carried}),
    )
    .await;
    assert_eq!(body["result"]["skill"], uk, "{body}");
    assert_eq!(
        body["result"]["_meta"]["io.modelcontextprotocol/contentLanguage"],
        "uk"
    );
    // Another language the server lacks: the skill as written.
    let in_de = [("accept-language", "de")];
    let (_, _, body) = post_json(&url, &in_de, &req(7, "skills/get", json!({"uri": uri}))).await;
    assert_eq!(body, ok(json!(7), json!({"skill": shopping_skill()})));
}

#[tokio::test]
async fn a_uri_that_names_no_skill_is_invalid_params() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    for uri in [
        "skill://catalog/nothing/SKILL.md",
        // A file of the skill, not its `SKILL.md`.
        "skill://catalog/shopping/references/sizes.md",
    ] {
        let (status, body) = modern(&url, "skills/get", None, json!({"uri": uri})).await;
        assert_eq!(status, 400);
        assert_eq!(
            body,
            err(json!(1), -32602, &format!("No skill is served at {uri}"))
        );
    }
    let (status, body) = modern(&url, "skills/get", None, json!({})).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(
            json!(1),
            -32602,
            "Invalid request parameters: `uri` must be a URI string"
        )
    );
    // A file the skill does not have is a resource that is not there.
    let uri = "skill://catalog/shopping/references/colours.md";
    let (_, body) = modern(&url, "resources/read", Some(uri), json!({"uri": uri})).await;
    assert_eq!(
        body,
        err_data(json!(1), -32602, "Resource not found", json!({"uri": uri}))
    );
    // A group without skills has no such methods.
    let url = url.replace("/mcp/mcp/", "/mcp/conformance/");
    let (_, body) = modern(&url, "skills/list", None, json!({})).await;
    assert_eq!(body["error"]["code"], -32601);
}

#[tokio::test]
async fn resource_errors_follow_the_revision() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    // Not found (no such URI, or the function's "not found"): -32602 with data.uri on
    // 2026-07-28, -32002 on the handshake era.
    for uri in ["catalog://nothing", "catalog://products/99"] {
        let (status, body) = modern(&url, "resources/read", Some(uri), json!({"uri": uri})).await;
        assert_eq!(status, 400);
        assert_eq!(
            body,
            err_data(json!(1), -32602, "Resource not found", json!({"uri": uri}))
        );
        let (_, _, body) = post_json(
            &url,
            &[],
            &json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}}),
        )
        .await;
        assert_eq!(
            body,
            err_data(json!(1), -32002, "Resource not found", json!({"uri": uri}))
        );
    }
    // A value the parameter's type refuses.
    let uri = "catalog://products/x";
    let (status, body) = modern(&url, "resources/read", Some(uri), json!({"uri": uri})).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(
            json!(1),
            -32602,
            "Invalid arguments: 'id': Parameter \"id\" must be of type integer, string given"
        )
    );
    // No URI, and a header that does not mirror it.
    let (status, body) = modern(&url, "resources/read", Some("x"), json!({})).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], -32020);
    let (status, body) = modern(
        &url,
        "resources/read",
        None,
        json!({"uri": "catalog://hours"}),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (400, json!(-32020))
    );
}

#[tokio::test]
async fn prompts_are_listed_and_rendered_with_typed_arguments() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let (_, body) = modern(&url, "prompts/list", None, json!({})).await;
    assert_eq!(
        body,
        complete(json!({"prompts": [{
            "name": "recommend",
            "title": "Recommend products for a need.",
            "description": "Recommend products for a need.\n\nAsks the model to pick products of the catalog for what a customer needs, using the\n`Catalog.search` tool.",
            "arguments": [
                {"name": "need", "description": "What the customer needs", "required": true},
                {"name": "count", "description": "How many products to propose", "required": false}
            ]
        }], "ttlMs": 300_000, "cacheScope": "public"}))
    );
    // Arguments are strings on the wire; `count` becomes a u32, and defaults to 3.
    let get = |args: Value| json!({"name": "recommend", "arguments": args});
    let (_, body) = modern(
        &url,
        "prompts/get",
        Some("recommend"),
        get(json!({"need": "tea", "count": "2"})),
    )
    .await;
    let text = "A customer needs: tea. Use the Catalog.search tool to find at most 2 products of \
                the catalog that fit, and explain each choice in one sentence.";
    assert_eq!(
        body,
        complete(json!({
            "description": "Recommend products for a need.\n\nAsks the model to pick products of the catalog for what a customer needs, using the\n`Catalog.search` tool.",
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}]
        }))
    );
    let (_, body) = modern(
        &url,
        "prompts/get",
        Some("recommend"),
        get(json!({"need": "tea"})),
    )
    .await;
    assert!(
        body["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("at most 3 products")
    );
    for (args, message) in [
        (
            json!({}),
            "Invalid arguments: 'need': Required parameter \"need\" not passed",
        ),
        (
            json!({"need": "tea", "count": "lots"}),
            "Invalid arguments: 'count': Parameter \"count\" must be of type integer, string given",
        ),
    ] {
        let (status, body) = modern(&url, "prompts/get", Some("recommend"), get(args)).await;
        assert_eq!(status, 400);
        assert_eq!(body, err(json!(1), -32602, message));
    }
    let (status, body) = modern(&url, "prompts/get", Some("nope"), json!({"name": "nope"})).await;
    assert_eq!(status, 400);
    assert_eq!(body, err(json!(1), -32602, "Unknown prompt: nope"));
}

#[tokio::test]
async fn completions_come_from_the_named_functions() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let complete_req = |r: Value, name: &str, value: &str| json!({"ref": r, "argument": {"name": name, "value": value}});
    let prompt = json!({"type": "ref/prompt", "name": "recommend"});
    let template = json!({"type": "ref/resource", "uri": "catalog://products/{id}"});
    let (_, body) = modern(
        &url,
        "completion/complete",
        None,
        complete_req(prompt.clone(), "need", "a "),
    )
    .await;
    assert_eq!(
        body,
        complete(json!({"completion": {"values": ["a gift", "a mug for tea", "a teapot"]}}))
    );
    let (_, body) = modern(
        &url,
        "completion/complete",
        None,
        complete_req(template, "id", ""),
    )
    .await;
    assert_eq!(
        body,
        complete(json!({"completion": {"values": ["1", "2", "3", "4", "5", "6"]}}))
    );
    // An argument without a completion function: no values.
    let (_, body) = modern(
        &url,
        "completion/complete",
        None,
        complete_req(prompt.clone(), "count", ""),
    )
    .await;
    assert_eq!(body, complete(json!({"completion": {"values": []}})));
    for (params, message) in [
        (complete_req(prompt, "nope", ""), "Unknown argument: nope"),
        (
            complete_req(json!({"type": "ref/prompt", "name": "x"}), "a", ""),
            "Unknown prompt: x",
        ),
        (
            complete_req(json!({"type": "ref/tool"}), "a", ""),
            "Invalid request parameters: `ref.type` must be \"ref/prompt\" or \"ref/resource\"",
        ),
    ] {
        let (status, body) = modern(&url, "completion/complete", None, params).await;
        assert_eq!(status, 400);
        assert_eq!(body, err(json!(1), -32602, message));
    }
}

#[tokio::test]
async fn a_group_declares_only_what_it_has() {
    // `admin` has tools only: no resources, prompts or completions, which answer -32601.
    let server = example_prod().api_tokens(["t"]).build().unwrap();
    let url = format!("{}/mcp/admin/v1", serve_url(server).await);
    let auth = ("authorization", "Bearer t");
    let (_, _, body) = post_json(&url, &[auth], &initialize(1, "2025-11-25")).await;
    assert_eq!(
        body["result"]["capabilities"],
        json!({"tools": {"listChanged": false}, "logging": {}})
    );
    let mut headers = modern_headers("prompts/list", None);
    headers.push(auth);
    let (status, _, body) = post_json(
        &url,
        &headers,
        &modern_req(json!(1), "prompts/list", json!({})),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(
        body,
        err_data(json!(1), -32601, "Method not found", json!("prompts/list"))
    );
}

#[tokio::test]
async fn session_logs_arrive_on_the_call_stream_at_the_chosen_level() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let sid = open_session(&url, "2025-11-25").await;
    let logging = json!({"name": "test_tool_with_logging", "arguments": {}});
    // Before logging/setLevel: nothing is sent.
    let (_, _, text) = post(
        &url,
        &[("mcp-session-id", &sid)],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": logging}).to_string(),
    )
    .await;
    let frames = data_frames(&text);
    assert_eq!(frames.len(), 1, "{frames:?}");
    // A bad level is -32602; a good one is `{}` and kept by the session.
    let body = on_session(&url, &sid, 3, "logging/setLevel", json!({"level": "loud"})).await;
    assert_eq!(body["error"]["code"], -32602);
    let body = on_session(&url, &sid, 4, "logging/setLevel", json!({"level": "info"})).await;
    assert_eq!(body, ok(json!(4), json!({})));
    let (_, _, text) = post(
        &url,
        &[("mcp-session-id", &sid)],
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": logging}).to_string(),
    )
    .await;
    let frames = data_frames(&text);
    let log = |data: &str| {
        json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": data}})
    };
    assert_eq!(
        frames[..3],
        [
            log("Tool execution started"),
            log("Tool processing data"),
            log("Tool execution completed")
        ]
    );
    assert_eq!(
        frames[3]["result"]["content"][0]["text"],
        "Logging test completed"
    );
    // Above the level: nothing.
    on_session(&url, &sid, 6, "logging/setLevel", json!({"level": "error"})).await;
    let (_, _, text) = post(
        &url,
        &[("mcp-session-id", &sid)],
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": logging}).to_string(),
    )
    .await;
    assert_eq!(data_frames(&text).len(), 1);
}

/// The messages of an SSE body (a resumable stream's priming event has no data).
fn data_frames(text: &str) -> Vec<Value> {
    sse_events(text)
        .iter()
        .filter(|e| !e.data.is_empty())
        .map(|e| parse(&e.data))
        .collect()
}

#[tokio::test]
async fn modern_requests_log_only_when_their_meta_asks() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let name = "test_logging_tool";
    let (status, body) = modern(
        &url,
        "tools/call",
        Some(name),
        json!({"name": name, "arguments": {}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["content"][0]["text"], "Logged only if asked");
    let mut req = modern_req(
        json!(1),
        "tools/call",
        json!({"name": name, "arguments": {}}),
    );
    req["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    let (_, h, text) = post(
        &url,
        &modern_headers("tools/call", Some(name)),
        &req.to_string(),
    )
    .await;
    assert_eq!(hdr(&h, "content-type"), Some("text/event-stream"));
    let frames: Vec<Value> = sse_events(&text).iter().map(|e| parse(&e.data)).collect();
    assert_eq!(
        frames[0],
        json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "test_logging_tool ran"}})
    );
    req["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("chatty");
    let (status, _, text) = post(
        &url,
        &modern_headers("tools/call", Some(name)),
        &req.to_string(),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(parse(&text)["error"]["code"], -32602);
}

#[tokio::test]
async fn a_listen_stream_acknowledges_then_forwards_only_what_it_asked() {
    let server = examples::server().unwrap();
    let changes = server.changes();
    let url = format!("{}/mcp/conformance/v1", serve_url(server).await);
    let listen = modern_req(
        json!("listen-1"),
        "subscriptions/listen",
        json!({"notifications": {"promptsListChanged": true,
            "resourceSubscriptions": ["test://watched-resource"]}}),
    );
    let mut resp = client()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "subscriptions/listen")
        .body(listen.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut buf = String::new();
    let tag = json!({"io.modelcontextprotocol/subscriptionId": "listen-1"});
    assert_eq!(
        next_events(&mut resp, &mut buf, 1).await,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": tag, "notifications": {"promptsListChanged": true,
                "resourceSubscriptions": ["test://watched-resource"]}}})
        ]
    );
    // Tools were not asked for; another resource was not subscribed.
    changes.tools_list_changed();
    changes.resource_updated("test://static-text");
    changes.resource_updated("test://watched-resource");
    changes.prompts_list_changed();
    assert_eq!(
        next_events(&mut resp, &mut buf, 2).await,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"_meta": tag, "uri": "test://watched-resource"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed",
                "params": {"_meta": tag}}),
        ]
    );
}

#[tokio::test]
async fn a_session_hears_of_the_resources_it_subscribed_to_on_its_get_stream() {
    let server = examples::server().unwrap();
    let changes = server.changes();
    let url = format!("{}/mcp/conformance/v1", serve_url(server).await);
    let sid = open_session(&url, "2025-11-25").await;
    let watched = json!({"uri": "test://watched-resource"});
    let body = on_session(&url, &sid, 2, "resources/subscribe", watched.clone()).await;
    assert_eq!(body, ok(json!(2), json!({})));
    let body = on_session(
        &url,
        &sid,
        3,
        "resources/subscribe",
        json!({"uri": "test://nope"}),
    )
    .await;
    assert_eq!(
        body,
        err_data(
            json!(3),
            -32002,
            "Resource not found",
            json!({"uri": "test://nope"})
        )
    );
    let mut resp = client()
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut buf = String::new();
    // The stream subscribes as the response starts: wait for it before announcing.
    tokio::time::sleep(Duration::from_millis(100)).await;
    changes.resource_updated("test://static-text");
    changes.resource_updated("test://watched-resource");
    assert_eq!(
        next_events(&mut resp, &mut buf, 1).await,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "test://watched-resource"}})
        ]
    );
    // Unsubscribed: the next update is not sent, the list change after it is.
    let body = on_session(&url, &sid, 4, "resources/unsubscribe", watched).await;
    assert_eq!(body, ok(json!(4), json!({})));
    changes.resource_updated("test://watched-resource");
    changes.tools_list_changed();
    assert_eq!(
        next_events(&mut resp, &mut buf, 1).await,
        [json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})]
    );
}

/// Sessions in memory, counting reads.
struct CountingSessions {
    inner: mcp_runtime::mcp::MemorySessions,
    reads: std::sync::atomic::AtomicUsize,
}

impl mcp_runtime::mcp::SessionStore for CountingSessions {
    fn create<'a>(
        &'a self,
        state: &'a str,
        holder: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<String, RpcError>> {
        self.inner.create(state, holder)
    }
    fn get<'a>(
        &'a self,
        id: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<Option<String>, RpcError>> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.get(id)
    }
    fn set<'a>(
        &'a self,
        id: &'a str,
        state: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<bool, RpcError>> {
        self.inner.set(id, state)
    }
    fn remove<'a>(
        &'a self,
        id: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<bool, RpcError>> {
        self.inner.remove(id)
    }
}

#[tokio::test]
async fn resource_updates_reach_only_their_watchers_and_read_no_session() {
    let store = std::sync::Arc::new(CountingSessions {
        inner: mcp_runtime::mcp::MemorySessions::new(100, Duration::from_secs(600)),
        reads: Default::default(),
    });
    let server = examples::builder()
        .session_store(store.clone())
        .build()
        .unwrap();
    let changes = server.changes();
    let url = format!("{}/mcp/conformance/v1", serve_url(server).await);
    // Twelve sessions listen on their GET streams (within one caller's share of 16); one
    // subscribed to the watched resource.
    let mut streams = Vec::new();
    let mut watcher = None;
    for n in 0..12 {
        let sid = open_session(&url, "2025-11-25").await;
        if n == 7 {
            let watched = json!({"uri": "test://watched-resource"});
            let body = on_session(&url, &sid, 2, "resources/subscribe", watched).await;
            assert_eq!(body, ok(json!(2), json!({})));
        }
        let resp = client()
            .get(&url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &sid)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        if n == 7 {
            watcher = Some(resp);
        } else {
            streams.push(resp);
        }
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let reads = store.reads.load(std::sync::atomic::Ordering::SeqCst);
    // A hundred updates of other resources, then one of the watched one: the watcher hears
    // of that one alone, and no stream read its session for any of them.
    for _ in 0..100 {
        changes.resource_updated("test://static-text");
    }
    changes.resource_updated("test://watched-resource");
    changes.tools_list_changed();
    let (mut resp, mut buf) = (watcher.unwrap(), String::new());
    assert_eq!(
        next_events(&mut resp, &mut buf, 2).await,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"uri": "test://watched-resource"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        ]
    );
    assert_eq!(store.reads.load(std::sync::atomic::Ordering::SeqCst), reads);
    // The others heard only the list change.
    let mut other = streams.pop().unwrap();
    let mut buf = String::new();
    assert_eq!(
        next_events(&mut other, &mut buf, 1).await,
        [json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})]
    );
}

#[tokio::test]
async fn stdio_serves_resources_prompts_and_change_notices() {
    let server = examples::server().unwrap();
    let changes = server.changes();
    let mut io = Stdio::start(&server, "mcp");
    io.roundtrip(&initialize(1, "2025-11-25").to_string()).await;
    let r = io
        .roundtrip(r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"catalog://products/1"}}"#)
        .await;
    assert_eq!(
        r,
        ok(
            json!(2),
            json!({"contents": [{"uri": "catalog://products/1",
            "mimeType": "application/json", "text": "{\"id\":1,\"name\":\"Red mug\"}"}]})
        )
    );
    let r = io
        .roundtrip(r#"{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"catalog://products/1"}}"#)
        .await;
    assert_eq!(r, ok(json!(3), json!({})));
    changes.resource_updated("catalog://products/1");
    assert_eq!(
        parse(&io.recv().await),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "catalog://products/1"}})
    );
    io.close().await;
}

#[tokio::test]
async fn subscriptions_and_listen_streams_are_bounded() {
    let mut limits = mcp_runtime::Limits::default();
    limits.subscriptions = 1;
    limits.listen_timeout = Duration::from_millis(300);
    let server = example_prod().limits(limits).build().unwrap();
    let url = format!("{}/mcp/conformance/v1", serve_url(server).await);
    // A session watches at most `subscriptions` resources.
    let sid = open_session(&url, "2025-11-25").await;
    let sub = |uri: &str| json!({"uri": uri});
    let body = on_session(
        &url,
        &sid,
        2,
        "resources/subscribe",
        sub("test://static-text"),
    )
    .await;
    assert_eq!(body, ok(json!(2), json!({})));
    let body = on_session(
        &url,
        &sid,
        3,
        "resources/subscribe",
        sub("test://static-text"),
    )
    .await;
    assert_eq!(
        body,
        ok(json!(3), json!({})),
        "the same URI again takes no place"
    );
    let body = on_session(
        &url,
        &sid,
        4,
        "resources/subscribe",
        sub("test://watched-resource"),
    )
    .await;
    assert_eq!(
        body,
        err(
            json!(4),
            -32602,
            "at most 1 resource subscriptions per session"
        )
    );
    // A listen stream too; and it ends after `listen_timeout` with its final result.
    let params = json!({"notifications": {"resourceSubscriptions": ["test://a", "test://b"]}});
    let (status, body) = modern(&url, "subscriptions/listen", None, params).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(
            json!(1),
            -32602,
            "at most 1 resource subscriptions per stream"
        )
    );
    let listen = modern_req(
        json!(9),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let (status, _, text) = post(
        &url,
        &modern_headers("subscriptions/listen", None),
        &listen.to_string(),
    )
    .await;
    assert_eq!(status, 200);
    let frames = data_frames(&text);
    let tag = json!({"io.modelcontextprotocol/subscriptionId": 9});
    assert_eq!(
        frames,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                "params": {"_meta": tag, "notifications": {"toolsListChanged": true}}}),
            json!({"jsonrpc": "2.0", "id": 9, "result": {"resultType": "complete", "_meta": tag}}),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// The in-process client
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn the_in_process_client_speaks_both_faces_without_http() {
    let server = examples::builder().env(Environment::PROD).build().unwrap();
    let client = server.client("mcp", 1);
    assert_eq!(
        client
            .call("Catalog.ping", json!({"who": "unit"}))
            .await
            .unwrap(),
        json!("pong, unit")
    );
    // The result as the wire carries it on 2026-07-28 (the default revision).
    let mut expected = pong("x");
    expected["resultType"] = json!("complete");
    expected["_meta"] = result_meta();
    assert_eq!(
        client.call_tool("Catalog.ping", json!({})).await.unwrap(),
        expected
    );
    let hours = client.read_resource("catalog://hours").await.unwrap();
    assert_eq!(hours["contents"][0]["mimeType"], "text/plain");
    let prompt = client
        .get_prompt("recommend", json!({"need": "tea"}))
        .await
        .unwrap();
    assert_eq!(prompt["messages"][0]["role"], "user");
    let tools = client.list("tools/list", "tools").await.unwrap();
    assert_eq!(tool_names(&tools), mcp_tool_names(&server));
    // Errors are values with their code, message and data, per face and revision.
    let e = client
        .call("Catalog.get", json!({"id": 99}))
        .await
        .unwrap_err();
    assert_eq!((e.code(), e.message()), (-32404, "Product 99 not found"));
    let e = client.read_resource("catalog://nope").await.unwrap_err();
    assert_eq!(e.code(), -32602);
    let legacy = server.client("mcp", 1).protocol_version("2025-06-18");
    let e = legacy.read_resource("catalog://nope").await.unwrap_err();
    assert_eq!(e.code(), -32002);
    // A language among the server's.
    let uk = server.client("mcp", 1).language("uk-UA");
    let prompts = uk.list("prompts/list", "prompts").await.unwrap();
    assert_eq!(prompts[0]["title"], "Порадити товари");
    let e = server
        .client("nope", 1)
        .call("x", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.message(), "no JSON-RPC group `nope` version 1");
}

#[tokio::test]
async fn stdio_listen_streams_start_with_the_acknowledgement_and_end_on_cancel() {
    let server = examples::server().unwrap();
    let changes = server.changes();
    let mut io = Stdio::start(&server, "mcp");
    let listen = modern_req(
        json!("l"),
        "subscriptions/listen",
        json!({"notifications": {"resourcesListChanged": true}}),
    );
    io.send(&listen.to_string()).await;
    let tag = json!({"io.modelcontextprotocol/subscriptionId": "l"});
    assert_eq!(
        parse(&io.recv().await),
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": tag, "notifications": {"resourcesListChanged": true}}})
    );
    changes.tools_list_changed();
    changes.resources_list_changed();
    assert_eq!(
        parse(&io.recv().await),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed",
            "params": {"_meta": tag}})
    );
    // The client ends it: nothing more is sent for it, and requests are still answered.
    io.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"l"}}"#)
        .await;
    let ping = modern_req(json!(2), "server/discover", json!({}));
    let r = io.roundtrip(&ping.to_string()).await;
    assert_eq!(r["id"], 2);
    changes.resources_list_changed();
    io.close().await;
}

// ---------------------------------------------------------------------------------------------
// Asking the client during a call: multi-round-trip results (2026-07-28) and requests on the
// call's stream (handshake era)
// ---------------------------------------------------------------------------------------------

/// A modern `tools/call` whose `_meta` declares `caps`; `extra` members join the params.
async fn modern_call_with(url: &str, name: &str, caps: Value, extra: Value) -> (u16, Value) {
    let mut params = json!({"name": name, "arguments": {}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let mut req = modern_req(json!(1), "tools/call", params);
    req["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
    let (status, _, body) = post_json(url, &modern_headers("tools/call", Some(name)), &req).await;
    (status, body)
}

/// The `user_name` request of `test_input_required_result_elicitation`.
fn user_name_request() -> Value {
    json!({"user_name": {"method": "elicitation/create", "params": {
        "message": "What is your name?",
        "requestedSchema": {"type": "object",
            "properties": {"name": {"description": "The name", "type": "string"}},
            "required": ["name"]}}}})
}

#[tokio::test]
async fn an_input_required_result_round_trips_with_its_signed_state() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let name = "test_input_required_result_elicitation";
    let caps = json!({"elicitation": {}});
    let (status, body) = modern_call_with(&url, name, caps.clone(), json!({})).await;
    assert_eq!(status, 200, "{body}");
    let state = body["result"]["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned();
    assert!(state.starts_with("v1.") && state.len() < 1024, "{state}");
    assert_eq!(
        body,
        ok(
            json!(1),
            json!({"resultType": "input_required", "inputRequests": user_name_request(),
                "requestState": state, "_meta": result_meta()})
        )
    );
    // The retry: same call, the answer under its key, the state echoed; extra keys ignored.
    let retry = json!({"requestState": state, "inputResponses": {
        "user_name": {"action": "accept", "content": {"name": "Alice"}},
        "unexpected": {"action": "accept"}}});
    let (status, body) = modern_call_with(&url, name, caps.clone(), retry).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        complete(json!({"content": [{"type": "text", "text": "Hello, Alice!"}], "isError": false}))
    );
    // This group takes answers in advance (`mcp_answers_in_advance`): a first call that
    // brings the answer completes at once.
    let early = json!({"inputResponses": {
        "user_name": {"action": "accept", "content": {"name": "Bob"}}}});
    let (_, body) = modern_call_with(&url, name, caps.clone(), early).await;
    assert_eq!(
        body,
        complete(json!({"content": [{"type": "text", "text": "Hello, Bob!"}], "isError": false}))
    );
    // A wrong key: asked again, not an error.
    let wrong = json!({"inputResponses": {"wrong_key": {"action": "accept", "content": {}}}});
    let (_, body) = modern_call_with(&url, name, caps.clone(), wrong).await;
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");
    assert_eq!(body["result"]["inputRequests"], user_name_request());
    // A malformed answer or `inputResponses`: -32602.
    for bad in [
        json!({"inputResponses": {"user_name": 12345}}),
        json!({"inputResponses": null}),
    ] {
        let (status, body) = modern_call_with(&url, name, caps.clone(), bad).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &json!(-32602)),
            "{body}"
        );
    }
}

#[tokio::test]
async fn answers_count_only_for_what_the_signed_state_asked() {
    let url = format!("{}/mcp/mcp/v1", example().await);
    let caps = json!({"elicitation": {}});
    let yes = json!({"action": "accept", "content": {"confirm": true}});
    let args = json!({"order_id": 41});
    let first = json!({"arguments": args});
    let (status, body) = modern_call_with(&url, "Orders.pay", caps.clone(), first).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");
    let key = body["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("one request");
    let state = body["result"]["requestState"].as_str().unwrap().to_owned();
    // A first call bringing the answer before it is asked is asked all the same, not paid
    // (the `mcp` group takes no answers in advance).
    let unasked = json!({"arguments": args, "inputResponses": {&key: yes}});
    let (_, body) = modern_call_with(&url, "Orders.pay", caps.clone(), unasked).await;
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");
    // With the state, an answer under a key it did not ask is not read ...
    let other = json!({"arguments": args, "requestState": state,
        "inputResponses": {format!("{key}-other"): yes}});
    let (_, body) = modern_call_with(&url, "Orders.pay", caps.clone(), other).await;
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");
    // ... and the asked one is.
    let answered = json!({"arguments": args, "requestState": state, "inputResponses": {key: yes}});
    let (_, body) = modern_call_with(&url, "Orders.pay", caps, answered).await;
    assert_eq!(
        body["result"]["structuredContent"],
        json!({"result": {"order_id": 41, "paid": true}}),
        "{body}"
    );
}

#[tokio::test]
async fn a_tampered_or_foreign_request_state_is_refused() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let name = "test_input_required_result_tampered_state";
    let caps = json!({"elicitation": {}});
    let (_, body) = modern_call_with(&url, name, caps.clone(), json!({})).await;
    let state = body["result"]["requestState"].as_str().unwrap().to_owned();
    let answer = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    let tampered = json!({"requestState": format!("{state}-TAMPERED"), "inputResponses": answer});
    let (status, body) = modern_call_with(&url, name, caps.clone(), tampered).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(
            json!(1),
            -32602,
            "Invalid requestState: integrity check failed"
        )
    );
    // Another tool's state (signed, but bound to its own request).
    let other = "test_input_required_result_request_state";
    let (_, body) = modern_call_with(&url, other, caps.clone(), json!({})).await;
    let foreign = body["result"]["requestState"].as_str().unwrap().to_owned();
    let reuse = json!({"requestState": foreign, "inputResponses": answer});
    let (status, body) = modern_call_with(&url, name, caps, reuse).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err(
            json!(1),
            -32602,
            "Invalid requestState: it belongs to another request"
        )
    );
}

#[tokio::test]
async fn a_call_needing_an_undeclared_capability_is_32021() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let (status, body) =
        modern_call_with(&url, "test_missing_capability", json!({}), json!({})).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        err_data(
            json!(1),
            -32021,
            "The client did not declare the `sampling` capability this call needs",
            json!({"requiredCapabilities": {"sampling": {}}})
        )
    );
    // With only sampling declared, the capabilities fixture asks for sampling alone.
    let (status, body) = modern_call_with(
        &url,
        "test_input_required_result_capabilities",
        json!({"sampling": {}}),
        json!({}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body["result"]["inputRequests"],
        json!({"greeting": {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Generate a greeting"}}],
            "maxTokens": 50}}})
    );
}

/// POSTs `body` on session `sid`, accepting a stream; the response, once its status is 200.
async fn session_stream(url: &str, sid: &str, body: &Value) -> reqwest::Response {
    let resp = client()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", sid)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp
}

/// Reads a streaming response until its data frames number `n`.
async fn frames_until(resp: &mut reqwest::Response, buf: &mut String, n: usize) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let frames = data_frames(buf);
        if frames.len() >= n && buf.ends_with("\n\n") {
            return frames;
        }
        let chunk = tokio::time::timeout_at(deadline, resp.chunk())
            .await
            .expect("frames in time")
            .unwrap()
            .expect("the stream goes on");
        buf.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

#[tokio::test]
async fn a_handshake_call_asks_on_its_stream_and_gets_the_posted_answer() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let mut init = initialize(1, "2025-11-25");
    init["params"]["capabilities"] = json!({"elicitation": {}});
    let (status, h, _) = post_json(&url, &[], &init).await;
    assert_eq!(status, 200);
    let sid = hdr(&h, "mcp-session-id").unwrap().to_owned();
    let mut resp = session_stream(
        &url,
        &sid,
        &call(7, "test_elicitation", json!({"message": "Who are you?"})),
    )
    .await;
    let mut buf = String::new();
    let frames = frames_until(&mut resp, &mut buf, 1).await;
    let asked = &frames[0];
    let rid = asked["id"].as_str().expect("a server-generated string id");
    assert!(rid.starts_with("s-"), "{rid}");
    assert_eq!(
        asked,
        &json!({"jsonrpc": "2.0", "id": rid, "method": "elicitation/create", "params": {
            "message": "Who are you?",
            "requestedSchema": {"type": "object", "properties": {
                "username": {"description": "Your username", "type": "string"},
                "email": {"description": "Your email address", "type": "string", "format": "email"}},
                "required": ["username", "email"]}}})
    );
    // The answer, POSTed on the session: 202, routed to the waiting call.
    let answer = json!({"jsonrpc": "2.0", "id": rid, "result": {"action": "accept",
        "content": {"username": "ann", "email": "ann@example.org"}}});
    let (status, _, text) = post(&url, &[("mcp-session-id", &sid)], &answer.to_string()).await;
    assert_eq!((status, text.as_str()), (202, ""));
    let frames = frames_until(&mut resp, &mut buf, 2).await;
    assert_eq!(
        frames[1],
        ok(
            json!(7),
            json!({"content": [{"type": "text",
            "text": "User response: accept, content: {\"username\":\"ann\",\"email\":\"ann@example.org\"}"}],
            "isError": false})
        )
    );
    // The session declared no sampling: the call is refused at once, in plain JSON (it sent
    // nothing, so no stream is opened).
    let (status, h, text) = post(
        &url,
        &[("mcp-session-id", &sid)],
        &call(8, "test_sampling", json!({"prompt": "Hi"})).to_string(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(hdr(&h, "content-type"), Some("application/json"));
    assert_eq!(
        [parse(&text)],
        [err_data(
            json!(8),
            -32021,
            "The client did not declare the `sampling` capability this call needs",
            json!({"requiredCapabilities": {"sampling": {}}})
        )]
    );
}

#[tokio::test]
async fn a_handshake_task_asks_through_tasks_result_and_ends_with_the_answer() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let mut init = initialize(1, "2025-11-25");
    init["params"]["capabilities"] = json!({"elicitation": {}});
    let (_, h, _) = post_json(&url, &[], &init).await;
    let sid = hdr(&h, "mcp-session-id").unwrap().to_owned();
    let both = [
        ("mcp-session-id", sid.as_str()),
        ("accept", "application/json, text/event-stream"),
    ];
    // The task is created at once; the call goes on and asks.
    let created = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "confirm_delete", "arguments": {"filename": "a.txt"}, "task": {}}});
    let (_, h, text) = post(&url, &both, &created.to_string()).await;
    assert_eq!(hdr(&h, "content-type"), Some("application/json"), "{text}");
    let created = parse(&text);
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let get = |n: i64, method: &str| json!({"jsonrpc": "2.0", "id": n, "method": method, "params": {"taskId": id}});
    // Until someone relays its question, the task waits on the client.
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let got = session_json(&url, &sid, get(3, "tasks/get")).await;
        if got["result"]["status"] == "input_required" {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{got}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // tasks/result relays it on its stream, with the related task.
    let mut resp = session_stream(&url, &sid, &get(4, "tasks/result")).await;
    let mut buf = String::new();
    let frames = frames_until(&mut resp, &mut buf, 1).await;
    let asked = &frames[0];
    let rid = asked["id"].as_str().expect("a server-generated id");
    assert_eq!(
        asked,
        &json!({"jsonrpc": "2.0", "id": rid, "method": "elicitation/create", "params": {
            "message": "Delete a.txt?",
            "requestedSchema": {"type": "object", "properties": {
                "confirm": {"description": "Go ahead?", "type": "boolean", "default": false}}},
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": id}}}})
    );
    let answer = json!({"jsonrpc": "2.0", "id": rid, "result": {"action": "accept",
        "content": {"confirm": true}}});
    let (status, _, _) = post(&url, &[("mcp-session-id", &sid)], &answer.to_string()).await;
    assert_eq!(status, 202);
    let frames = frames_until(&mut resp, &mut buf, 2).await;
    assert_eq!(
        frames[1],
        ok(
            json!(4),
            json!({"content": [{"type": "text", "text": "Deleted a.txt"}], "isError": false,
                "_meta": {"io.modelcontextprotocol/related-task": {"taskId": id}}})
        )
    );
    let got = session_json(&url, &sid, get(5, "tasks/get")).await;
    assert_eq!(got["result"]["status"], "completed");
}

// ---------------------------------------------------------------------------------------------
// Cancellation: the call stops unanswered, its lock is released, no post_response fires
// ---------------------------------------------------------------------------------------------

/// The example with a listener counting `Orders.pay`'s `post_response` events in `counter`.
fn counting_pay_posts(counter: &'static std::sync::atomic::AtomicU64) -> ServerBuilder {
    examples::builder().on(mcp_runtime::core::EventKind::PostResponse, move |ev| {
        if ev.method() == "Orders.pay" {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(())
    })
}

/// Pays order 7 through JSON-RPC in process until its lock is free (bounded in time).
async fn pay_when_unlocked(server: &Server) {
    let client = server.client("mcp", 1);
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        match client.call("Orders.pay", json!({"order_id": 7})).await {
            Ok(v) => {
                assert_eq!(v, json!({"order_id": 7, "paid": true}));
                return;
            }
            Err(e) => assert_eq!(e.message(), "Method 'Orders.pay' is locked."),
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lock is released"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The notice withdrawing the server's question `id` of a cancelled call.
fn withdrawn(id: &Value) -> Value {
    assert!(id.as_str().is_some_and(|i| i.starts_with("s-")), "{id}");
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "the call was cancelled"}})
}

fn cancelled(id: i64) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "The user changed their mind"}})
    .to_string()
}

#[tokio::test]
async fn a_cancelled_handshake_call_ends_its_stream_unanswered_and_releases_its_lock() {
    static POSTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let server = counting_pay_posts(&POSTS)
        .mcp_stateful("mcp")
        .build()
        .unwrap();
    let base = serve_url(server.clone()).await;
    let url = format!("{base}/mcp/mcp/v1");
    let mut init = initialize(1, "2025-11-25");
    init["params"]["capabilities"] = json!({"elicitation": {}});
    let (_, h, _) = post_json(&url, &[], &init).await;
    let sid = hdr(&h, "mcp-session-id").unwrap().to_owned();
    let mut resp = client()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &sid)
        .body(call(5, "Orders.pay", json!({"order_id": 7})).to_string())
        .send()
        .await
        .unwrap();
    let mut buf = String::new();
    let asked = frames_until(&mut resp, &mut buf, 1).await;
    assert_eq!(asked[0]["method"], "elicitation/create");
    assert_eq!(asked[0]["params"]["message"], "Pay order 7?");
    // The call holds order 7's lock while it waits for the user.
    pay_when_unlocked_fails(&server).await;

    // Another session cannot cancel it; its own can (202, as every notification).
    let other = {
        let (_, h, _) = post_json(&url, &[], &initialize(1, "2025-11-25")).await;
        hdr(&h, "mcp-session-id").unwrap().to_owned()
    };
    let (status, _, _) = post(&url, &[("mcp-session-id", &other)], &cancelled(5)).await;
    assert_eq!(status, 202);
    tokio::time::sleep(Duration::from_millis(50)).await;
    pay_when_unlocked_fails(&server).await;
    let (status, _, text) = post(&url, &[("mcp-session-id", &sid)], &cancelled(5)).await;
    assert_eq!((status, text.as_str()), (202, ""));

    // The stream ends, with nothing after the question.
    let rest = tokio::time::timeout(TIMEOUT, async {
        let mut rest = String::new();
        while let Some(chunk) = resp.chunk().await.unwrap() {
            rest.push_str(std::str::from_utf8(&chunk).unwrap());
        }
        rest
    })
    .await
    .expect("the stream ends");
    // Its question to the client is withdrawn; no answer follows.
    assert_eq!(data_frames(&rest), [withdrawn(&asked[0]["id"])]);
    pay_when_unlocked(&server).await;
    // Only the JSON-RPC payment was followed by post_response.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(POSTS.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// Order 7 is locked (by a call waiting for its user).
async fn pay_when_unlocked_fails(server: &Server) {
    let e = server
        .client("mcp", 1)
        .call("Orders.pay", json!({"order_id": 7}))
        .await
        .unwrap_err();
    assert_eq!(e.message(), "Method 'Orders.pay' is locked.");
}

#[tokio::test]
async fn a_cancelled_stdio_call_is_not_answered_and_releases_its_lock() {
    static POSTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let server = counting_pay_posts(&POSTS).build().unwrap();
    let mut io = Stdio::start(&server, "mcp");
    let mut init = initialize(1, "2025-11-25");
    init["params"]["capabilities"] = json!({"elicitation": {}});
    let r = io.roundtrip(&init.to_string()).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");

    // The call asks on stdout; the answer comes back on stdin.
    let asked = io
        .roundtrip(&call(2, "Orders.pay", json!({"order_id": 8})).to_string())
        .await;
    assert_eq!(asked["method"], "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "accept", "content": {"confirm": true}}});
    let r = io.roundtrip(&answer.to_string()).await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"result": {"order_id": 8, "paid": true}})
    );

    // Cancelled while it waits: never answered, its lock released.
    let asked = io
        .roundtrip(&call(3, "Orders.pay", json!({"order_id": 7})).to_string())
        .await;
    assert_eq!(asked["params"]["message"], "Pay order 7?");
    pay_when_unlocked_fails(&server).await;
    io.send(&cancelled(3)).await;
    assert_eq!(parse(&io.recv().await), withdrawn(&asked["id"]));
    pay_when_unlocked(&server).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The stdio payment of order 8 and the JSON-RPC one of order 7.
    assert_eq!(POSTS.load(std::sync::atomic::Ordering::SeqCst), 2);
    io.close().await;
}

#[tokio::test]
async fn a_modern_call_whose_client_goes_away_stops_and_releases_its_lock() {
    static POSTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let server = counting_pay_posts(&POSTS).build().unwrap();
    let url = format!("{}/mcp/mcp/v1", serve_url(server.clone()).await);
    // The payment asks first; the answered retry pays, holding the lock for 5 s.
    let caps = json!({"elicitation": {}});
    let args = json!({"arguments": {"order_id": 7, "hold_ms": 5000}});
    let (_, asked) = modern_call_with(&url, "Orders.pay", caps.clone(), args).await;
    let key = asked["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("asked to confirm");
    let mut req = modern_req(
        json!(1),
        "tools/call",
        json!({"name": "Orders.pay", "arguments": {"order_id": 7, "hold_ms": 5000},
            "requestState": asked["result"]["requestState"],
            "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}}}),
    );
    req["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
    let send = || {
        let (url, req) = (url.clone(), req.clone());
        tokio::spawn(async move {
            let headers = modern_headers("tools/call", Some("Orders.pay"));
            post_json(&url, &headers, &req).await
        })
    };
    let mut sending = send();
    // Wait until the payment runs (it holds the lock), then close the connection.
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while server
        .client("mcp", 1)
        .call("Orders.pay", json!({"order_id": 7}))
        .await
        .is_ok()
    {
        assert!(tokio::time::Instant::now() < deadline, "the call started");
        if sending.is_finished() {
            // It came while this probe held the lock, and was refused: sent again.
            sending = send();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let before = POSTS.load(std::sync::atomic::Ordering::SeqCst);
    sending.abort();
    pay_when_unlocked(&server).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(POSTS.load(std::sync::atomic::Ordering::SeqCst), before + 1);
}

#[tokio::test]
async fn a_stdio_call_past_the_bound_is_refused_while_reading_goes_on() {
    let mut limits = mcp_runtime::Limits::default();
    limits.detached_calls = 1;
    let server = examples::builder().limits(limits).build().unwrap();
    let mut io = Stdio::start(&server, "mcp");
    let mut init = initialize(1, "2025-11-25");
    init["params"]["capabilities"] = json!({"elicitation": {}});
    io.roundtrip(&init.to_string()).await;
    // The one call in flight waits for its user.
    let asked = io
        .roundtrip(&call(2, "Orders.pay", json!({"order_id": 7})).to_string())
        .await;
    assert_eq!(asked["method"], "elicitation/create");
    let r = io
        .roundtrip(&call(3, "Catalog.ping", json!({})).to_string())
        .await;
    assert_eq!(
        r,
        err(
            json!(3),
            -32603,
            "Server busy: too many calls in progress, try again later"
        )
    );
    // The answer still gets through, and the call finishes.
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "decline"}});
    let r = io.roundtrip(&answer.to_string()).await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"result": {"order_id": 7, "paid": false}})
    );
    let r = io
        .roundtrip(&call(4, "Catalog.ping", json!({})).to_string())
        .await;
    assert_eq!(r, ok(json!(4), pong("x")));
    io.close().await;
}

// ---------------------------------------------------------------------------------------------
// Tasks (2026-07-28, the `io.modelcontextprotocol/tasks` extension)
// ---------------------------------------------------------------------------------------------

/// A modern request from a client that declares the tasks extension (and elicitation).
fn task_req(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = env_meta();
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({
        "elicitation": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn task_post(url: &str, req: &Value) -> (u16, Value) {
    let method = req["method"].as_str().unwrap();
    let name = req["params"]["name"]
        .as_str()
        .or_else(|| req["params"]["taskId"].as_str());
    let (status, _, body) = post_json(url, &modern_headers(method, name), req).await;
    (status, body)
}

fn is_rfc3339(v: &Value) -> bool {
    v.as_str().is_some_and(|s| {
        s.len() == 20 && s.ends_with('Z') && s.as_bytes()[10] == b'T' && s.starts_with("20")
    })
}

/// Polls `tasks/get` until the task's status is `status`.
async fn task_until(url: &str, task: &str, status: &str) -> Value {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let (code, body) =
            task_post(url, &task_req(90, "tasks/get", json!({"taskId": task}))).await;
        assert_eq!(code, 200, "{body}");
        if body["result"]["status"] == status {
            return body["result"].clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "{status}: {body}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The members every task view has besides its outcome, checked and removed.
fn take_task_members(v: &mut Value, task: &str) {
    let m = v.as_object_mut().unwrap();
    assert_eq!(m.remove("taskId").unwrap(), task);
    assert!(is_rfc3339(&m.remove("createdAt").unwrap()));
    assert!(is_rfc3339(&m.remove("lastUpdatedAt").unwrap()));
    assert_eq!(m.remove("ttlMs").unwrap(), 3_600_000);
    assert_eq!(m.remove("pollIntervalMs").unwrap(), 500);
}

#[tokio::test]
async fn a_task_tool_answers_with_a_task_that_completes() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let call = task_req(
        1,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 1, "label": "x"}}),
    );
    let (status, mut body) = task_post(&url, &call).await;
    assert_eq!(status, 200);
    let task = body["result"]["taskId"].as_str().unwrap().to_owned();
    assert!(is_hex32(&task), "{task}");
    take_task_members(&mut body["result"], &task);
    assert_eq!(
        body,
        ok(
            json!(1),
            json!({"resultType": "task", "status": "working", "_meta": result_meta()})
        )
    );
    let mut done = task_until(&url, &task, "completed").await;
    take_task_members(&mut done, &task);
    assert_eq!(
        done,
        json!({"resultType": "complete", "status": "completed", "_meta": result_meta(),
            "result": {"content": [{"type": "text", "text": "x: computed in 1 s"}], "isError": false}})
    );
    // Without the extension the same tool is a plain call.
    let plain = modern_req(
        json!(2),
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 0}}),
    );
    let (status, body) = task_post(&url, &plain).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["result"]["content"],
        json!([{"type": "text", "text": "job: computed in 0 s"}])
    );
}

#[tokio::test]
async fn a_task_asks_through_tasks_get_and_resumes_on_tasks_update() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let call = task_req(
        1,
        "tools/call",
        json!({"name": "confirm_delete", "arguments": {"filename": "a.txt"}}),
    );
    let (_, body) = task_post(&url, &call).await;
    let task = body["result"]["taskId"].as_str().unwrap().to_owned();
    let mut waiting = task_until(&url, &task, "input_required").await;
    take_task_members(&mut waiting, &task);
    assert_eq!(
        waiting,
        json!({"resultType": "complete", "status": "input_required", "_meta": result_meta(),
            "inputRequests": {"elicit-1": {"method": "elicitation/create", "params": {
                "message": "Delete a.txt?",
                "requestedSchema": {"type": "object", "properties": {
                    "confirm": {"type": "boolean", "description": "Go ahead?", "default": false}}}}}}})
    );
    // A key the task does not wait on is ignored; the answer resumes it.
    let update = task_req(
        2,
        "tasks/update",
        json!({"taskId": task, "inputResponses": {
            "nope": {"action": "decline"},
            "elicit-1": {"action": "accept", "content": {"confirm": true}}}}),
    );
    let (status, body) = task_post(&url, &update).await;
    assert_eq!(
        (status, body),
        (
            200,
            ok(
                json!(2),
                json!({"resultType": "complete", "_meta": result_meta()})
            )
        )
    );
    let done = task_until(&url, &task, "completed").await;
    assert_eq!(
        done["result"],
        json!({"content": [{"type": "text", "text": "Deleted a.txt"}], "isError": false})
    );
}

#[tokio::test]
async fn a_cancelled_task_ends_cancelled_and_a_panicking_one_fails() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let call = task_req(
        1,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 60}}),
    );
    let (_, body) = task_post(&url, &call).await;
    let task = body["result"]["taskId"].as_str().unwrap().to_owned();
    let (status, body) =
        task_post(&url, &task_req(2, "tasks/cancel", json!({"taskId": task}))).await;
    assert_eq!(
        (status, body),
        (
            200,
            ok(
                json!(2),
                json!({"resultType": "complete", "_meta": result_meta()})
            )
        )
    );
    let cancelled = task_until(&url, &task, "cancelled").await;
    assert_eq!(cancelled["statusMessage"], "Cancelled by the client");
    // Cancelling a finished task is acknowledged the same way.
    let (status, _) = task_post(&url, &task_req(3, "tasks/cancel", json!({"taskId": task}))).await;
    assert_eq!(status, 200);

    let call = task_req(4, "tools/call", json!({"name": "protocol_error_job"}));
    let (_, body) = task_post(&url, &call).await;
    let task = body["result"]["taskId"].as_str().unwrap().to_owned();
    let failed = task_until(&url, &task, "failed").await;
    assert_eq!(failed["error"]["code"], -32603);
    assert!(failed.get("result").is_none());
    assert_eq!(failed["statusMessage"], failed["error"]["message"]);
}

#[tokio::test]
async fn task_requests_need_the_extension_and_a_known_id() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let required =
        json!({"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
    // A task-only tool, called by a client without the extension.
    let call = modern_req(json!(1), "tools/call", json!({"name": "failing_job"}));
    let (status, body) = task_post(&url, &call).await;
    assert_eq!(
        (status, body),
        (
            400,
            err_data(
                json!(1),
                -32021,
                "Tool 'failing_job' needs the client to declare the io.modelcontextprotocol/tasks extension",
                required.clone()
            )
        )
    );
    let get = modern_req(json!(2), "tasks/get", json!({"taskId": "0123"}));
    let (status, body) = task_post(&url, &get).await;
    assert_eq!(
        (status, body),
        (
            400,
            err_data(
                json!(2),
                -32021,
                "`tasks/get` needs the client to declare the io.modelcontextprotocol/tasks extension",
                required
            )
        )
    );
    let (status, body) =
        task_post(&url, &task_req(3, "tasks/get", json!({"taskId": "0123"}))).await;
    assert_eq!(
        (status, body),
        (400, err(json!(3), -32602, "Unknown taskId"))
    );
    // The routing header must name the task.
    let (status, _, body) = post_json(
        &url,
        &modern_headers("tasks/get", Some("another")),
        &task_req(4, "tasks/get", json!({"taskId": "0123"})),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // Removed in 2026-07-28.
    let (status, body) = task_post(
        &url,
        &task_req(5, "tasks/result", json!({"taskId": "0123"})),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (404, json!(-32601))
    );
    // A tool error completes the task.
    let (_, body) = task_post(
        &url,
        &task_req(6, "tools/call", json!({"name": "failing_job"})),
    )
    .await;
    let task = body["result"]["taskId"].as_str().unwrap().to_owned();
    let done = task_until(&url, &task, "completed").await;
    assert_eq!(done["result"]["isError"], true);
}

/// A 2025-11-25 request on a session, answered in JSON.
async fn session_json(url: &str, sid: &str, body: Value) -> Value {
    let (status, _, body) = post_json(
        url,
        &[("mcp-session-id", sid), ("accept", "application/json")],
        &body,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn handshake_tasks_run_with_params_task_and_end_in_tasks_result() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let (_, h, init) = post_json(&url, &[], &initialize(1, "2025-11-25")).await;
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    let sid = hdr(&h, "mcp-session-id").unwrap().to_owned();
    let list = session_json(
        &url,
        &sid,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(
        tool(tools, "slow_compute")["execution"],
        json!({"taskSupport": "optional"})
    );
    assert!(
        tool(tools, "greet").get("execution").is_none(),
        "forbidden is the default"
    );

    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "slow_compute", "arguments": {"seconds": 1}, "task": {"ttl": 60000}}});
    let created = session_json(&url, &sid, call).await;
    let mut task = created["result"]["task"].clone();
    let id = task["taskId"].as_str().unwrap().to_owned();
    let m = task.as_object_mut().unwrap();
    assert!(is_rfc3339(&m.remove("createdAt").unwrap()));
    assert!(is_rfc3339(&m.remove("lastUpdatedAt").unwrap()));
    assert_eq!(
        task,
        json!({"taskId": id, "status": "working", "ttl": 60000, "pollInterval": 500})
    );
    let get = |n: i64, method: &str| json!({"jsonrpc": "2.0", "id": n, "method": method, "params": {"taskId": id}});
    // tasks/result waits for the end, and answers what the call would have.
    let result = session_json(&url, &sid, get(4, "tasks/result")).await;
    assert_eq!(
        result,
        ok(
            json!(4),
            json!({"content": [{"type": "text", "text": "job: computed in 1 s"}], "isError": false,
                "_meta": {"io.modelcontextprotocol/related-task": {"taskId": id}}})
        )
    );
    let got = session_json(&url, &sid, get(5, "tasks/get")).await;
    assert_eq!(got["result"]["status"], "completed");
    assert!(got["result"].get("result").is_none(), "a flat Task");
    let again = session_json(&url, &sid, get(6, "tasks/cancel")).await;
    assert_eq!(
        again,
        err(
            json!(6),
            -32602,
            &format!("Task {id} has already ended (completed)")
        )
    );

    // A running task is cancelled at once.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "slow_compute", "arguments": {"seconds": 60}, "task": {}}});
    let created = session_json(&url, &sid, call).await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let cancel =
        json!({"jsonrpc": "2.0", "id": 8, "method": "tasks/cancel", "params": {"taskId": id}});
    let cancelled = session_json(&url, &sid, cancel).await;
    assert_eq!(cancelled["result"]["status"], "cancelled");
    assert_eq!(
        cancelled["result"]["statusMessage"],
        "Cancelled by the client"
    );

    // Task support is checked: -32601 both ways.
    let wrong = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "greet", "arguments": {"name": "x"}, "task": {}}});
    assert_eq!(
        session_json(&url, &sid, wrong).await,
        err(json!(9), -32601, "Tool 'greet' cannot run as a task")
    );
    let wrong = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
        "name": "failing_job"}});
    assert_eq!(
        session_json(&url, &sid, wrong).await,
        err(
            json!(10),
            -32601,
            "Tool 'failing_job' runs only as a task: call it with `params.task`"
        )
    );
    // A tool error fails a 2025-11-25 task; tasks/result still gives the tool's result.
    let call = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {
        "name": "failing_job", "task": {}}});
    let created = session_json(&url, &sid, call).await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let result = session_json(
        &url,
        &sid,
        json!({"jsonrpc": "2.0", "id": 12, "method": "tasks/result", "params": {"taskId": id}}),
    )
    .await;
    assert_eq!(result["result"]["isError"], true);
    let got = session_json(
        &url,
        &sid,
        json!({"jsonrpc": "2.0", "id": 13, "method": "tasks/get", "params": {"taskId": id}}),
    )
    .await;
    assert_eq!(got["result"]["status"], "failed");
}

#[tokio::test]
async fn a_listen_stream_hears_of_the_tasks_it_names() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let created = task_post(
        &url,
        &task_req(
            1,
            "tools/call",
            json!({"name": "confirm_delete", "arguments": {"filename": "n.txt"}}),
        ),
    )
    .await
    .1;
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    task_until(&url, &task, "input_required").await;
    // Without the extension, naming tasks is refused.
    let listen = modern_req(
        json!("l"),
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [task]}}),
    );
    let (status, _, body) =
        post_json(&url, &modern_headers("subscriptions/listen", None), &listen).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (400, json!(-32021))
    );
    let listen = task_req(
        2,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [task]}}),
    );
    let mut resp = client()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "subscriptions/listen")
        .body(listen.to_string())
        .send()
        .await
        .unwrap();
    let mut buf = String::new();
    let tag = json!({"io.modelcontextprotocol/subscriptionId": 2});
    assert_eq!(
        next_events(&mut resp, &mut buf, 1).await,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": tag, "notifications": {"taskIds": [task]}}})
        ]
    );
    // The answer resumes the task: the stream hears of it working, then completed.
    let update = task_req(
        3,
        "tasks/update",
        json!({"taskId": task, "inputResponses": {"elicit-1": {"action": "decline"}}}),
    );
    task_post(&url, &update).await;
    let events = next_events(&mut resp, &mut buf, 2).await;
    let statuses: Vec<&Value> = events.iter().map(|e| &e["params"]["status"]).collect();
    assert_eq!(statuses, [&json!("working"), &json!("completed")]);
    let done = &events[1];
    assert_eq!(done["method"], "notifications/tasks");
    assert_eq!(done["params"]["_meta"], tag);
    assert_eq!(done["params"]["taskId"], task);
    assert_eq!(
        done["params"]["result"],
        json!({"content": [{"type": "text", "text": "Kept n.txt"}], "isError": false})
    );
}

// ---------------------------------------------------------------------------------------------
// SEP-2243: parameters mirrored in `Mcp-Param-*` headers
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_mirrored_parameter_is_published_and_checked_against_its_header() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let (_, _, list) = post_json(
        &url,
        &modern_headers("tools/list", None),
        &modern_req(json!(1), "tools/list", json!({})),
    )
    .await;
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(
        tool(tools, "test_custom_header")["inputSchema"]["properties"]["value"],
        json!({"type": "string", "description": "The value", "x-mcp-header": "Value"})
    );
    let call = |value: Value| {
        modern_req(
            json!(2),
            "tools/call",
            json!({"name": "test_custom_header", "arguments": {"value": value}}),
        )
    };
    let with = |h: &'static str| {
        let mut headers = modern_headers("tools/call", Some("test_custom_header"));
        headers.push(("mcp-param-value", h));
        headers
    };
    // Accepted: the literal, its base64 form, a padded value.
    for (header, value) in [
        ("Hello", "Hello"),
        ("=?base64?SGVsbG8=?=", "Hello"),
        ("  Hello ", "Hello"),
        ("=?base64?Hello", "=?base64?Hello"),
    ] {
        let (status, _, body) = post_json(&url, &with(header), &call(json!(value))).await;
        assert_eq!(status, 200, "{header}: {body}");
        assert_eq!(
            body["result"]["content"],
            json!([{"type": "text", "text": format!("Value: {value}")}])
        );
    }
    // Refused with 400 and -32020: bad base64 (padding, characters), a mismatch, a missing header.
    let refused = |m: &str| err(json!(2), -32020, m);
    for (header, message) in [
        (
            "=?base64?SGVsbG8?=",
            "mcp-param-value header is not a valid value",
        ),
        (
            "=?base64?SGVs!!!bG8=?=",
            "mcp-param-value header is not a valid value",
        ),
        (
            "Goodbye",
            "mcp-param-value header does not match the argument 'value'",
        ),
    ] {
        let (status, _, body) = post_json(&url, &with(header), &call(json!("Hello"))).await;
        assert_eq!((status, body), (400, refused(message)), "{header}");
    }
    let (status, _, body) = post_json(
        &url,
        &modern_headers("tools/call", Some("test_custom_header")),
        &call(json!("Hello")),
    )
    .await;
    assert_eq!(
        (status, body),
        (
            400,
            refused("mcp-param-value header is missing for the argument 'value'")
        )
    );
}

#[tokio::test]
async fn a_session_lists_its_own_tasks_and_hears_of_them_on_its_get_stream() {
    let url = format!("{}/mcp/conformance/v1", example().await);
    let (a, b) = (
        open_session(&url, "2025-11-25").await,
        open_session(&url, "2025-11-25").await,
    );
    let mut stream = client()
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &a)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "slow_compute", "arguments": {"seconds": 1}, "task": {}}});
    let created = session_json(&url, &a, call).await;
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let list = |n: i64| json!({"jsonrpc": "2.0", "id": n, "method": "tasks/list"});
    let mine = session_json(&url, &a, list(3)).await;
    let ids: Vec<&Value> = mine["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["taskId"])
        .collect();
    assert_eq!(ids, [&json!(task)]);
    let theirs = session_json(&url, &b, list(4)).await;
    assert_eq!(theirs, ok(json!(4), json!({"tasks": []})));
    // Session B cannot read it either.
    let get = json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/get", "params": {"taskId": task}});
    assert_eq!(
        session_json(&url, &b, get).await,
        err(json!(5), -32602, "Unknown taskId")
    );
    // Session A's stream hears of it starting and ending.
    let mut buf = String::new();
    let events = next_events(&mut stream, &mut buf, 2).await;
    for (e, status) in events.iter().zip(["working", "completed"]) {
        assert_eq!(e["method"], "notifications/tasks/status");
        assert_eq!(e["params"]["taskId"], task);
        assert_eq!(e["params"]["status"], status);
        assert!(e["params"].get("result").is_none(), "a flat task");
    }
}
