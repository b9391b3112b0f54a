//! In-process benches (criterion): request bytes to response bytes without HTTP.
//!
//! - `tools_call/*`: a trivial tools/call through mcp-runtime (MCP handshake era, modern era,
//!   JSON-RPC) against serde_json parse + serialize of the same request/response.
//! - `resources_read/mcp_modern`, `prompts_get/mcp_modern`: a 2026-07-28 resources/read of the
//!   `bench://items/{id}` template and prompts/get of `review`, through the same path.
//! - `tools_list/*`, `tools_list_p10/*`: the first tools/list page of catalogs of 10, 1 000
//!   and 10 000 tools (default page size 50, and pages of 10 so every page is the same size),
//!   and the last page of the 10 000-tool catalog.
//! - `rate_limit/*`: a JSON-RPC call of `sum` and of `sum_limited` (a rate limit no load
//!   reaches: one decision per call, the caller given as an address as the HTTP edge makes it);
//!   with `BENCH_REDIS_URL`, one decision of the Redis limiter (`RateStore::decide`, one script)
//!   against a bare `EVALSHA` of a script that returns 0, on the same connection kind.
//! - `apps/*`: a 2026-07-28 tools/call of a tool linked to an MCP App against the same tool
//!   unlinked, and a read of the app's page (beside `resources_read/mcp_modern`).
//! - `startup/*`: building a server with 10 / 10 000 run-time methods.
//! - `metrics/render_1000`: the `/metrics` page of a server whose 1 000 methods were each called
//!   once (a duration histogram per method, and the counters).

use std::hint::black_box;
use std::time::Duration;

use benches::*;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mcp_runtime::Limits;
use mcp_runtime::test_util::handle;

fn tools_call(c: &mut Criterion) {
    let server = server().expect("the bench server");
    let ep = server.mcp_endpoint("bench", 1).expect("group bench");
    let catalog = server.registry().catalog("bench", 1).expect("group bench");
    let mut g = c.benchmark_group("tools_call");
    g.bench_function("mcp_handshake", |b| {
        b.iter(|| mcp_in_process(ep, black_box(CALL_BODY.as_bytes())))
    });
    g.bench_function("mcp_modern", |b| {
        b.iter(|| mcp_in_process(ep, black_box(MODERN_CALL_BODY.as_bytes())))
    });
    g.bench_function("jsonrpc", |b| {
        b.iter(|| {
            run_ready(handle(
                server.core(),
                catalog,
                black_box(JSONRPC_CALL_BODY.as_bytes()),
                &Limits::default(),
                None,
            ))
        })
    });
    g.bench_function("serde_json_baseline", |b| {
        b.iter(|| serde_baseline(black_box(CALL_BODY.as_bytes())))
    });
    g.finish();
}

fn rate_limit(c: &mut Criterion) {
    let server = server().expect("the bench server");
    let catalog = server.registry().catalog("feat", 1).expect("group feat");
    let mut g = c.benchmark_group("rate_limit");
    for (name, method) in [("unlimited", "sum"), ("limited", "sum_limited")] {
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"a":2,"b":3}}}}"#);
        g.bench_function(name, |b| {
            b.iter(|| {
                run_ready(mcp_runtime::test_util::handle_as(
                    server.core(),
                    catalog,
                    black_box(body.as_bytes()),
                    &Limits::default(),
                    mcp_runtime::Caller::address([203, 0, 113, 7].into()),
                ))
            })
        });
    }
    g.finish();
}

/// The Redis limiter's one round trip against a bare `EVALSHA` (only with `BENCH_REDIS_URL`).
fn rate_limit_redis(c: &mut Criterion) {
    use mcp_runtime::core::{RateStore, RedisStore};
    let Ok(url) = std::env::var("BENCH_REDIS_URL") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    // In the runtime: the connection manager starts its task when it is made.
    let store = {
        let _in = rt.enter();
        RedisStore::connect(&url).expect("a Redis URL")
    };
    let client = redis::Client::open(url.as_str()).expect("a Redis URL");
    let mut bare = rt
        .block_on(client.get_connection_manager())
        .expect("Redis answers");
    let script = redis::Script::new("return 0");
    let (interval, tolerance) = (Duration::from_nanos(1), Duration::from_secs(3600));
    let mut g = c.benchmark_group("rate_limit");
    g.bench_function("redis_decide", |b| {
        b.iter(|| {
            rt.block_on(store.decide(black_box("bench:rl"), interval, tolerance))
                .expect("decided")
        })
    });
    g.bench_function("redis_evalsha_bare", |b| {
        b.iter(|| {
            let answer: i64 = rt
                .block_on(script.prepare_invoke().invoke_async(&mut bare))
                .expect("answered");
            answer
        })
    });
    g.finish();
}

fn resources_prompts(c: &mut Criterion) {
    let server = server().expect("the bench server");
    let ep = server.mcp_endpoint("bench", 1).expect("group bench");
    for (group, body) in [
        ("resources_read", MODERN_READ_BODY),
        ("prompts_get", MODERN_PROMPT_BODY),
    ] {
        let mut g = c.benchmark_group(group);
        g.bench_function("mcp_modern", |b| {
            b.iter(|| mcp_in_process(ep, black_box(body.as_bytes())))
        });
        g.finish();
    }
}

/// MCP Apps: a 2026-07-28 tools/call of `sum` and of `sum_app` (the same tool, linked to an
/// app), and a read of the app's page (about 3 KB of HTML with its `_meta.ui`), all in `feat`.
fn apps(c: &mut Criterion) {
    let server = server().expect("the bench server");
    let ep = server.mcp_endpoint("feat", 1).expect("group feat");
    let (plain, linked) = (modern_sum_body("sum"), modern_sum_body("sum_app"));
    for body in [&plain, &linked] {
        let answer = String::from_utf8(mcp_in_process(ep, body.as_bytes()).into_vec());
        let answer = answer.expect("UTF-8");
        assert!(answer.contains(EXPECTED), "{answer}");
    }
    let page = String::from_utf8(mcp_in_process(ep, MODERN_APP_READ_BODY.as_bytes()).into_vec());
    let page = page.expect("UTF-8");
    assert!(page.contains("\"prefersBorder\":true"), "{page}");
    let mut g = c.benchmark_group("apps");
    g.bench_function("tools_call_plain", |b| {
        b.iter(|| mcp_in_process(ep, black_box(plain.as_bytes())))
    });
    g.bench_function("tools_call_app_linked", |b| {
        b.iter(|| mcp_in_process(ep, black_box(linked.as_bytes())))
    });
    g.bench_function("resources_read_app", |b| {
        b.iter(|| mcp_in_process(ep, black_box(MODERN_APP_READ_BODY.as_bytes())))
    });
    g.finish();
}

/// The language carrier (SEP-2792): a handshake-era tools/list first page of 1 000 tools, and a
/// 2026-07-28 tools/call of `sum`, each without and with `_meta`
/// `io.modelcontextprotocol/acceptLanguage` (the answer then names its language in `_meta`).
fn language(c: &mut Criterion) {
    const CARRIER: &str = r#""io.modelcontextprotocol/acceptLanguage":"en""#;
    let defs = synthetic_defs(1_000);
    let s = synthetic_server(&defs, None);
    let list_ep = s.mcp_endpoint("synthetic", 1).expect("group synthetic");
    let server = server().expect("the bench server");
    let call_ep = server.mcp_endpoint("feat", 1).expect("group feat");
    let list_carried = LIST_BODY.replace(
        "\"params\":{}",
        &format!("\"params\":{{\"_meta\":{{{CARRIER}}}}}"),
    );
    let call = modern_sum_body("sum");
    let call_carried = call.replacen("\"_meta\":{", &format!("\"_meta\":{{{CARRIER},"), 1);
    for (ep, body) in [(list_ep, &list_carried), (call_ep, &call_carried)] {
        let answer = String::from_utf8(mcp_in_process(ep, body.as_bytes()).into_vec());
        let answer = answer.expect("UTF-8");
        assert!(
            answer.contains(r#""io.modelcontextprotocol/contentLanguage":"en"}"#),
            "{answer}"
        );
    }
    let mut g = c.benchmark_group("language");
    g.bench_function("tools_list_1000_plain", |b| {
        b.iter(|| mcp_in_process(list_ep, black_box(LIST_BODY.as_bytes())))
    });
    g.bench_function("tools_list_1000_carried", |b| {
        b.iter(|| mcp_in_process(list_ep, black_box(list_carried.as_bytes())))
    });
    g.bench_function("tools_call_plain", |b| {
        b.iter(|| mcp_in_process(call_ep, black_box(call.as_bytes())))
    });
    g.bench_function("tools_call_carried", |b| {
        b.iter(|| mcp_in_process(call_ep, black_box(call_carried.as_bytes())))
    });
    g.finish();
}

/// The cursor of the last page, found by following `nextCursor`.
fn last_page_body(ep: &mcp_runtime::test_util::McpEndpoint) -> String {
    let mut body = LIST_BODY.to_owned();
    loop {
        let out: serde_json::Value =
            serde_json::from_slice(&mcp_in_process(ep, body.as_bytes()).into_vec()).expect("JSON");
        match out["result"]["nextCursor"].as_str() {
            Some(c) => {
                body = format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"cursor":"{c}"}}}}"#
                )
            }
            None => return body,
        }
    }
}

fn tools_list(c: &mut Criterion) {
    for (group, page) in [("tools_list", None), ("tools_list_p10", Some(10))] {
        let mut g = c.benchmark_group(group);
        for n in [10usize, 1_000, 10_000] {
            let defs = synthetic_defs(n);
            let s = synthetic_server(&defs, page);
            let ep = s.mcp_endpoint("synthetic", 1).expect("group synthetic");
            g.bench_with_input(BenchmarkId::new("first_page", n), &n, |b, _| {
                b.iter(|| mcp_in_process(ep, black_box(LIST_BODY.as_bytes())))
            });
            if n == 10_000 {
                let last = last_page_body(ep);
                g.bench_with_input(BenchmarkId::new("last_page", n), &n, |b, _| {
                    b.iter(|| mcp_in_process(ep, black_box(last.as_bytes())))
                });
                let call = CALL_BODY.replace("\"add\"", "\"tool_09999\"");
                g.bench_with_input(BenchmarkId::new("call_last_tool", n), &n, |b, _| {
                    b.iter(|| mcp_in_process(ep, black_box(call.as_bytes())))
                });
            }
        }
        g.finish();
    }
}

fn startup(c: &mut Criterion) {
    let mut g = c.benchmark_group("startup");
    g.sample_size(10);
    for n in [10usize, 10_000] {
        // The records are made once: in an application they are static data.
        let defs = synthetic_defs(n);
        g.bench_with_input(BenchmarkId::new("build", n), &n, |b, _| {
            // Startup is the build; dropping the server (at shutdown) stays out of the timing.
            b.iter_with_large_drop(|| synthetic_server(black_box(&defs), None))
        });
    }
    g.finish();
}

fn metrics(c: &mut Criterion) {
    let defs = synthetic_defs(1_000);
    let server = defs
        .iter()
        .fold(
            mcp_runtime::Server::builder()
                .without_registered_methods()
                .metrics_route("/metrics"),
            |b, d| b.method(d),
        )
        .build()
        .expect("a valid synthetic catalog");
    let catalog = server
        .registry()
        .catalog("synthetic", 1)
        .expect("group synthetic")
        .clone();
    for d in &defs {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{}","params":{{"a":2,"b":3}}}}"#,
            d.name
        );
        let r = run_ready(handle(
            server.core(),
            &catalog,
            body.as_bytes(),
            &Limits::default(),
            None,
        ));
        assert_eq!(r.status, 200);
    }
    let page = server.render_metrics().expect("a metrics route");
    assert_eq!(
        page.matches("rpc_server_call_duration_seconds_count{")
            .count(),
        1_000
    );
    let mut g = c.benchmark_group("metrics");
    g.sample_size(10);
    g.bench_function("render_1000", |b| b.iter(|| server.render_metrics()));
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}

criterion_group! {
    name = benches;
    config = config();
    targets = tools_call, rate_limit, rate_limit_redis, resources_prompts, apps, language, tools_list, startup, metrics
}
criterion_main!(benches);
