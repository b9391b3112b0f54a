//! The core pipeline on the wire, against `catalog` processes: assertions, cache, locks and
//! events on `/rpc` and MCP, in memory and shared through Redis (started here on a free
//! port), including a Redis outage in the middle of a run.

use std::time::Duration;

use serde_json::{Value, json};

mod common;

type Proc = common::Spawned;

fn catalog(env: &[(&str, &str)]) -> Proc {
    Proc::catalog(env)
}

use common::Redis;

async fn rpc(p: &Proc, group: &str, body: Value) -> Value {
    let url = format!("http://{}/rpc/{group}/v1", p.addr);
    let res = reqwest::Client::new()
        .post(url)
        .json(&body)
        .send()
        .await
        .expect("request");
    res.json().await.expect("json body")
}

async fn call(p: &Proc, method: &str, params: Value) -> Value {
    rpc(
        p,
        "mcp",
        json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}),
    )
    .await
}

async fn tool(p: &Proc, name: &str, args: Value) -> Value {
    let url = format!("http://{}/mcp/mcp/v1", p.addr);
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":name,"arguments":args}});
    reqwest::Client::new()
        .post(url)
        .json(&body)
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json")
}

async fn counts(p: &Proc) -> Value {
    rpc(
        p,
        "internal",
        json!({"jsonrpc":"2.0","id":1,"method":"Events.counts"}),
    )
    .await["result"]
        .clone()
}

fn delta(before: &Value, after: &Value, key: &str) -> i64 {
    after[key].as_i64().unwrap_or(0) - before[key].as_i64().unwrap_or(0)
}

#[tokio::test]
async fn assertions_on_both_faces_report_every_violation() {
    let p = catalog(&[]);
    // The reference's example, exactly.
    let r = call(
        &p,
        "Mail.send",
        json!({"email":"nope","subject":"Hi","text":"0123456789"}),
    )
    .await;
    assert_eq!(
        r,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid Data for call method: Mail.send",
            "data":{"email":["This value is not a valid email address."]}}})
    );
    // Positional params are validated too, every violation at once.
    let r = call(&p, "Mail.send", json!(["nope", "   ", "short"])).await;
    assert_eq!(
        r["error"]["data"],
        json!({"email":["This value is not a valid email address."],"subject":["This value should not be blank."],
            "text":["This value is too short. It should have 10 characters or more."]})
    );
    // An empty subject breaks `not_blank` once (its two keywords say the same thing).
    let r = call(
        &p,
        "Mail.send",
        json!({"email":"a@b.co","subject":"","text":"0123456789"}),
    )
    .await;
    assert_eq!(
        r["error"]["data"],
        json!({"subject":["This value should not be blank."]})
    );
    let r = tool(
        &p,
        "Mail.send",
        json!({"email":"a@b.co","subject":"","text":"0123456789"}),
    )
    .await;
    assert_eq!(
        r["error"]["message"],
        "Invalid parameters for tool 'Mail.send': Property '/subject': This value should not be blank."
    );
    let long = "x".repeat(101);
    let r = call(
        &p,
        "Mail.send",
        json!({"email":"a@b.co","subject":long,"text":"0123456789"}),
    )
    .await;
    assert_eq!(
        r["error"]["data"],
        json!({"subject":["This value is too long. It should have 100 characters or less."]})
    );
    // A custom check runs after the schema: the same error shape on /rpc...
    let r = call(
        &p,
        "Mail.send",
        json!({"email":"x@mailinator.com","subject":"Hi","text":"0123456789"}),
    )
    .await;
    assert_eq!(
        r["error"],
        json!({"code":-32602,"message":"Invalid Data for call method: Mail.send",
            "data":{"email":["Disposable addresses (mailinator.com) are not accepted."]}})
    );
    // ...and on MCP a schema violation is a JSON-RPC error, a failed check a tool error.
    let r = tool(
        &p,
        "Mail.send",
        json!({"email":"nope","subject":"Hi","text":"0123456789"}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(
        r["error"]["message"],
        "Invalid parameters for tool 'Mail.send': Property '/email': This value is not a valid email address."
    );
    let r = tool(
        &p,
        "Mail.send",
        json!({"email":"x@mailinator.com","subject":"Hi","text":"0123456789"}),
    )
    .await;
    assert_eq!(r["result"]["isError"], true);
    let ok = tool(
        &p,
        "Mail.send",
        json!({"email":"a@b.co","subject":"Hi","text":"0123456789"}),
    )
    .await;
    assert_eq!(
        ok["result"]["structuredContent"],
        json!({"result":{"queued":true,"to":"a@b.co"}})
    );
}

#[tokio::test]
async fn the_schema_shows_every_constraint() {
    let p = catalog(&[]);
    let url = format!("http://{}/mcp/mcp/v1", p.addr);
    let list: Value = reqwest::Client::new()
        .post(url)
        .json(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tools = list["result"]["tools"].as_array().unwrap();
    let mail = tools.iter().find(|t| t["name"] == "Mail.send").unwrap();
    assert_eq!(
        mail["inputSchema"]["properties"],
        json!({
            "email":{"type":"string","format":"email","description":"Recipient address"},
            "subject":{"type":"string","minLength":1,"pattern":"\\S","maxLength":100,
                "description":"Subject line, at most 100 characters"},
            "text":{"type":"string","minLength":10,"description":"Message body, at least 10 characters"}
        })
    );
}

#[tokio::test]
async fn cache_hits_do_not_run_the_method_or_fire_later_events() {
    let p = catalog(&[("APP_ENV", "prod")]);
    let a1 = call(&p, "Stats.hits", json!({})).await["result"].clone();
    // `post_response` work runs after the answer is written: let it finish before counting.
    let settle = || tokio::time::sleep(Duration::from_millis(100));
    settle().await;
    let before = counts(&p).await;
    let a2 = call(&p, "Stats.hits", json!({"key":"a"})).await["result"].clone();
    settle().await;
    let after = counts(&p).await;
    assert_eq!(a1, a2, "a hit repeats the earlier result");
    // Between the two counts: the hit fired `request` only (plus the counts call itself).
    assert_eq!(delta(&before, &after, "request"), 2);
    assert_eq!(delta(&before, &after, "pre_execute"), 1);
    assert_eq!(delta(&before, &after, "post_response"), 1);
    let b = call(&p, "Stats.hits", json!({"key":"b"})).await["result"].clone();
    assert_eq!(b["key"], "b");
    assert!(
        b["runs"].as_u64() > a1["runs"].as_u64(),
        "another key runs the method"
    );
    // `$rpc.ignoreCache` skips the lookup but stores the new result.
    let fresh = call(
        &p,
        "Stats.hits",
        json!({"key":"a","$rpc":{"ignoreCache":true}}),
    )
    .await["result"]
        .clone();
    assert!(fresh["runs"].as_u64() > b["runs"].as_u64());
    assert_eq!(
        call(&p, "Stats.hits", json!({"key":"a"})).await["result"],
        fresh
    );
    // The MCP face shares the cache.
    assert_eq!(
        tool(&p, "Stats.hits", json!({"key":"a"})).await["result"]["structuredContent"]["result"],
        fresh
    );
    // Errors are never cached.
    let e1 = call(&p, "Stats.hits", json!({"key": 5})).await;
    assert_eq!(e1["error"]["code"], -32602);
}

#[tokio::test]
async fn caching_is_off_in_dev() {
    let p = catalog(&[("APP_ENV", "dev")]);
    let a = call(&p, "Stats.hits", json!({})).await["result"]["runs"].clone();
    let b = call(&p, "Stats.hits", json!({})).await["result"]["runs"].clone();
    assert_ne!(a, b);
}

#[tokio::test]
async fn a_hundred_concurrent_payments_of_one_order_run_one_at_a_time() {
    let p = catalog(&[]);
    let calls = (0..100).map(|_| call(&p, "Orders.pay", json!({"order_id": 42, "hold_ms": 500})));
    let results = futures_util::future::join_all(calls).await;
    let ok = results
        .iter()
        .filter(|r| r["result"]["paid"] == true)
        .count();
    let locked: Vec<&Value> = results
        .iter()
        .filter(|r| r["error"]["code"] == -32400)
        .collect();
    assert_eq!(ok, 1, "exactly one holder");
    assert_eq!(locked.len(), 99);
    assert_eq!(
        locked[0]["error"]["message"],
        "Method 'Orders.pay' is locked."
    );
    // Released after the call: the next one runs; another order was never blocked.
    assert_eq!(
        call(&p, "Orders.pay", json!({"order_id": 42})).await["result"]["paid"],
        true
    );
    assert_eq!(
        call(&p, "Orders.pay", json!({"order_id": 43})).await["result"]["paid"],
        true
    );
    // An MCP client that cannot be asked to confirm is refused, not paid (fail-closed).
    assert_eq!(
        tool(&p, "Orders.pay", json!({"order_id": 44})).await["error"],
        json!({"code": -32021,
            "message": "This call needs the user's confirmation and cannot ask its client: over JSON-RPC, or on the handshake era without a session and an SSE response",
            "data": {"requiredCapabilities": {"elicitation": {}}}})
    );
}

#[tokio::test]
async fn post_response_fires_once_per_executed_call_never_for_errors() {
    let p = catalog(&[]);
    let before = counts(&p).await;
    let url = format!("http://{}/rpc/mcp/v1", p.addr);
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"Catalog.ping"},
        {"jsonrpc":"2.0","id":2,"method":"Catalog.get","params":{"id":1}},
        {"jsonrpc":"2.0","id":3,"method":"Catalog.get","params":{"id":999}},
        {"jsonrpc":"2.0","method":"Catalog.ping"}
    ]);
    let r: Value = reqwest::Client::new()
        .post(url)
        .json(&batch)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r.as_array().map(Vec::len), Some(3));
    tool(&p, "Catalog.ping", json!({})).await;
    tool(&p, "Catalog.get", json!({"id": 999})).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let after = counts(&p).await;
    // 3 successful batch items (one a notification) + 1 tools/call + the first counts call.
    assert_eq!(delta(&before, &after, "post_response"), 5);
    assert_eq!(delta(&before, &after, "error"), 2);
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn two_processes_share_cache_and_locks_through_redis() {
    let redis = Redis::start();
    let url = redis.url();
    let a = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    let b = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    let from_a = call(&a, "Stats.hits", json!({"key":"shared"})).await["result"].clone();
    assert_eq!(from_a["runs"], 1);
    // B never ran it, yet answers with A's entry.
    assert_eq!(
        call(&b, "Stats.hits", json!({"key":"shared"})).await["result"],
        from_a
    );
    let hold = call(&a, "Orders.pay", json!({"order_id": 7, "hold_ms": 800}));
    let contend = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        call(&b, "Orders.pay", json!({"order_id": 7})).await
    };
    let (held, refused) = tokio::join!(hold, contend);
    assert_eq!(held["result"]["paid"], true);
    assert_eq!(
        refused["error"]["message"],
        "Method 'Orders.pay' is locked."
    );
    assert_eq!(
        call(&b, "Orders.pay", json!({"order_id": 7})).await["result"]["paid"],
        true
    );
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn redis_outage_cache_fails_open_locks_fail_closed_and_both_recover() {
    let mut redis = Redis::start();
    let url = redis.url();
    let p = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    assert_eq!(
        call(&p, "Orders.pay", json!({"order_id": 1})).await["result"]["paid"],
        true
    );
    let cached = call(&p, "Stats.hits", json!({"key":"k"})).await["result"].clone();
    redis.stop();
    // Cache down: the call still succeeds, uncached (a new run each time).
    let r1 = call(&p, "Stats.hits", json!({"key":"k"})).await["result"].clone();
    let r2 = call(&p, "Stats.hits", json!({"key":"k"})).await["result"].clone();
    assert_eq!(r1["key"], "k");
    assert_ne!(r1["runs"], r2["runs"]);
    assert!(r1["runs"].as_u64() > cached["runs"].as_u64());
    // Lock down: the call fails with a clear error, and the method did not run.
    let e = call(&p, "Orders.pay", json!({"order_id": 1})).await;
    assert_eq!(e["error"]["code"], -32500);
    // The store's own error text stays in the log.
    assert_eq!(
        e["error"]["message"],
        "Method 'Orders.pay' cannot take its lock: the lock store is unavailable"
    );
    redis.restart();
    // Back: locks work again and results are cached again.
    let mut ok = false;
    for _ in 0..40 {
        if call(&p, "Orders.pay", json!({"order_id": 1})).await["result"]["paid"] == true {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(ok, "locks recover when Redis is back");
    let c1 = call(&p, "Stats.hits", json!({"key":"after"})).await["result"].clone();
    assert_eq!(
        call(&p, "Stats.hits", json!({"key":"after"})).await["result"],
        c1
    );
}

async fn mcp_post(p: &Proc, session: Option<&str>, body: Value) -> (u16, Option<String>, String) {
    let mut req = reqwest::Client::new()
        .post(format!("http://{}/mcp/conformance/v1", p.addr))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&body);
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    let r = req.send().await.expect("request");
    let status = r.status().as_u16();
    let sid = r
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, sid, r.text().await.unwrap_or_default())
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn mcp_sessions_are_shared_by_instances_through_redis() {
    let redis = Redis::start();
    let url = redis.url();
    let a = catalog(&[("REDIS_URL", &url)]);
    let b = catalog(&[("REDIS_URL", &url)]);
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize",
        "params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let (status, sid, _) = mcp_post(&a, None, init).await;
    assert_eq!(status, 200);
    let sid = sid.expect("a session id");
    // Instance B knows the session A created.
    let (status, _, body) = mcp_post(
        &b,
        Some(&sid),
        json!({"jsonrpc":"2.0","id":2,"method":"ping"}),
    )
    .await;
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#)
    );
    let (status, _, _) = mcp_post(
        &b,
        Some("not-a-session"),
        json!({"jsonrpc":"2.0","id":3,"method":"ping"}),
    )
    .await;
    assert_eq!(status, 404);
    // Ended on B, gone on A.
    let del = reqwest::Client::new()
        .delete(format!("http://{}/mcp/conformance/v1", b.addr))
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), 200);
    let (status, _, _) = mcp_post(
        &a,
        Some(&sid),
        json!({"jsonrpc":"2.0","id":4,"method":"ping"}),
    )
    .await;
    assert_eq!(status, 404);
}

/// A 2026-07-28 request to group `conformance` of `p`.
fn modern_post(
    p: &Proc,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> reqwest::RequestBuilder {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let mut req = reqwest::Client::new()
        .post(format!("http://{}/mcp/conformance/v1", p.addr))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(n) = name {
        req = req.header("mcp-name", n);
    }
    req.json(&json!({"jsonrpc": "2.0", "id": "l", "method": method, "params": params}))
}

/// Reads a stream until its text holds `needle` (or ten seconds pass).
async fn read_until(resp: &mut reqwest::Response, needle: &str) -> String {
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !text.contains(needle) {
        match tokio::time::timeout_at(deadline, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
            _ => break,
        }
    }
    text
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_change_announced_on_one_instance_reaches_a_listener_on_another_through_redis() {
    let redis = Redis::start();
    let url = redis.url();
    let (a, b) = (
        catalog(&[("REDIS_URL", &url)]),
        catalog(&[("REDIS_URL", &url)]),
    );
    let listen = json!({"notifications": {"promptsListChanged": true}});
    let mut stream = modern_post(&a, "subscriptions/listen", None, listen)
        .send()
        .await
        .expect("listen");
    assert_eq!(stream.status(), 200);
    let ack = read_until(&mut stream, "acknowledged").await;
    assert!(
        ack.contains("notifications/subscriptions/acknowledged"),
        "{ack}"
    );
    // The relay subscribes as the first stream opens: give it a moment before announcing.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let call = json!({"name": "test_trigger_prompt_change", "arguments": {}});
    let answer: Value = modern_post(&b, "tools/call", Some("test_trigger_prompt_change"), call)
        .send()
        .await
        .expect("trigger")
        .json()
        .await
        .expect("json");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let seen = read_until(&mut stream, "prompts/list_changed").await;
    assert!(
        seen.contains(r#"{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l"}}}"#),
        "instance A heard of B's change: {seen}"
    );
}

/// A 2026-07-28 request to group `conformance` from a client that declares the tasks
/// extension and elicitation.
async fn modern(p: &Proc, id: u64, method: &str, params: Value) -> Value {
    modern_in(p, "conformance", id, method, params).await
}

/// [`modern`] on the endpoint of `group`, v1.
async fn modern_in(p: &Proc, group: &str, id: u64, method: &str, params: Value) -> Value {
    common::modern(&format!("http://{}", p.addr), group, id, method, params).await
}

/// A 2026-07-28 call of `slow_compute` (a minute) on `p`, which becomes a task: its id.
async fn slow_task(p: &Proc, id: u64) -> String {
    let created = modern(
        p,
        id,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 60}}),
    )
    .await;
    created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned()
}

/// Polls `tasks/get` on `p` until the task's status is `status` (at most `secs` seconds).
async fn task_status(p: &Proc, task: &str, status: &str, secs: u64) -> Value {
    task_status_in(p, "conformance", task, status, secs).await
}

/// [`task_status`] of a task of the endpoint of `group`.
async fn task_status_in(p: &Proc, group: &str, task: &str, status: &str, secs: u64) -> Value {
    common::task_status(&format!("http://{}", p.addr), group, task, status, secs).await
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn any_instance_answers_and_cancels_for_a_task_another_runs() {
    let redis = Redis::start();
    let url = redis.url();
    let a = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    let b = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    // A runs the task; B shows it, takes the answer and hands it over.
    let created = modern(
        &a,
        1,
        "tools/call",
        json!({"name": "confirm_delete", "arguments": {"filename": "r.txt"}}),
    )
    .await;
    let task = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let waiting = task_status(&b, &task, "input_required", 10).await;
    let key = waiting["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next())
        .expect("a question")
        .clone();
    let ack = modern(
        &b,
        2,
        "tasks/update",
        json!({"taskId": task, "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}}}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete");
    let done = task_status(&b, &task, "completed", 10).await;
    assert_eq!(
        done["result"]["content"],
        json!([{"type": "text", "text": "Deleted r.txt"}])
    );
    // B cancels a task A runs.
    let task = slow_task(&a, 3).await;
    task_status(&b, &task, "working", 10).await;
    let ack = modern(&b, 4, "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(ack["result"]["resultType"], "complete");
    task_status(&b, &task, "cancelled", 10).await;
    // What happens when A stops while its task runs: see
    // `a_task_whose_instance_is_killed_is_run_again_and_completed_by_another`.
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn an_operator_lists_shows_and_cancels_every_instances_tasks() {
    let redis = Redis::start();
    let url = redis.url();
    let a = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    let b = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    let (on_a, on_b) = (slow_task(&a, 1).await, slow_task(&b, 2).await);
    let lines = |out: &str| -> Vec<Value> {
        out.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let (ok, out) = common::tasks_cli(&url, &["list"], &[]);
    assert!(ok, "{out}");
    let listed = lines(&out);
    assert_eq!(
        listed
            .iter()
            .map(|t| (
                t["id"].as_str().unwrap(),
                t["status"].as_str().unwrap(),
                t["running"].as_bool().unwrap()
            ))
            .collect::<Vec<_>>(),
        [
            (on_a.as_str(), "working", true),
            (on_b.as_str(), "working", true)
        ],
        "both instances' tasks, oldest first: {out}"
    );
    assert_eq!(listed[0]["owner"], "conformance/v1");
    // Cancelled from the command line, on the instance that runs it.
    let (ok, _) = common::tasks_cli(&url, &["cancel", &on_a], &[]);
    assert!(ok);
    task_status(&b, &on_a, "cancelled", 10).await;
    let (ok, out) = common::tasks_cli(&url, &["show", &on_a], &[]);
    assert!(ok, "{out}");
    let shown = &lines(&out)[0];
    assert_eq!(
        (shown["status"].as_str(), shown["running"].as_bool()),
        (Some("cancelled"), Some(false)),
        "{shown}"
    );
    // What cannot be done says why.
    let (ok, _) = common::tasks_cli(&url, &["cancel", &on_a], &[]);
    assert!(!ok, "an ended task is not cancelled again");
    let (ok, _) = common::tasks_cli(&url, &["show", "nope"], &[]);
    assert!(!ok);
    let ack = modern(&b, 3, "tasks/cancel", json!({"taskId": on_b})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_task_is_found_on_another_instance_as_soon_as_its_id_is_answered() {
    let redis = Redis::start();
    let url = redis.url();
    let a = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    let b = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    // Each id is read on the other instance the moment it is answered: the record was
    // stored before the answer, never after it.
    for i in 0..300 {
        let task = slow_task(&a, i).await;
        let got = modern(&b, i, "tasks/get", json!({"taskId": task})).await;
        assert_eq!(got["result"]["status"], "working", "try {i}: {got}");
        // Its place is given back for the next one.
        let ack = modern(&a, i, "tasks/cancel", json!({"taskId": task})).await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    }
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn readiness_follows_redis_and_liveness_does_not() {
    let mut redis = Redis::start();
    let url = redis.url();
    let a = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    let c = reqwest::Client::new();
    let probe = |path: &'static str| {
        let (c, url) = (c.clone(), format!("http://{}{path}", a.addr));
        async move {
            let r = c.get(url).send().await.expect("answered");
            let status = r.status().as_u16();
            (status, r.json::<Value>().await.expect("json"))
        }
    };
    let ready = (200, json!({"status": "ready"}));
    let live = (200, json!({"status": "ok"}));
    assert_eq!(probe("/readyz").await, ready);
    // Hung: PING times out; stopped: it is refused. Either way not ready, still alive.
    for outage in ["hung", "stopped"] {
        if outage == "hung" {
            redis.pause();
            // The cache fails open: every call is answered, the first few after the
            // connection's timeouts, then at once: the breaker no longer asks Redis.
            for i in 0..2 * 3 {
                let got = call(&a, "Stats.hits", json!({"key": format!("k{i}")})).await;
                assert!(got["result"]["runs"].is_u64(), "answered uncached: {got}");
            }
            let (_, body) = probe("/readyz").await;
            assert!(
                body["reasons"][0]
                    .as_str()
                    .is_some_and(|r| r.contains("Redis is unavailable: not asked for another")),
                "the breaker is open: {body}"
            );
            // The locks fail closed.
            let got = call(&a, "Orders.pay", json!({"order_id": 1})).await;
            assert!(
                got["error"].is_object(),
                "refused while the lock store is out: {got}"
            );
        } else {
            redis.stop();
        }
        let (status, body) = probe("/readyz").await;
        assert_eq!(status, 503, "{outage}: {body}");
        assert_eq!(body["status"], "unready");
        let reasons = body["reasons"].as_array().expect("reasons");
        assert!(
            reasons.len() == 1
                && reasons[0]
                    .as_str()
                    .is_some_and(|r| r.starts_with("redis: ")),
            "{outage}: {body}"
        );
        assert_eq!(probe("/healthz").await, live);
        if outage == "hung" {
            redis.resume();
        } else {
            redis.restart();
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while probe("/readyz").await != ready {
            assert!(
                tokio::time::Instant::now() < deadline,
                "ready again after {outage}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Polls task `task` of the `mcp` group on `p` until it is completed (at most a minute, the
/// time a take-over needs), failing if it is ever anything but `working` before: the task.
async fn working_until_completed(p: &Proc, task: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let got = modern_in(p, "mcp", 2, "tasks/get", json!({"taskId": task})).await;
        let status = got["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if status == "completed" {
            return got["result"].clone();
        }
        // Never failed nor lost, never asking again.
        assert_eq!(status, "working", "{got}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "not taken over: {got}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_task_whose_instance_is_killed_is_run_again_and_completed_by_another() {
    let redis = Redis::start();
    let url = redis.url();
    let mut a = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    let b = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    // Four seconds of work, accepted by A.
    let created = modern_in(
        &a,
        "mcp",
        1,
        "tools/call",
        json!({"name": "Jobs.run", "arguments": {"steps": 40, "step_ms": 100}}),
    )
    .await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    task_status_in(&b, "mcp", &task, "working", 10).await;
    // A dies mid-way (SIGKILL: nothing is finished, nothing handed over).
    tokio::time::sleep(Duration::from_millis(500)).await;
    a.kill();
    // B sees it working all along, then completed: it ran the job again, its second run.
    let done = working_until_completed(&b, &task).await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"result": {"steps": 40, "attempt": 2}}),
        "{done}"
    );
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_task_taken_over_is_given_the_answers_its_client_gave_and_does_not_ask_again() {
    let redis = Redis::start();
    let url = redis.url();
    let mut a = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    let b = catalog(&[("REDIS_URL", &url), ("APP_ENV", "prod")]);
    // Two steps of two seconds, the user asked before the second; accepted by A.
    let job =
        json!({"name": "Jobs.run", "arguments": {"steps": 2, "step_ms": 2000, "confirm": true}});
    let created = modern_in(&a, "mcp", 1, "tools/call", job).await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    let asked = task_status_in(&b, "mcp", &task, "input_required", 10).await;
    let questions = asked["inputRequests"].as_object().expect("a question");
    assert_eq!(
        questions.keys().collect::<Vec<_>>(),
        ["confirm-1"],
        "{asked}"
    );
    assert_eq!(
        questions["confirm-1"]["params"]["message"],
        "Finish the job (step 2 of 2)?"
    );
    let answer = json!({"action": "accept", "content": {"confirm": true}});
    let ack = modern_in(
        &b,
        "mcp",
        2,
        "tasks/update",
        json!({"taskId": task, "inputResponses": {"confirm-1": answer}}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    task_status_in(&b, "mcp", &task, "working", 10).await;
    // A dies in its second step, after the answer.
    a.kill();
    // B runs the job again from its start, and the same question is answered with what the
    // client said: the task never waits for input again.
    let done = working_until_completed(&b, &task).await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"result": {"steps": 2, "attempt": 2}}),
        "{done}"
    );
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn tasks_outlive_every_instance_and_a_redis_restart() {
    let mut redis = Redis::durable();
    let url = redis.url();
    let env = [("REDIS_URL", url.as_str()), ("APP_ENV", "prod")];
    let (mut a, mut b) = (catalog(&env), catalog(&env));
    let job = json!({"name": "Jobs.run", "arguments": {"steps": 10, "step_ms": 100}});
    let mut tasks = Vec::new();
    for (i, p) in [&a, &a, &b].into_iter().enumerate() {
        let created = modern_in(p, "mcp", i as u64, "tools/call", job.clone()).await;
        let task = created["result"]["taskId"].as_str().map(str::to_owned);
        tasks.push(task.unwrap_or_else(|| panic!("a task: {created}")));
    }
    // Every instance stops while its tasks run, and Redis restarts from its append-only file
    // (written every second).
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.kill();
    b.kill();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    redis.stop();
    redis.restart();
    // A new instance completes them all: each its second run.
    let c = catalog(&env);
    for task in &tasks {
        let done = task_status_in(&c, "mcp", task, "completed", 60).await;
        assert_eq!(
            done["result"]["structuredContent"],
            json!({"result": {"steps": 10, "attempt": 2}}),
            "{done}"
        );
    }
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_task_that_must_not_run_twice_fails_when_its_instance_is_killed() {
    let redis = Redis::start();
    let url = redis.url();
    let env = [("REDIS_URL", url.as_str()), ("APP_ENV", "prod")];
    let (mut a, b) = (catalog(&env), catalog(&env));
    let job = json!({"name": "Jobs.once", "arguments": {"steps": 40, "step_ms": 100}});
    let created = modern_in(&a, "mcp", 1, "tools/call", job).await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    task_status_in(&b, "mcp", &task, "working", 10).await;
    a.kill();
    let failed = task_status_in(&b, "mcp", &task, "failed", 60).await;
    assert_eq!(
        failed["error"],
        json!({"code": -32603, "message": "The instance running the task stopped, and tool 'Jobs.once' is not run again (retry = false)"}),
        "{failed}"
    );
}

/// A 2025-11-25 request to the `mcp` group's endpoint of `p`, without a session: the answer.
async fn handshake(p: &Proc, id: u64, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    reqwest::Client::new()
        .post(p.url("mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&body)
        .send()
        .await
        .expect("request")
        .json::<Value>()
        .await
        .expect("json")
}

/// A 2025-11-25 task of three seconds' work (`Jobs.run`) started on `p`: its id.
async fn handshake_job(p: &Proc) -> String {
    let created = handshake(
        p,
        1,
        "tools/call",
        json!({"name": "Jobs.run", "arguments": {"steps": 30, "step_ms": 100}, "task": {"ttl": 60000}}),
    )
    .await;
    created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned()
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_2025_11_25_task_whose_instance_is_killed_is_completed_by_another() {
    let redis = Redis::start();
    let url = redis.url();
    let env = [("REDIS_URL", url.as_str()), ("APP_ENV", "prod")];
    let (mut a, b) = (catalog(&env), catalog(&env));
    let task = handshake_job(&a).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.kill();
    // `tasks/result` on B waits for the end: the run B took over.
    let done = handshake(&b, 2, "tasks/result", json!({"taskId": task})).await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"result": {"steps": 30, "attempt": 2}}),
        "{done}"
    );
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_worker_runs_the_tasks_a_front_accepted() {
    let redis = Redis::start();
    let url = redis.url();
    let env = [("REDIS_URL", url.as_str()), ("APP_ENV", "prod")];
    let front_env = [env[0], env[1], ("CATALOG_RUNS_WORK", "false")];
    let front = catalog(&front_env);
    let job = json!({"name": "Jobs.run", "arguments": {"steps": 5, "step_ms": 100}});
    let created = modern_in(&front, "mcp", 1, "tools/call", job).await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    // Half a second of work, and no worker yet: nobody runs it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let waiting = modern_in(&front, "mcp", 2, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(waiting["result"]["status"], "working", "{waiting}");
    // A worker (no MCP or JSON-RPC endpoints, health only) runs it: its first run.
    let worker = Proc::start_command(env!("CARGO_BIN_EXE_catalog"), "catalog", &["worker"], &env);
    let c = reqwest::Client::new();
    let health = c.get(format!("http://{}/readyz", worker.addr)).send().await;
    assert_eq!(health.map(|r| r.status().as_u16()).ok(), Some(200));
    let endpoint = c.post(worker.url("mcp")).send().await.expect("answered");
    assert_eq!(endpoint.status(), 404, "a worker serves no endpoint");
    let done = task_status_in(&front, "mcp", &task, "completed", 30).await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"result": {"steps": 5}}),
        "{done}"
    );
}

/// A front keeps none of the tasks it hands on, so the queue bounds them: one caller queues
/// its share (`Limits::tasks_queued_per_caller`, 100) and its next call is not queued, another
/// caller's is, and once a worker has run them the first may queue again.
#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_front_queues_a_callers_share_of_tasks_and_no_more() {
    let redis = Redis::start();
    let url = redis.url();
    let env = [("REDIS_URL", url.as_str()), ("APP_ENV", "prod")];
    let front = catalog(&[env[0], env[1], ("CATALOG_RUNS_WORK", "false")]);
    let base = format!("http://{}", front.addr);
    let job = json!({"name": "Jobs.run", "arguments": {"steps": 1, "step_ms": 1}});
    let mut tasks = Vec::new();
    for i in 0..100 {
        let created = modern_in(&front, "mcp", i, "tools/call", job.clone()).await;
        let task = created["result"]["taskId"].as_str();
        tasks.push(
            task.unwrap_or_else(|| panic!("task {i}: {created}"))
                .to_owned(),
        );
    }
    // The next is not queued: as any call that cannot become a task, it runs on as a plain
    // one, answered on its request (which the caller's share of open calls bounds).
    let plain = modern_in(&front, "mcp", 100, "tools/call", job.clone()).await;
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    assert_eq!(
        plain["result"]["structuredContent"],
        json!({"result": {"steps": 1}})
    );
    // Another caller (another address) has its own share.
    let other = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .build()
        .expect("a client");
    let created = common::modern_from(&other, &base, "mcp", 1, "tools/call", job.clone()).await;
    assert!(created["result"]["taskId"].is_string(), "{created}");
    // A worker runs them all; their entries go, and the first caller queues again.
    let _worker = Proc::start_command(env!("CARGO_BIN_EXE_catalog"), "catalog", &["worker"], &env);
    for task in &tasks {
        task_status_in(&front, "mcp", task, "completed", 60).await;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let again = modern_in(&front, "mcp", 101, "tools/call", job.clone()).await;
        if again["result"]["taskId"].is_string() {
            break;
        }
        // An entry is deleted just after its task's end is stored.
        assert!(tokio::time::Instant::now() < deadline, "{again}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_queued_task_is_cancelled_by_its_client_or_an_operator_and_never_run() {
    let redis = Redis::start();
    let url = redis.url();
    let env = [("REDIS_URL", url.as_str()), ("APP_ENV", "prod")];
    let front_env = [env[0], env[1], ("CATALOG_RUNS_WORK", "false")];
    let front = catalog(&front_env);
    let job = json!({"name": "Jobs.run", "arguments": {"steps": 3, "step_ms": 100}});
    let mut ids = Vec::new();
    for i in 0..3 {
        let created = modern_in(&front, "mcp", i, "tools/call", job.clone()).await;
        let task = created["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {created}"))
            .to_owned();
        ids.push(task);
    }
    // No instance runs them: the client's cancel ends the first at once, the operator's the
    // second.
    let ack = modern_in(&front, "mcp", 10, "tasks/cancel", json!({"taskId": ids[0]})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let got = modern_in(&front, "mcp", 11, "tasks/get", json!({"taskId": ids[0]})).await;
    assert_eq!(
        (&got["result"]["status"], &got["result"]["statusMessage"]),
        (&json!("cancelled"), &json!("Cancelled by the client")),
        "{got}"
    );
    let (ok, out) = common::tasks_cli(&url, &["cancel", &ids[1]], &[]);
    assert!(ok, "{out}");
    let (ok, out) = common::tasks_cli(&url, &["cancel", &ids[1]], &[]);
    assert!(!ok, "cancelled already: {out}");
    assert!(out.contains("has ended (cancelled)"), "{out}");
    // A worker runs the third and forgets the two cancelled ones: they are never run.
    let worker = Proc::start_command(env!("CARGO_BIN_EXE_catalog"), "catalog", &["worker"], &env);
    task_status_in(&front, "mcp", &ids[2], "completed", 30).await;
    for task in &ids[..2] {
        let got = modern_in(&front, "mcp", 12, "tasks/get", json!({"taskId": task})).await;
        assert_eq!(got["result"]["status"], "cancelled", "{got}");
    }
    let ran: Vec<String> = worker
        .log()
        .into_iter()
        .filter(|l| l.contains("running queued work"))
        .collect();
    assert_eq!(ran.len(), 1, "{ran:?}");
    assert!(ran[0].contains(&ids[2]), "{ran:?}");
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_2025_11_25_task_is_cancelled_at_once_on_any_instance() {
    let redis = Redis::start();
    let url = redis.url();
    let env = [("REDIS_URL", url.as_str()), ("APP_ENV", "prod")];
    let (a, b) = (catalog(&env), catalog(&env));
    let task = handshake_job(&a).await;
    // B does not run it, and answers the cancel with the cancelled task.
    let cancelled = handshake(&b, 2, "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["result"]["taskId"], task.as_str(), "{cancelled}");
    let again = handshake(&b, 3, "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(again["error"]["code"], -32602, "{again}");
    assert_eq!(
        again["error"]["message"],
        format!("Task {task} has already ended (cancelled)"),
        "{again}"
    );
    // A stopped its run: past the three seconds it would have taken, it is still cancelled,
    // on both instances.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    for (p, id) in [(&a, 4), (&b, 5)] {
        let got = handshake(p, id, "tasks/get", json!({"taskId": task})).await;
        assert_eq!(got["result"]["status"], "cancelled", "{got}");
    }
}

#[tokio::test]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn an_asynchronous_call_whose_instance_is_killed_is_delivered_by_another() {
    // The webhook: every POST it receives.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let app =
        axum::Router::new().fallback(move |method: axum::http::Method, body: axum::body::Bytes| {
            let tx = tx.clone();
            async move {
                if method == axum::http::Method::POST
                    && let Ok(v) = serde_json::from_slice::<Value>(&body)
                    && v.get("jsonrpc").is_some()
                {
                    let _ = tx.send(v);
                }
                axum::http::StatusCode::OK
            }
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hooks/jobs", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let redis = Redis::start();
    let url = redis.url();
    let env = [
        ("REDIS_URL", url.as_str()),
        ("APP_ENV", "prod"),
        ("CATALOG_WEBHOOK_ALLOW_HOSTS", "127.0.0.1"),
    ];
    let (mut a, _b) = (catalog(&env), catalog(&env));
    let ack = rpc(
        &a,
        "mcp",
        json!({"jsonrpc": "2.0", "id": 1, "method": "Jobs.run",
            "params": {"steps": 30, "step_ms": 100, "$rpc": {"callback": hook, "timeout": 30}}}),
    )
    .await;
    assert_eq!(ack["result"]["async"], true, "{ack}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    a.kill();
    // B runs it again and POSTs the answer: its second run.
    let delivered = tokio::time::timeout(Duration::from_secs(60), rx.recv())
        .await
        .expect("delivered in time")
        .expect("the webhook runs");
    assert_eq!(
        delivered,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"steps": 30, "attempt": 2}})
    );
}
