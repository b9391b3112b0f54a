//! One exchange table through both adapters of the MCP engine: each row is what a client sends
//! and every message the server sends back for it (notifications, a question to the client,
//! the answer), exact; the same rows run over stdio and over Streamable HTTP with a session,
//! in order, on one connection and one session. What a transport adds (framing, SSE, headers,
//! the session id) is the adapter's; what is sent is the engine's, so it is the same.

use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::{ServerBuilder, serde_json};
use serde_json::{Value, json};
use tests::{Stdio, parse, serve_url};

const EX: ApiGroup = ApiGroup::mcp("ex");

/// Echoes its text.
#[rpc_method(name = "Work.echo", groups = [EX])]
fn echo(
    /// What to echo
    #[param(min_length = 1)]
    text: String,
) -> String {
    text
}

/// Counts to `n`, reporting progress and logging each step.
#[rpc_method(name = "Work.steps", groups = [EX])]
#[mcp_tool(task = "optional")]
async fn steps(
    /// How many steps
    n: u32,
    ctx: RequestContext,
) -> u32 {
    for i in 1..=n {
        ctx.log(LogLevel::Info, format!("step {i}"));
        ctx.report_progress(f64::from(i), Some(f64::from(n)), None);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    n
}

/// Asks before it acts.
#[rpc_method(name = "Work.confirm", groups = [EX])]
async fn confirm(ctx: &RequestContext) -> Result<String, RpcError> {
    let yes = ctx.confirm("Go on?").await?;
    Ok(if yes { "done" } else { "left" }.to_owned())
}

/// An item.
#[mcp_resource(uri_template = "ex://items/{id}", mime_type = "application/json", groups = [EX])]
fn item(
    /// The item's id
    #[complete(with = ids)]
    id: u32,
) -> Value {
    json!({"id": id})
}

fn ids(req: &CompletionRequest) -> Vec<String> {
    ["7", "70", "8"]
        .into_iter()
        .filter(|i| i.starts_with(&req.value))
        .map(str::to_owned)
        .collect()
}

/// Review a topic.
#[mcp_prompt(name = "review", groups = [EX])]
fn review(
    /// What to review
    topic: String,
) -> String {
    format!("Review {topic}")
}

/// The example's methods are registered in this binary too (the test kit links it): its
/// states are given so that the server builds; the table's group is `ex` alone.
fn builder() -> ServerBuilder {
    examples::with_states(Server::builder())
        .name("ex")
        .version("1.0.0")
        .mcp_stateful("ex")
        .quiet()
}

/// One row: what the client sends, the answer it gives to a question the server asks while
/// the request runs (if any), and every message the server sends for it, in order. What each
/// transport's server makes its own is written `"?"`: a question's id, a task's id and times,
/// a signed request state.
struct Row {
    what: &'static str,
    send: Send,
    reply: Option<Value>,
    expect: Vec<Value>,
}

/// What a row sends: fixed, or made from the last message of the row before (a request state
/// or a task id to send back), as that transport's server wrote it.
enum Send {
    Fixed(Value),
    After(fn(&Value) -> Value),
}

impl Send {
    fn message(&self, previous: &Value) -> Value {
        match self {
            Send::Fixed(v) => v.clone(),
            Send::After(f) => f(previous),
        }
    }
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn answer(id: u64, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: u64, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut e = json!({"code": code, "message": message});
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": e})
}

fn tool_result(id: u64, value: Value) -> Value {
    answer(
        id,
        json!({
            "content": [{"type": "text", "text": value.to_string()}],
            "structuredContent": {"result": value},
            "isError": false,
        }),
    )
}

fn progress(token: &str, done: u32, total: u32) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
        "progressToken": token, "progress": f64::from(done), "total": f64::from(total)}})
}

fn log(text: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
        "level": "info", "data": text}})
}

const VERSION: &str = "2025-11-25";

fn table() -> Vec<Row> {
    let row = |what, send, expect| Row {
        what,
        send: Send::Fixed(send),
        reply: None,
        expect,
    };
    let modern_meta = modern(json!({}));
    vec![
        row(
            "initialize",
            request(
                1,
                "initialize",
                json!({"protocolVersion": VERSION, "capabilities": {"elicitation": {}},
                    "clientInfo": {"name": "t", "version": "1"}}),
            ),
            vec![answer(
                1,
                json!({
                    "protocolVersion": VERSION,
                    "capabilities": {
                        "completions": {},
                        "logging": {},
                        "prompts": {"listChanged": true},
                        "resources": {"listChanged": true, "subscribe": true},
                        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
                        "tools": {"listChanged": true},
                    },
                    "serverInfo": {"name": "ex", "version": "1.0.0"},
                }),
            )],
        ),
        row(
            "a notification is not answered",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            vec![],
        ),
        row(
            "ping",
            request(2, "ping", json!({})),
            vec![answer(2, json!({}))],
        ),
        row(
            "a tool call",
            request(
                3,
                "tools/call",
                json!({"name": "Work.echo", "arguments": {"text": "hi"}}),
            ),
            vec![tool_result(3, json!("hi"))],
        ),
        row(
            "an unknown tool",
            request(
                4,
                "tools/call",
                json!({"name": "Work.nope", "arguments": {}}),
            ),
            vec![error(4, -32602, "Unknown tool: Work.nope", None)],
        ),
        row(
            "arguments that break the schema",
            request(
                5,
                "tools/call",
                json!({"name": "Work.echo", "arguments": {"text": ""}}),
            ),
            vec![error(
                5,
                -32602,
                "Invalid parameters for tool 'Work.echo': Property '/text': This value should not be blank.",
                Some(
                    json!({"validation_errors": [{"pointer": "/text", "keyword": "minLength",
                    "message": "This value should not be blank."}]}),
                ),
            )],
        ),
        row(
            "the session's log level",
            request(6, "logging/setLevel", json!({"level": "info"})),
            vec![answer(6, json!({}))],
        ),
        row(
            "a bad log level",
            request(7, "logging/setLevel", json!({"level": "loud"})),
            vec![error(
                7,
                -32602,
                "unknown log level `loud` (expected one of debug, info, notice, warning, error, critical, alert, emergency)",
                None,
            )],
        ),
        row(
            "progress and logs, then the answer",
            request(
                8,
                "tools/call",
                json!({"name": "Work.steps", "arguments": {"n": 2}, "_meta": {"progressToken": "p"}}),
            ),
            vec![
                log("step 1"),
                progress("p", 1, 2),
                log("step 2"),
                progress("p", 2, 2),
                tool_result(8, json!(2)),
            ],
        ),
        Row {
            what: "a question to the client, answered",
            send: Send::Fixed(request(
                9,
                "tools/call",
                json!({"name": "Work.confirm", "arguments": {}}),
            )),
            reply: Some(json!({"action": "accept", "content": {"confirm": true}})),
            expect: vec![
                json!({"jsonrpc": "2.0", "id": "?", "method": "elicitation/create", "params": {
                    "message": "Go on?",
                    "requestedSchema": {"type": "object", "properties": {
                        "confirm": {"type": "boolean", "description": "Confirm"}},
                        "required": ["confirm"]},
                }}),
                tool_result(9, json!("done")),
            ],
        },
        row(
            "a resource",
            request(10, "resources/read", json!({"uri": "ex://items/7"})),
            vec![answer(
                10,
                json!({"contents": [{"uri": "ex://items/7", "mimeType": "application/json",
                    "text": "{\"id\":7}"}]}),
            )],
        ),
        row(
            "a missing resource",
            request(11, "resources/read", json!({"uri": "ex://nothing"})),
            vec![error(
                11,
                -32002,
                "Resource not found",
                Some(json!({"uri": "ex://nothing"})),
            )],
        ),
        row(
            "completions",
            request(
                12,
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "ex://items/{id}"},
                    "argument": {"name": "id", "value": "7"}}),
            ),
            vec![answer(12, json!({"completion": {"values": ["7", "70"]}}))],
        ),
        row(
            "a prompt",
            request(
                13,
                "prompts/get",
                json!({"name": "review", "arguments": {"topic": "tea"}}),
            ),
            vec![answer(
                13,
                json!({"description": "Review a topic.", "messages": [
                    {"role": "user", "content": {"type": "text", "text": "Review tea"}}]}),
            )],
        ),
        row(
            "a subscription",
            request(14, "resources/subscribe", json!({"uri": "ex://items/7"})),
            vec![answer(14, json!({}))],
        ),
        row(
            "and its end",
            request(15, "resources/unsubscribe", json!({"uri": "ex://items/7"})),
            vec![answer(15, json!({}))],
        ),
        row(
            "a 2026-07-28 call beside the session",
            request(
                16,
                "tools/call",
                json!({"name": "Work.echo", "arguments": {"text": "now"}, "_meta": modern_meta}),
            ),
            vec![modern_tool_result(16, json!("now"))],
        ),
        row(
            "a 2026-07-28 question: the call answers with its input requests",
            request(
                17,
                "tools/call",
                json!({"name": "Work.confirm", "arguments": {}, "_meta": modern_with_elicitation()}),
            ),
            vec![answer(
                17,
                json!({
                    "resultType": "input_required",
                    "inputRequests": {"?": {"method": "elicitation/create", "params": {
                        "message": "Go on?",
                        "requestedSchema": {"type": "object", "properties": {
                            "confirm": {"type": "boolean", "description": "Confirm"}},
                            "required": ["confirm"]},
                    }}},
                    "requestState": "?",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "ex", "version": "1.0.0"}},
                }),
            )],
        ),
        Row {
            what: "and the retry with the answer completes it",
            send: Send::After(|previous| {
                let result = &previous["result"];
                let key = result["inputRequests"]
                    .as_object()
                    .and_then(|m| m.keys().next())
                    .expect("one input request")
                    .clone();
                request(
                    18,
                    "tools/call",
                    json!({"name": "Work.confirm", "arguments": {},
                        "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}},
                        "requestState": result["requestState"],
                        "_meta": modern_with_elicitation()}),
                )
            }),
            reply: None,
            expect: vec![modern_tool_result(18, json!("done"))],
        },
        row(
            "a task-augmented call answers with its task",
            request(
                19,
                "tools/call",
                json!({"name": "Work.steps", "arguments": {"n": 3}, "task": {"ttl": 60000}}),
            ),
            vec![answer(
                19,
                json!({"task": {"taskId": "?", "status": "working", "createdAt": "?",
                    "lastUpdatedAt": "?", "ttl": 60000, "pollInterval": 500}}),
            )],
        ),
        Row {
            what: "and its result, once it ends",
            send: Send::After(|previous| {
                request(
                    20,
                    "tasks/result",
                    json!({"taskId": previous["result"]["task"]["taskId"]}),
                )
            }),
            reply: None,
            expect: vec![answer(
                20,
                json!({
                    "content": [{"type": "text", "text": "3"}],
                    "structuredContent": {"result": 3},
                    "isError": false,
                    "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "?"}},
                }),
            )],
        },
    ]
}

/// A 2026-07-28 request's `_meta`, with these client capabilities.
fn modern(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

fn modern_with_elicitation() -> Value {
    modern(json!({"elicitation": {}}))
}

/// A 2026-07-28 tool result.
fn modern_tool_result(id: u64, value: Value) -> Value {
    let mut a = tool_result(id, value);
    a["result"]["resultType"] = json!("complete");
    a["result"]["_meta"] =
        json!({"io.modelcontextprotocol/serverInfo": {"name": "ex", "version": "1.0.0"}});
    a
}

/// What each transport's server makes its own, written `"?"`: a server request's id, task ids
/// and times, request states, the keys of input requests.
fn normalized(mut m: Value) -> Value {
    if m.get("method").is_some() && m.get("id").is_some() {
        m["id"] = json!("?");
    }
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, x) in map.iter_mut() {
                    if matches!(
                        k.as_str(),
                        "taskId" | "createdAt" | "lastUpdatedAt" | "requestState"
                    ) {
                        *x = json!("?");
                    } else {
                        walk(x);
                    }
                }
                if let Some(Value::Object(requests)) = map.get_mut("inputRequests") {
                    let taken = std::mem::take(requests);
                    for (i, (_, r)) in taken.into_iter().enumerate() {
                        requests.insert(if i == 0 { "?".into() } else { format!("?{i}") }, r);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut m);
    m
}

fn is_answer_to(m: &Value, id: &Value) -> bool {
    m.get("method").is_none() && m.get("id") == Some(id)
}

/// The client's response to the server's request `m`.
fn response_to(m: &Value, result: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": m["id"], "result": result})
}

async fn over_stdio(rows: &[Row]) -> Vec<Vec<Value>> {
    let server = builder().build().expect("the server builds");
    let mut io = Stdio::start(&server, "ex");
    let mut seen = Vec::new();
    let mut last = Value::Null;
    for row in rows {
        let send = row.send.message(&last);
        io.send(&send.to_string()).await;
        let mut got = Vec::new();
        if let Some(id) = send.get("id") {
            loop {
                let m = parse(&io.recv().await);
                if let (Some(reply), Some(_), Some(_)) = (&row.reply, m.get("method"), m.get("id"))
                {
                    io.send(&response_to(&m, reply).to_string()).await;
                }
                let done = is_answer_to(&m, id);
                if done {
                    last = m.clone();
                }
                got.push(normalized(m));
                if done {
                    break;
                }
            }
        }
        seen.push(got);
    }
    io.close().await;
    seen
}

/// POSTs `message` as a client would: a 2026-07-28 request with the headers its envelope asks
/// for, anything else in the session (if there is one yet).
async fn post(
    c: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    message: &Value,
) -> reqwest::Response {
    let params = &message["params"];
    let mut req = c
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(message.to_string());
    if params["_meta"]
        .get("io.modelcontextprotocol/protocolVersion")
        .is_some()
    {
        let method = message["method"].as_str().unwrap_or_default();
        req = req
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = params["name"].as_str().or(params["uri"].as_str()) {
            req = req.header("mcp-name", name);
        }
    } else if let Some(sid) = session {
        req = req
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", VERSION);
    }
    req.send().await.expect("the server answers")
}

async fn over_http(rows: &[Row]) -> Vec<Vec<Value>> {
    let base = serve_url(builder().build().expect("the server builds")).await;
    let url = format!("{base}/mcp/ex/v1");
    let c = tests::client();
    let mut session: Option<String> = None;
    let mut seen = Vec::new();
    let mut last = Value::Null;
    for row in rows {
        let send = row.send.message(&last);
        let mut res = post(&c, &url, session.as_deref(), &send).await;
        if session.is_none()
            && let Some(sid) = res.headers().get("mcp-session-id")
        {
            session = Some(sid.to_str().expect("a text header").to_owned());
        }
        let sse = res
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        let mut got = Vec::new();
        if !sse {
            let text = res.text().await.expect("a body");
            if !text.is_empty() {
                last = parse(&text);
                got.push(normalized(last.clone()));
            }
            seen.push(got);
            continue;
        }
        // Read the stream as it comes: a question must be answered before the answer comes.
        let mut buf = String::new();
        'stream: while let Some(chunk) = tokio::time::timeout(tests::TIMEOUT, res.chunk())
            .await
            .expect("in time")
            .expect("a chunk")
        {
            buf.push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
            while let Some(end) = buf.find("\n\n") {
                let frame: String = buf.drain(..end + 2).collect();
                for e in tests::sse_events(&frame) {
                    if e.data.is_empty() {
                        continue;
                    }
                    let m = parse(&e.data);
                    if let (Some(reply), Some(_), Some(_)) =
                        (&row.reply, m.get("method"), m.get("id"))
                    {
                        let r = post(&c, &url, session.as_deref(), &response_to(&m, reply)).await;
                        assert_eq!(r.status(), 202, "{}", row.what);
                    }
                    let done = is_answer_to(&m, &send["id"]);
                    if done {
                        last = m.clone();
                    }
                    got.push(normalized(m));
                    if done {
                        break 'stream;
                    }
                }
            }
        }
        seen.push(got);
    }
    seen
}

#[tokio::test]
async fn stdio_and_http_carry_the_same_exchanges() {
    let rows = table();
    let stdio = over_stdio(&rows).await;
    let http = over_http(&rows).await;
    if std::env::var_os("EXCHANGES_SHOW").is_some() {
        for (i, row) in rows.iter().enumerate() {
            eprintln!(
                "== {}\nstdio {}\nhttp  {}",
                row.what,
                Value::from(stdio[i].clone()),
                Value::from(http[i].clone())
            );
        }
    }
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(stdio[i], row.expect, "stdio: {}", row.what);
        assert_eq!(http[i], row.expect, "HTTP: {}", row.what);
    }
}
