//! The language of each request (SEP-2792) on the wire: the `_meta` carrier
//! `io.modelcontextprotocol/acceptLanguage` selects the language on Streamable HTTP (both eras,
//! batches) and on stdio, agrees with `Accept-Language` or is refused (400, -32020), and the
//! answer names its language in `_meta` (`contentLanguage`), `Content-Language` and the cache.

use std::sync::atomic::{AtomicU32, Ordering};

use mcp_runtime::prelude::*;
use mcp_runtime::{Environment, RpcError};
use serde_json::{Value, json};

use tests::{Stdio, hdr, parse, post, serve_url};

const G: ApiGroup = ApiGroup::mcp("lang");

/// Greets someone.
#[rpc_method(name = "Greet.hello", groups = [G])]
fn hello(
    ctx: &RequestContext,
    /// Who to greet
    name: String,
) -> Result<String, RpcError> {
    if name.is_empty() {
        return Err(RpcError::invalid_params("name is empty"));
    }
    Ok(match ctx.language() {
        Some("uk") => format!("Привіт, {name}!"),
        _ => format!("Hello, {name}!"),
    })
}

/// Greets in steps, reporting them.
#[rpc_method(name = "Greet.steps", groups = [G])]
fn steps(ctx: &RequestContext) -> String {
    ctx.report_progress(1.0, Some(2.0), Some("крок"));
    "done".into()
}

static RUNS: AtomicU32 = AtomicU32::new(0);

/// The language it ran in, and how many times it ran.
#[rpc_method(name = "Greet.cached", groups = [G], cache(ttl = "60s"))]
fn cached(ctx: &RequestContext) -> String {
    let n = RUNS.fetch_add(1, Ordering::SeqCst);
    format!("{} #{n}", ctx.language().unwrap_or("-"))
}

const FILES: &[(&str, &str)] = &[(
    "rpc.uk.yaml",
    "Greet.hello:\n  title: Привітання\n  description: Вітає когось.\n  params:\n    name: Кого привітати\n",
)];

fn server() -> Server {
    examples::with_states(Server::builder())
        .env(Environment::PROD)
        .translations_embedded(FILES)
        .build()
        .unwrap()
}

const CL: &str = "io.modelcontextprotocol/contentLanguage";
const MODERN: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;

/// A request's body: `method` with `params` members (`,`-led) and `_meta` members.
fn body(id: u32, method: &str, meta: &[&str], params: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"_meta":{{{}}}{params}}}}}"#,
        meta.join(",")
    )
}

fn carrier(value: &str) -> String {
    format!(
        r#""io.modelcontextprotocol/acceptLanguage":{}"#,
        json!(value)
    )
}

/// POSTs `body` to the group's endpoint: status, `Content-Language`, `Vary`, the answer.
async fn ask(
    base: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Option<String>, Option<String>, Value) {
    let (status, h, text) = post(&format!("{base}/mcp/lang/v1"), headers, body).await;
    let owned = |n| hdr(&h, n).map(str::to_owned);
    (
        status,
        owned("content-language"),
        owned("vary"),
        parse(&text),
    )
}

/// The headers of a 2026-07-28 request.
fn modern(method: &str, name: Option<&str>) -> Vec<(&'static str, String)> {
    let mut h = vec![
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", method.to_owned()),
    ];
    if let Some(n) = name {
        h.push(("mcp-name", n.to_owned()));
    }
    h
}

fn refs<'h>(h: &'h [(&'static str, String)]) -> Vec<(&'static str, &'h str)> {
    h.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// The tool `name` of a `tools/list` answer.
fn tool<'v>(v: &'v Value, name: &str) -> &'v Value {
    v["result"]["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no {name} in {v}"))
}

fn hello_title(v: &Value) -> &Value {
    &tool(v, "Greet.hello")["title"]
}

/// `value` with `contentLanguage` put into `at`'s `_meta` (made when absent), last.
fn with_language(mut value: Value, at: &str, lang: &str) -> Value {
    let target = value.pointer_mut(at).unwrap().as_object_mut().unwrap();
    let meta = target.entry("_meta").or_insert_with(|| json!({}));
    meta.as_object_mut().unwrap().insert(CL.into(), json!(lang));
    value
}

#[tokio::test]
async fn the_carrier_alone_selects_the_language_and_the_answer_names_it_on_both_eras() {
    let base = serve_url(server()).await;
    for era in ["2025-11-25", "2026-07-28"] {
        let (headers, meta) = match era {
            "2026-07-28" => (modern("tools/list", None), vec![MODERN]),
            _ => (vec![], vec![]),
        };
        let headers = refs(&headers);
        let with = |lang: &str| {
            let c = carrier(lang);
            body(1, "tools/list", &[&meta[..], &[c.as_str()]].concat(), "")
        };
        // The header's answer, as it always was: no `_meta` language.
        let mut by_header = headers.clone();
        by_header.push(("accept-language", "uk"));
        let (s, cl, vary, plain) = ask(&base, &by_header, &body(1, "tools/list", &meta, "")).await;
        assert_eq!((s, cl.as_deref()), (200, Some("uk")), "{era}");
        assert_eq!(vary.as_deref(), Some("Accept-Language"));
        assert_eq!(hello_title(&plain), "Привітання", "{era}");
        assert!(plain["result"]["_meta"].get(CL).is_none(), "{plain}");
        // The carrier alone: the same answer, naming its language.
        let (s, cl, vary, carried) = ask(&base, &headers, &with("uk-UA, en;q=0.5")).await;
        assert_eq!((s, cl.as_deref()), (200, Some("uk")), "{era}");
        assert_eq!(vary.as_deref(), Some("Accept-Language"));
        assert_eq!(carried, with_language(plain, "/result", "uk"), "{era}");
        // A request later in another language: no state kept between them.
        let (_, cl, _, en) = ask(&base, &headers, &with("en")).await;
        assert_eq!(cl.as_deref(), Some("en"));
        assert_eq!(hello_title(&en), "Greets someone.");
        assert_eq!(en["result"]["_meta"][CL], "en");
        // A language the server lacks: its default, named.
        let (_, cl, _, fr) = ask(&base, &headers, &with("fr")).await;
        assert_eq!(cl.as_deref(), Some("en"));
        assert_eq!(fr["result"]["_meta"][CL], "en");
    }
}

#[tokio::test]
async fn a_call_its_error_and_its_cache_follow_the_carrier() {
    let base = serve_url(server()).await;
    let headers = modern("tools/call", Some("Greet.hello"));
    let headers = refs(&headers);
    let uk = carrier("uk");
    let call = |name: &str, meta: &str| {
        body(
            7,
            "tools/call",
            &[MODERN, meta],
            &format!(r#","name":"Greet.hello","arguments":{{"name":"{name}"}}"#),
        )
    };
    let (s, cl, _, v) = ask(&base, &headers, &call("Olena", &uk)).await;
    assert_eq!((s, cl.as_deref()), (200, Some("uk")));
    assert_eq!(
        v,
        json!({"jsonrpc": "2.0", "id": 7, "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "\"Привіт, Olena!\""}],
            "structuredContent": {"result": "Привіт, Olena!"},
            "isError": false,
            "_meta": {"io.modelcontextprotocol/serverInfo": v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"], CL: "uk"}
        }})
    );
    // An error names the language in `error.data._meta`.
    let (s, cl, _, v) = ask(&base, &headers, &call("", &uk)).await;
    assert_eq!((s, cl.as_deref()), (200, Some("uk")));
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(v["result"]["_meta"][CL], "uk");
    let bad = body(
        8,
        "tools/call",
        &[MODERN, &uk],
        r#","name":"Greet.hello","arguments":7"#,
    );
    let (s, cl, _, v) = ask(&base, &headers, &bad).await;
    assert_eq!((s, cl.as_deref()), (400, Some("uk")));
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert_eq!(v["error"]["data"]["_meta"], json!({CL: "uk"}), "{v}");
    // The cache keeps a result per language: an English call is not served the Ukrainian one.
    let headers = modern("tools/call", Some("Greet.cached"));
    let headers = refs(&headers);
    let cached = |meta: &str| {
        body(
            9,
            "tools/call",
            &[MODERN, meta],
            r#","name":"Greet.cached","arguments":{}"#,
        )
    };
    let text = |v: &Value| {
        v["result"]["structuredContent"]["result"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (_, _, _, first_uk) = ask(&base, &headers, &cached(&uk)).await;
    let (_, _, _, again_uk) = ask(&base, &headers, &cached(&uk)).await;
    let (_, _, _, first_en) = ask(&base, &headers, &cached(&carrier("en"))).await;
    let (_, _, _, again_en) = ask(&base, &headers, &cached(&carrier("en"))).await;
    assert!(text(&first_uk).starts_with("uk #"), "{first_uk}");
    assert_eq!(text(&again_uk), text(&first_uk));
    assert!(text(&first_en).starts_with("en #"), "{first_en}");
    assert_eq!(text(&again_en), text(&first_en));
}

#[tokio::test]
async fn a_header_that_disagrees_with_the_carrier_is_refused_and_one_that_agrees_is_not() {
    let base = serve_url(server()).await;
    for era in ["2025-11-25", "2026-07-28"] {
        let (mut headers, meta) = match era {
            "2026-07-28" => (modern("tools/list", None), vec![MODERN]),
            _ => (vec![], vec![]),
        };
        let refused = json!({"jsonrpc": "2.0", "id": 1, "error": {
            "code": -32020,
            "message": "accept-language header does not match the request's _meta \"io.modelcontextprotocol/acceptLanguage\""
        }});
        for (header, carried, agree) in [
            ("uk", "uk", true),
            ("  uk-UA,en;q=0.5\t", "uk-UA,en;q=0.5 ", true),
            ("en", "uk", false),
            // Exact: no case, whitespace or order is normalised.
            ("uk, en", "uk,en", false),
            ("UK", "uk", false),
            // A malformed carrier is still compared as sent.
            ("uk", "uk_UA", false),
        ] {
            headers.retain(|(k, _)| *k != "accept-language");
            headers.push(("accept-language", header.to_owned()));
            let c = carrier(carried);
            let mut m = meta.clone();
            m.push(&c);
            let (s, cl, _, v) = ask(&base, &refs(&headers), &body(1, "tools/list", &m, "")).await;
            if agree {
                assert_eq!((s, cl.as_deref()), (200, Some("uk")), "{era} {header:?}");
                assert_eq!(v["result"]["_meta"][CL], "uk", "{era} {header:?}");
            } else {
                assert_eq!(s, 400, "{era} {header:?} {v}");
                assert_eq!(v, refused, "{era} {header:?}");
            }
        }
        // Two header lines are one value, joined by ", ".
        let c = carrier("uk, en");
        let mut m = meta.clone();
        m.push(&c);
        headers.retain(|(k, _)| *k != "accept-language");
        let mut two = refs(&headers);
        two.extend([("accept-language", "uk"), ("accept-language", "en")]);
        let (s, _, _, v) = ask(&base, &two, &body(1, "tools/list", &m, "")).await;
        assert_eq!(s, 200, "{era} {v}");
        // A carrier that is not a string is no carrier: the header negotiates, nothing named.
        let mut m = meta.clone();
        m.push(r#""io.modelcontextprotocol/acceptLanguage":7"#);
        let mut h = refs(&headers);
        h.push(("accept-language", "uk"));
        let (s, cl, _, v) = ask(&base, &h, &body(1, "tools/list", &m, "")).await;
        assert_eq!((s, cl.as_deref()), (200, Some("uk")), "{era}");
        assert!(v["result"]["_meta"].get(CL).is_none(), "{v}");
        // A malformed one without a header: the default, nothing named.
        let c = carrier("en_US");
        let mut m = meta.clone();
        m.push(&c);
        let (s, cl, _, v) = ask(&base, &refs(&headers), &body(1, "tools/list", &m, "")).await;
        assert_eq!((s, cl.as_deref()), (200, Some("en")), "{era}");
        assert!(v["result"]["_meta"].get(CL).is_none(), "{v}");
    }
}

#[tokio::test]
async fn batch_items_each_have_their_language() {
    let base = serve_url(server()).await;
    let v2025 = [("mcp-protocol-version", "2025-03-26")];
    let batch = format!(
        "[{},{},{}]",
        body(1, "tools/list", &[&carrier("uk")], ""),
        body(2, "tools/list", &[], ""),
        body(3, "tools/list", &[&carrier("en")], ""),
    );
    let (s, cl, vary, v) = ask(&base, &v2025, &batch).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(cl.as_deref(), Some("uk, en"));
    assert_eq!(vary.as_deref(), Some("Accept-Language"));
    assert_eq!(hello_title(&v[0]), "Привітання");
    assert_eq!(v[0]["result"]["_meta"], json!({CL: "uk"}));
    assert_eq!(hello_title(&v[1]), "Greets someone.");
    assert!(v[1]["result"].get("_meta").is_none(), "{v}");
    assert_eq!(v[2]["result"]["_meta"], json!({CL: "en"}));
    // An item whose carrier disagrees with the header is answered -32020; the others are not.
    let mut h = v2025.to_vec();
    h.push(("accept-language", "en"));
    let (s, cl, _, v) = ask(&base, &h, &batch).await;
    assert_eq!((s, cl.as_deref()), (200, Some("en")), "{v}");
    assert_eq!(v[0]["error"]["code"], -32020, "{v}");
    assert_eq!(hello_title(&v[1]), "Greets someone.");
    assert_eq!(v[2]["result"]["_meta"], json!({CL: "en"}));
}

#[tokio::test]
async fn stdio_takes_the_language_from_the_carrier_per_request() {
    let server = server();
    let mut io = Stdio::start(&server, "lang");
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"},"_meta":{"io.modelcontextprotocol/acceptLanguage":"uk"}}}"#;
    let v = io.roundtrip(init).await;
    assert_eq!(v["result"]["_meta"], json!({CL: "uk"}), "{v}");
    io.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let title = |v: &Value| hello_title(v).clone();
    // Absent: the default language, nothing named.
    let v = io.roundtrip(&body(1, "tools/list", &[], "")).await;
    assert_eq!(title(&v), "Greets someone.");
    assert!(v["result"].get("_meta").is_none(), "{v}");
    // Turn by turn, as the client asks.
    let v = io
        .roundtrip(&body(2, "tools/list", &[&carrier("uk")], ""))
        .await;
    assert_eq!(title(&v), "Привітання");
    assert_eq!(v["result"]["_meta"], json!({CL: "uk"}));
    let v = io
        .roundtrip(&body(
            3,
            "tools/list",
            &[&carrier("de-DE,de;q=0.9,en;q=0.5")],
            "",
        ))
        .await;
    assert_eq!(title(&v), "Greets someone.");
    assert_eq!(v["result"]["_meta"], json!({CL: "en"}));
    // A call and an error of one.
    let call = |id: u32, name: &str| {
        body(
            id,
            "tools/call",
            &[&carrier("uk")],
            &format!(r#","name":"Greet.hello","arguments":{{"name":"{name}"}}"#),
        )
    };
    let v = io.roundtrip(&call(4, "Taras")).await;
    assert_eq!(
        v,
        json!({"jsonrpc": "2.0", "id": 4, "result": {
            "content": [{"type": "text", "text": "\"Привіт, Taras!\""}],
            "structuredContent": {"result": "Привіт, Taras!"},
            "isError": false,
            "_meta": {CL: "uk"}
        }})
    );
    let v = io
        .roundtrip(&body(
            5,
            "tools/call",
            &[&carrier("uk")],
            r#","name":"Greet.nope""#,
        ))
        .await;
    assert_eq!(v["error"]["data"]["_meta"], json!({CL: "uk"}), "{v}");
    // The notifications of a call that carried its language name it too.
    io.send(&body(
        8,
        "tools/call",
        &[&carrier("uk"), r#""progressToken":"p""#],
        r#","name":"Greet.steps","arguments":{}"#,
    ))
    .await;
    let progress = parse(&io.recv().await);
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert_eq!(progress["params"]["message"], "крок");
    assert_eq!(progress["params"]["_meta"], json!({CL: "uk"}), "{progress}");
    let done = parse(&io.recv().await);
    assert_eq!(done["id"], 8);
    assert_eq!(done["result"]["_meta"], json!({CL: "uk"}));
    // Without the carrier, nothing is added to them.
    io.send(&body(
        9,
        "tools/call",
        &[r#""progressToken":"q""#],
        r#","name":"Greet.steps","arguments":{}"#,
    ))
    .await;
    let progress = parse(&io.recv().await);
    assert!(progress["params"].get("_meta").is_none(), "{progress}");
    let _ = io.recv().await;
    // What the engine answers itself names it too.
    let level = body(
        7,
        "logging/setLevel",
        &[&carrier("uk")],
        r#","level":"info""#,
    );
    assert_eq!(
        io.roundtrip(&level).await,
        json!({"jsonrpc": "2.0", "id": 7, "result": {"_meta": {CL: "uk"}}})
    );
    // Malformed: as if absent.
    let v = io
        .roundtrip(&body(6, "tools/list", &[&carrier("uk;q=2")], ""))
        .await;
    assert_eq!(title(&v), "Greets someone.");
    assert!(v["result"].get("_meta").is_none(), "{v}");
    io.close().await;
}
