//! SSE resumption through another instance: two `catalog` instances on one Redis (started
//! here on a free port), where sessions, and so their resumable streams, are kept. A
//! `tools/call` answered on a stream of instance A resumes on instance B with
//! `Last-Event-ID`: the events after that id, then the live ones until the call's answer, while
//! the call runs on A.

use std::time::Duration;

use serde_json::{Value, json};

mod common;
use common::{Redis, Spawned};

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(15))
        .build()
        .expect("client")
}

use mcp_runtime::test_util::{SseEvent as Event, sse_events_so_far as events};

/// `GET` with a `Last-Event-ID`: status, content type and body.
async fn resume(
    c: &reqwest::Client,
    url: &str,
    session: &str,
    last: &str,
) -> (u16, Option<String>, String) {
    let r = c
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .header("last-event-id", last)
        .send()
        .await
        .expect("resume");
    let status = r.status().as_u16();
    let ty = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (status, ty, r.text().await.expect("body"))
}

const STEPS: u32 = 6;

/// Event `n` of the `Jobs.run` call's stream: the priming event is 0, progress `i` is event
/// `i`, the answer event `STEPS + 1`.
fn message(n: u32) -> Value {
    if n <= STEPS {
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": "job-1", "progress": f64::from(n), "total": f64::from(STEPS),
            "message": format!("step {n} of {STEPS}")}})
    } else {
        let report = json!({"steps": STEPS});
        json!({"jsonrpc": "2.0", "id": 7, "result": {
            "content": [{"type": "text", "text": report.to_string()}],
            "structuredContent": {"result": report}, "isError": false}})
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_stream_opened_on_one_instance_resumes_on_another_with_last_event_id() {
    let redis = Redis::start();
    let url = redis.url();
    let env = [("REDIS_URL", url.as_str()), ("CATALOG_STATEFUL", "mcp")];
    let (a, b) = (Spawned::catalog(&env), Spawned::catalog(&env));
    let (url_a, url_b) = (a.url("mcp"), b.url("mcp"));
    let c = http();
    let sid = common::mcp_session(&c, &url_a).await;

    // On A: a call reporting progress every 150 ms, answered on a resumable stream.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "Jobs.run", "arguments": {"steps": STEPS, "step_ms": 150},
        "_meta": {"progressToken": "job-1"}}});
    let mut r = c
        .post(&url_a)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&call)
        .send()
        .await
        .expect("tools/call");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    // The priming event and the first two progress events, then the connection drops.
    let mut text = String::new();
    while events(&text).len() < 3 {
        let chunk = r.chunk().await.expect("read").expect("more events");
        text.push_str(std::str::from_utf8(&chunk).expect("utf-8"));
    }
    drop(r);
    let first = events(&text);
    let primed = first[0].id.clone().expect("an id");
    let stream = primed
        .strip_suffix("_0")
        .expect("the priming event is 0")
        .to_owned();
    assert_eq!(
        first[0],
        Event {
            id: Some(primed.clone()),
            event: None,
            retry: Some("1000".into()),
            data: String::new(),
        }
    );
    let read = u32::try_from(first.len()).expect("few") - 1;
    for (n, e) in (1..).zip(&first[1..]) {
        assert_eq!(e.id.as_deref(), Some(format!("{stream}_{n}").as_str()));
        assert_eq!(
            serde_json::from_str::<Value>(&e.data).expect("json"),
            message(n)
        );
    }
    let last = format!("{stream}_{read}");
    // Some events pass while the client is away: replayed from Redis, the rest followed live.
    tokio::time::sleep(Duration::from_millis(350)).await;

    // On B, which never saw the stream: exactly the events after the last one read, in
    // order, up to the call's answer.
    let (status, ty, rest) = resume(&c, &url_b, &sid, &last).await;
    assert_eq!(status, 200, "{rest}");
    assert_eq!(ty.as_deref(), Some("text/event-stream"));
    let got = events(&rest);
    assert!(rest.ends_with("\n\n"), "{rest:?}");
    let want: Vec<u32> = (read + 1..=STEPS + 1).collect();
    assert_eq!(got.len(), want.len(), "{rest}");
    for (e, n) in got.iter().zip(want) {
        assert_eq!(
            (e.id.as_deref(), e.event.as_deref(), e.retry.as_deref()),
            (
                Some(format!("{stream}_{n}").as_str()),
                Some("message"),
                None
            ),
            "{rest}"
        );
        assert_eq!(
            serde_json::from_str::<Value>(&e.data).expect("json"),
            message(n)
        );
    }
    // The same bytes A replays from its own memory.
    let (status, _, here) = resume(&c, &url_a, &sid, &last).await;
    assert_eq!((status, here.as_str()), (200, rest.as_str()));
    // After the answer: an empty, finished stream, on either instance.
    let end = format!("{stream}_{}", STEPS + 1);
    for url in [&url_a, &url_b] {
        let (status, _, body) = resume(&c, url, &sid, &end).await;
        assert_eq!((status, body.as_str()), (200, ""));
    }

    // Refused exactly as A refuses: another session's stream, and an event not sent.
    let refused = json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": -32600, "message": "Stream not found"}});
    let other = common::mcp_session(&c, &url_b).await;
    let past = format!("{stream}_{}", STEPS + 2);
    for (session, last) in [(&other, &last), (&other, &primed), (&sid, &past)] {
        for url in [&url_a, &url_b] {
            let (status, ty, body) = resume(&c, url, session, last).await;
            assert_eq!(status, 404, "{url} {last}: {body}");
            assert_eq!(ty.as_deref(), Some("application/json"));
            let body: Value = serde_json::from_str(&body).expect("json");
            assert_eq!(body, refused, "{url} {last}");
        }
    }
    drop((a, b));
    drop(redis);
}

/// POSTs one request on a session of the conformance group; its JSON answer.
async fn on_session(c: &reqwest::Client, url: &str, sid: &str, body: Value) -> Value {
    c.post(url)
        .header("accept", "application/json")
        .header("mcp-session-id", sid)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&body)
        .send()
        .await
        .expect("POST")
        .json()
        .await
        .expect("JSON")
}

/// A session's `GET` stream held on instance B hears of a subscription made on A and of an
/// update announced on A: both travel by Redis (the stream reads the session again only when
/// told it changed, not on every update).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
async fn a_subscription_made_on_one_instance_is_heard_on_anothers_stream() {
    let redis = Redis::start();
    let url = redis.url();
    let env = [("REDIS_URL", url.as_str())];
    let (a, b) = (Spawned::catalog(&env), Spawned::catalog(&env));
    let (url_a, url_b) = (a.url("conformance"), b.url("conformance"));
    let c = http();
    let sid = common::mcp_session(&c, &url_a).await;
    let mut stream = c
        .get(&url_b)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .expect("GET");
    assert_eq!(stream.status(), 200);
    // The stream subscribes to the hub as its response starts.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
        "params": {"uri": "test://watched-resource"}});
    assert_eq!(
        on_session(&c, &url_a, &sid, subscribe).await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let trigger = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "test_trigger_resource_update", "arguments": {}}});
    let answer = on_session(&c, &url_a, &sid, trigger).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let mut text = String::new();
    let wanted = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
        "params": {"uri": "test://watched-resource"}});
    let heard = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if events(&text)
                .iter()
                .any(|e| serde_json::from_str::<Value>(&e.data).ok().as_ref() == Some(&wanted))
            {
                return;
            }
            let chunk = stream.chunk().await.expect("read").expect("more events");
            text.push_str(std::str::from_utf8(&chunk).expect("utf-8"));
        }
    })
    .await;
    assert!(heard.is_ok(), "B's stream did not hear of it: {text}");
}
