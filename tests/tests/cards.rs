//! Server cards (SEP-2127) on the wire: `GET <MCP endpoint>/server-card` and the site's MCP
//! catalog `GET /.well-known/mcp/catalog.json`, exact, translated by `Accept-Language`, with
//! the URLs the request sees (or the `public_url`), readable from any origin.

use serde_json::{Value, json};

use tests::serve_url;

const SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json";
const VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

struct Got {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Value,
}

async fn get(url: &str, headers: &[(&str, &str)]) -> Got {
    let mut req = tests::client().get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.expect("GET");
    let (status, headers) = (r.status().as_u16(), r.headers().clone());
    let text = r.text().await.expect("a body");
    let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    Got {
        status,
        headers,
        body,
    }
}

fn header<'a>(g: &'a Got, name: &str) -> Option<&'a str> {
    g.headers.get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn each_mcp_endpoint_has_a_translated_card_naming_where_to_connect() {
    let base = serve_url(examples::server().unwrap()).await;
    let card = |title: &str, description: &str| {
        json!({
            "$schema": SCHEMA,
            "name": "localhost/catalog.mcp.v1",
            "version": "0.1.0",
            "title": title,
            "description": description,
            "remotes": [{
                "type": "streamable-http",
                "url": format!("{base}/mcp/mcp/v1"),
                "supportedProtocolVersions": VERSIONS
            }]
        })
    };
    let url = format!("{base}/mcp/mcp/v1/server-card");
    let accept = ("accept", "application/mcp-server-card+json");
    let got = get(&url, &[accept]).await;
    assert_eq!(got.status, 200);
    assert_eq!(
        got.body,
        card(
            "Catalog shop",
            "Search the product catalog, show a product, pay an order."
        )
    );
    assert_eq!(
        header(&got, "content-type"),
        Some("application/mcp-server-card+json")
    );
    assert_eq!(header(&got, "access-control-allow-origin"), Some("*"));
    assert_eq!(header(&got, "cache-control"), Some("public, max-age=3600"));
    assert_eq!(header(&got, "content-language"), Some("en"));
    let got = get(&url, &[accept, ("accept-language", "uk")]).await;
    assert_eq!(
        got.body,
        card(
            "Магазин «Каталог»",
            "Пошук у каталозі товарів, картка товару, оплата замовлення."
        )
    );
    assert_eq!(header(&got, "content-language"), Some("uk"));
    assert_eq!(header(&got, "vary"), Some("Accept-Language"));
    // A group without texts of its own: the server's name and its instructions.
    let got = get(&format!("{base}/mcp/conformance/v1/server-card"), &[]).await;
    assert_eq!(got.body["name"], "localhost/catalog.conformance.v1");
    assert_eq!(got.body["title"], "catalog");
    assert_eq!(
        got.body["description"],
        "A small product catalog: search products, get one by id, browse the category tree."
    );
}

#[tokio::test]
async fn the_catalog_lists_every_card_and_a_public_url_names_the_publisher() {
    let server = examples::builder()
        .public_url("https://shop.example.com/")
        .build()
        .unwrap();
    let base = serve_url(server).await;
    let got = get(
        &format!("{base}/.well-known/mcp/catalog.json"),
        &[("origin", "https://elsewhere.example")],
    )
    .await;
    assert_eq!(got.status, 200);
    assert_eq!(header(&got, "content-type"), Some("application/json"));
    assert_eq!(header(&got, "access-control-allow-origin"), Some("*"));
    let entry = |suffix: &str, name: &str, group: &str| {
        json!({
            "identifier": format!("urn:air:shop.example.com:mcp:{suffix}"),
            "displayName": name,
            "type": "application/mcp-server-card+json",
            "url": format!("https://shop.example.com/mcp/{group}/v1/server-card")
        })
    };
    assert_eq!(
        got.body,
        json!({"specVersion": "draft", "entries": [
            // A protected group's card is listed too: it says where to connect, not what is there.
            entry("catalog.admin.v1", "catalog", "admin"),
            entry("catalog.conformance.v1", "catalog", "conformance"),
            entry("catalog.mcp.v1", "Catalog shop", "mcp")
        ]})
    );
    // The AI Catalog indexes the same cards, leaving their names to them.
    let ai = get(&format!("{base}/.well-known/ai-catalog.json"), &[]).await;
    assert_eq!(
        header(&ai, "content-type"),
        Some("application/ai-catalog+json")
    );
    let mut entries = got.body["entries"].clone();
    for e in entries.as_array_mut().unwrap() {
        e.as_object_mut().unwrap().remove("displayName");
    }
    assert_eq!(ai.body, json!({"specVersion": "1.0", "entries": entries}));
    let card = get(&format!("{base}/mcp/mcp/v1/server-card"), &[]).await;
    assert_eq!(card.body["name"], "com.example.shop/catalog.mcp.v1");
    assert_eq!(
        card.body["remotes"][0]["url"],
        "https://shop.example.com/mcp/mcp/v1"
    );
    // The preflight of a browser on another site.
    let r = tests::client()
        .request(
            reqwest::Method::OPTIONS,
            format!("{base}/.well-known/mcp/catalog.json"),
        )
        .header("origin", "https://elsewhere.example")
        .header("access-control-request-method", "GET")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 204);
    assert_eq!(r.headers()["access-control-allow-origin"], "*");
    assert_eq!(r.headers()["access-control-allow-methods"], "GET");
}

#[tokio::test]
async fn a_card_is_not_served_under_a_host_the_server_does_not_answer_for() {
    let base = serve_url(examples::builder().build().unwrap()).await;
    for path in [
        "/mcp/mcp/v1/server-card",
        "/.well-known/mcp/catalog.json",
        "/.well-known/ai-catalog.json",
    ] {
        // Bound to loopback: a rebinding name would otherwise be written into the card's URLs,
        // cacheable for an hour.
        let r = tests::client()
            .get(format!("{base}{path}"))
            .header(reqwest::header::HOST, "evil.example")
            .send()
            .await
            .expect("GET");
        assert_eq!(r.status().as_u16(), 421, "{path}");
        assert_eq!(r.text().await.unwrap(), "Invalid Host header", "{path}");
        let ok = get(&format!("{base}{path}"), &[("host", "localhost")]).await;
        assert_eq!(ok.status, 200, "{path}");
        assert!(ok.body.to_string().contains("http://localhost"), "{path}");
    }
}
