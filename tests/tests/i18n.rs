//! Translated titles and descriptions: every link of the per-field chain, Accept-Language on
//! both eras, OpenRPC and stdio, and the loader's errors.

use mcp_runtime::i18n::Strictness;
use mcp_runtime::prelude::*;
use mcp_runtime::{BuildError, Environment};
use serde_json::{Value, json};

use tests::serve_url;

const G: ApiGroup = ApiGroup::mcp("i18n");

/// Doc title of one.
#[rpc_method(name = "T.one", groups = [G])]
fn one(
    /// Doc q
    q: String,
) -> String {
    q
}

/// Doc title of two.
#[rpc_method(name = "T.two", groups = [G])]
fn two() -> String {
    String::new()
}

/// Doc title of three.
#[rpc_method(name = "T.three", groups = [G])]
fn three() -> String {
    String::new()
}

/// Doc title of four.
#[rpc_method(name = "T.four", groups = [G])]
fn four() -> String {
    String::new()
}

/// Doc title of five.
///
/// Doc description of five.
#[rpc_method(name = "T.five", groups = [G])]
fn five() -> String {
    String::new()
}

#[rpc_method(name = "T.six", groups = [G])]
fn six() -> String {
    String::new()
}

const FILES: &[(&str, &str)] = &[
    (
        "rpc.en.yaml",
        "T.one:\n  title: base-en one\n  description: base-en one desc\n  params:\n    q: base-en q\nT.two:\n  title: base-en two\nT.three:\n  title: base-en three\nT.four:\n  title: base-en four\n",
    ),
    (
        "rpc.uk.yaml",
        "T.one:\n  title: base-uk one\nT.two:\n  title: base-uk two\nT.three:\n  title: base-uk three\n",
    ),
    (
        "rpc/i18n.en.yaml",
        "T.one:\n  title: group-en one\nT.two:\n  title: group-en two\n",
    ),
    (
        "rpc/i18n.uk.yaml",
        "T.one:\n  title: group-uk one\n  params:\n    q: group-uk q\n",
    ),
];

fn server() -> Server {
    examples::with_states(Server::builder())
        .env(Environment::PROD)
        .default_language("en")
        .translations_embedded(FILES)
        .build()
        .expect("valid translations")
}

const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// tools/list with an optional Accept-Language: (Content-Language, Vary, tools by name).
async fn list(base: &str, lang: Option<&str>, modern: bool) -> (String, String, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/mcp/i18n/v1"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(l) = lang {
        req = req.header("accept-language", l);
    }
    let body = if modern {
        req = req
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/list");
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN_META}}}}}"#)
    } else {
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_owned()
    };
    let res = req.body(body).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let h = |k: &str| {
        res.headers()
            .get(k)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let (cl, vary) = (h("content-language"), h("vary"));
    let v: Value = res.json().await.unwrap();
    let tools: serde_json::Map<String, Value> = v["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t.clone()))
        .collect();
    (cl, vary, Value::Object(tools))
}

#[tokio::test]
async fn every_link_of_the_title_chain() {
    let base = serve_url(server()).await;
    let (_, _, uk) = list(&base, Some("uk"), false).await;
    assert_eq!(
        uk["T.one"]["title"], "group-uk one",
        "group + client language"
    );
    assert_eq!(
        uk["T.two"]["title"], "group-en two",
        "group + default language beats base + client"
    );
    assert_eq!(
        uk["T.three"]["title"], "base-uk three",
        "base + client language"
    );
    assert_eq!(
        uk["T.four"]["title"], "base-en four",
        "base + default language"
    );
    assert_eq!(
        uk["T.five"]["title"], "Doc title of five.",
        "the doc comment"
    );
    assert_eq!(
        uk["T.six"]["title"], "T.six",
        "no title anywhere: the tool name"
    );
    let (_, _, en) = list(&base, Some("en"), false).await;
    assert_eq!(en["T.one"]["title"], "group-en one");
    assert_eq!(en["T.three"]["title"], "base-en three");
}

#[tokio::test]
async fn each_field_has_its_own_chain() {
    let base = serve_url(server()).await;
    let (_, _, uk) = list(&base, Some("uk"), false).await;
    // Title from the group file, description from the base default file, param from group+uk.
    assert_eq!(uk["T.one"]["title"], "group-uk one");
    assert_eq!(uk["T.one"]["description"], "base-en one desc");
    assert_eq!(
        uk["T.one"]["inputSchema"]["properties"]["q"]["description"],
        "group-uk q"
    );
    let (_, _, en) = list(&base, None, false).await;
    assert_eq!(
        en["T.one"]["inputSchema"]["properties"]["q"]["description"],
        "base-en q"
    );
    assert_eq!(
        en["T.five"]["description"],
        "Doc title of five.\n\nDoc description of five."
    );
}

#[tokio::test]
async fn accept_language_cases_on_both_eras() {
    let base = serve_url(server()).await;
    for modern in [false, true] {
        for (header, expected, title) in [
            (Some("uk"), "uk", "group-uk one"),
            (Some("en;q=0.2, uk;q=0.8"), "uk", "group-uk one"),
            (Some("uk-UA"), "uk", "group-uk one"),
            (Some("fr, de;q=0.5"), "en", "group-en one"),
            (None, "en", "group-en one"),
            (Some("*"), "en", "group-en one"),
            (Some("en;q=0, *"), "uk", "group-uk one"),
            (Some("uk;q=0"), "en", "group-en one"),
        ] {
            let (cl, vary, tools) = list(&base, header, modern).await;
            assert_eq!(cl, expected, "{header:?} modern={modern}");
            assert_eq!(vary, "Accept-Language");
            assert_eq!(tools["T.one"]["title"], title, "{header:?} modern={modern}");
        }
    }
}

#[tokio::test]
async fn openrpc_is_translated_and_carries_the_headers() {
    let base = serve_url(server()).await;
    let res = reqwest::Client::new()
        .get(format!("{base}/rpc/i18n/v1"))
        .header("accept-language", "uk-UA")
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["content-language"], "uk");
    assert_eq!(res.headers()["vary"], "Accept-Language");
    let doc: Value = res.json().await.unwrap();
    let one = doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "T.one")
        .unwrap()
        .clone();
    assert_eq!(one["summary"], "group-uk one");
    assert_eq!(one["params"][0]["description"], "group-uk q");
    assert_eq!(one["params"][0]["schema"]["description"], "group-uk q");
}

#[tokio::test]
async fn rpc_discover_and_postman_are_translated_like_get() {
    let base = serve_url(server()).await;
    let client = reqwest::Client::new();
    let doc = client
        .get(format!("{base}/rpc/i18n/v1"))
        .header("accept-language", "uk-UA")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let discover = |lang: &'static str| {
        client
            .post(format!("{base}/rpc/i18n/v1"))
            .header("accept-language", lang)
            .header("content-type", "application/json")
            .body(r#"[{"jsonrpc":"2.0","method":"rpc.discover","id":1}]"#)
            .send()
    };
    let got = discover("uk-UA").await.unwrap().text().await.unwrap();
    assert_eq!(
        got,
        format!(r#"[{{"jsonrpc":"2.0","id":1,"result":{doc}}}]"#)
    );
    let en = discover("en").await.unwrap().text().await.unwrap();
    assert_ne!(en, got);
    // The collection: in the negotiated language, the one `Server::postman` builds in it.
    let server = server();
    let postman = client
        .get(format!("{base}/rpc/i18n/v1/postman"))
        .header("accept-language", "uk-UA")
        .send()
        .await
        .unwrap();
    assert_eq!(postman.headers()["content-language"], "uk");
    let postman: Value = postman.json().await.unwrap();
    let expected = server.postman("i18n", 1, Some("uk"), Some(&base)).unwrap();
    assert_eq!(postman, serde_json::from_slice::<Value>(&expected).unwrap());
}

#[tokio::test]
async fn stdio_uses_the_default_language() {
    let server = server();
    let ep = server.mcp_endpoint("i18n", 1).unwrap().clone();
    let (mut client, srv) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(srv);
    let task = tokio::spawn(mcp_runtime::test_util::serve_io(ep, read, write));
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    client
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n")
        .await
        .unwrap();
    let (r, mut w) = tokio::io::split(client);
    let mut lines = tokio::io::BufReader::new(r).lines();
    let line = lines.next_line().await.unwrap().unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    let title = v["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "T.one")
        .unwrap()["title"]
        .clone();
    assert_eq!(title, "group-en one");
    w.shutdown().await.unwrap();
    drop(w);
    drop(lines);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), task).await;
}

fn build_with(files: &'static [(&'static str, &'static str)]) -> Result<Server, BuildError> {
    examples::with_states(Server::builder())
        .translations_embedded(files)
        .build()
}

fn errors(r: Result<Server, BuildError>) -> Vec<String> {
    match r {
        Err(BuildError::Translations(list)) => list.iter().map(ToString::to_string).collect(),
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("expected translation errors"),
    }
}

#[test]
fn loader_errors_name_file_and_line() {
    assert_eq!(
        errors(build_with(&[(
            "rpc.en.yaml",
            "T.one:\n  title: a\nT.one:\n  title: b\n"
        )])),
        ["rpc.en.yaml:3: duplicate key `T.one` (first at line 1)"]
    );
    assert_eq!(
        errors(build_with(&[(
            "rpc.en.yaml",
            "T.one:\n  title: a\nNope.gone:\n  title: b\n"
        )])),
        ["rpc.en.yaml:3: unknown method `Nope.gone`"]
    );
    assert_eq!(
        errors(build_with(&[("rpc/i18n.uk.yaml", "T.one:\n  tittle: a\n")])),
        [
            "rpc/i18n.uk.yaml:2: `T.one`: unknown key `tittle`; expected title, description or params"
        ]
    );
    let malformed = errors(build_with(&[("rpc.en.yaml", "T.one: {title: [\n")]));
    assert!(
        malformed[0].starts_with("rpc.en.yaml:") && malformed[0].contains("invalid YAML"),
        "{malformed:?}"
    );
    assert_eq!(
        errors(build_with(&[(
            "rpc/nogroup.en.yaml",
            "T.one:\n  title: a\n"
        )])),
        [
            "rpc/nogroup.en.yaml:0: no group `nogroup` exists",
            "rpc/nogroup.en.yaml:1: unknown method `T.one`"
        ]
    );
    assert!(matches!(
        build_with(&[("notes.txt", "")]),
        Err(BuildError::Translations(_))
    ));
    // By option, unknown keys are only warnings.
    let ok = examples::with_states(Server::builder())
        .translations_embedded(&[("rpc.en.yaml", "Nope.gone:\n  title: b\n")])
        .translation_strictness(Strictness::Warn)
        .build();
    assert!(ok.is_ok());
}

#[test]
fn translations_load_from_a_directory() {
    let dir = std::env::temp_dir().join(format!("mcp-i18n-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("rpc")).unwrap();
    std::fs::write(dir.join("rpc.uk.yaml"), "T.four:\n  title: dir-uk four\n").unwrap();
    std::fs::write(
        dir.join("rpc/i18n.en.yaml"),
        "T.four:\n  description: dir group desc\n",
    )
    .unwrap();
    let server = examples::with_states(Server::builder())
        .translations_dir(&dir)
        .build()
        .expect("loads");
    let t = server.translations();
    assert_eq!(t.languages(), ["en", "uk"]);
    assert_eq!(
        t.resolve("i18n", "uk", "T.four").title.as_deref(),
        Some("dir-uk four")
    );
    assert_eq!(
        t.resolve("i18n", "uk", "T.four").description.as_deref(),
        Some("dir group desc")
    );
    std::fs::write(dir.join("rpc.uk.yaml"), "T.four:\n  title: a\n  title: b\n").unwrap();
    let e = errors(
        examples::with_states(Server::builder())
            .translations_dir(&dir)
            .build(),
    );
    assert!(
        e[0].ends_with("rpc.uk.yaml:3: duplicate key `title` (first at line 2)"),
        "{e:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A 2026-07-28 request of the example's group `mcp` in `lang`: the result.
async fn example_request(
    base: &str,
    lang: &str,
    method: &str,
    name: Option<&str>,
    params: &str,
) -> Value {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/mcp/mcp/v1"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("accept-language", lang)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(n) = name {
        req = req.header("mcp-name", n);
    }
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{MODERN_META}{params}}}}}"#
    );
    let res = req.body(body).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let v: Value = res.json().await.unwrap();
    v["result"].clone()
}

#[tokio::test]
async fn resources_and_prompts_are_translated_like_tools() {
    let base = serve_url(examples::builder().env(Environment::PROD).build().unwrap()).await;
    let r = example_request(&base, "uk", "resources/list", None, "").await;
    assert_eq!(r["resources"][0]["title"], "Години роботи магазину");
    assert_eq!(
        r["resources"][0]["description"],
        "Коли магазин відчинено, по днях тижня."
    );
    let r = example_request(&base, "uk", "resources/templates/list", None, "").await;
    assert_eq!(
        r["resourceTemplates"][0]["title"],
        "Товар за ідентифікатором"
    );
    let r = example_request(&base, "uk", "prompts/list", None, "").await;
    assert_eq!(
        r["prompts"][0],
        json!({
            "name": "recommend",
            "title": "Порадити товари",
            "description": "Просить модель дібрати товари каталогу під потребу покупця за допомогою інструмента Catalog.search.",
            "arguments": [
                {"name": "need", "description": "Чого потребує покупець", "required": true},
                {"name": "count", "description": "Скільки товарів запропонувати", "required": false}
            ]
        })
    );
    // The rendering's description follows the request's language too; English is the doc comment.
    let get = r#","name":"recommend","arguments":{"need":"tea"}"#;
    let r = example_request(&base, "uk", "prompts/get", Some("recommend"), get).await;
    assert_eq!(
        r["description"],
        "Просить модель дібрати товари каталогу під потребу покупця за допомогою інструмента Catalog.search."
    );
    let r = example_request(&base, "en", "prompts/list", None, "").await;
    assert_eq!(r["prompts"][0]["title"], "Recommend products for a need.");
}
