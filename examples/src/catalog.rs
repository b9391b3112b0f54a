//! `Catalog.*`: search and browse products.

use mcp_runtime::prelude::*;
use serde::{Deserialize, Serialize};

use crate::{INTERNAL, MCP};

/// A product.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Product {
    /// Its id.
    pub id: u64,
    /// Its name.
    pub name: String,
}

/// A category of the catalog tree, with its subcategories.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Category {
    /// The category name.
    pub name: String,
    /// Subcategories.
    pub children: Vec<Category>,
}

/// The in-memory product store (the example's state).
#[derive(Debug)]
pub struct ProductStore {
    products: Vec<Product>,
}

impl ProductStore {
    /// How many products it holds.
    pub fn len(&self) -> usize {
        self.products.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.products.is_empty()
    }

    /// A store with a few demo products.
    pub fn demo() -> Self {
        let names = [
            "Red mug",
            "Blue mug",
            "Teapot",
            "Espresso cup",
            "Mug rack",
            "Tea towel",
        ];
        let products = names
            .iter()
            .enumerate()
            .map(|(i, n)| Product {
                id: i as u64 + 1,
                name: (*n).to_owned(),
            })
            .collect();
        Self { products }
    }
}

/// Errors of the catalog.
#[derive(Debug, thiserror::Error, RpcError)]
pub enum CatalogError {
    /// No product with that id.
    #[error("Product {0} not found")]
    #[rpc(code = -32404)]
    NotFound(u64),
}

/// Search products by name.
///
/// Returns up to limit products, the most relevant first.
#[rpc_method(name = "Catalog.search", groups = [MCP, INTERNAL], version = 1)]
#[mcp_tool(read_only_hint = true, idempotent_hint = true)]
pub async fn search(
    /// Search text
    query: String,
    /// How many products at most
    #[param(default = 10)]
    limit: u32,
    store: State<ProductStore>,
) -> Result<Vec<Product>, RpcError> {
    let q = query.to_lowercase();
    let mut hits: Vec<(usize, &Product)> = store
        .products
        .iter()
        .filter_map(|p| p.name.to_lowercase().find(&q).map(|pos| (pos, p)))
        .collect();
    // Earlier matches are more relevant; ties keep id order.
    hits.sort_by_key(|(pos, p)| (*pos, p.id));
    Ok(hits
        .into_iter()
        .take(limit as usize)
        .map(|(_, p)| p.clone())
        .collect())
}

/// Get a product by id.
///
/// A host that shows MCP Apps shows the product in the product card (`ui://catalog/product-card`).
#[rpc_method(name = "Catalog.get", groups = [MCP, INTERNAL])]
#[mcp_tool(
    read_only_hint = true,
    idempotent_hint = true,
    app = "ui://catalog/product-card"
)]
pub fn get(
    /// The product id
    id: u64,
    store: State<ProductStore>,
) -> Result<Product, CatalogError> {
    store
        .products
        .iter()
        .find(|p| p.id == id)
        .cloned()
        .ok_or(CatalogError::NotFound(id))
}

/// Write a one-sentence sales pitch for a product, with the client's model.
///
/// Needs an MCP client that offers sampling (a JSON-RPC caller gets an error).
#[rpc_method(name = "Catalog.pitch", groups = [MCP])]
#[mcp_tool(read_only_hint = true, open_world_hint = true)]
pub async fn pitch(
    /// The product id
    id: u64,
    store: State<ProductStore>,
    ctx: &RequestContext,
) -> Result<String, RpcError> {
    let product = get(id, store)?;
    let request = SamplingRequest::new(
        format!(
            "Write one sentence that makes a shopper want this product: {}",
            product.name
        ),
        100,
    )
    .system_prompt("You write short, honest product copy.");
    let answer = ctx.sample(request).await?;
    answer
        .text()
        .map(str::to_owned)
        .ok_or_else(|| RpcError::runtime("the client's model answered without text"))
}

/// Ping.
#[rpc_method(name = "Catalog.ping", groups = [MCP])]
pub fn ping(
    /// Who is pinging
    #[param(default = "x")]
    who: String,
) -> String {
    format!("pong, {who}")
}

/// The category tree of the catalog.
#[rpc_method(name = "Catalog.tree", groups = [MCP])]
#[mcp_tool(read_only_hint = true)]
pub fn tree() -> Category {
    let leaf = |n: &str| Category {
        name: n.to_owned(),
        children: vec![],
    };
    Category {
        name: "All".into(),
        children: vec![
            Category {
                name: "Kitchen".into(),
                children: vec![leaf("Mugs"), leaf("Teapots")],
            },
            leaf("Textiles"),
        ],
    }
}

/// A product, by id.
///
/// The product's id and name as JSON.
#[mcp_resource(uri_template = "catalog://products/{id}", name = "product", mime_type = "application/json", groups = [MCP])]
pub fn product(
    /// The product id
    #[complete(with = product_ids)]
    id: u64,
    store: State<ProductStore>,
) -> Result<Product, CatalogError> {
    get(id, store)
}

/// The ids of the demo store's products that start with what was typed.
pub fn product_ids(req: &CompletionRequest) -> Vec<String> {
    (1..=6)
        .map(|i| i.to_string())
        .filter(|i| i.starts_with(req.value.as_str()))
        .collect()
}

/// The store's opening hours.
#[mcp_resource(uri = "catalog://hours", name = "hours", mime_type = "text/plain", groups = [MCP])]
pub fn hours() -> &'static str {
    "Monday to Friday 9:00-18:00, Saturday 10:00-14:00, closed on Sunday."
}

/// The product card.
///
/// An MCP App: shows the product of a `Catalog.get` call.
#[mcp_resource(uri = "ui://catalog/product-card", name = "product-card", app(prefers_border = true), groups = [MCP])]
pub fn product_card(ctx: &RequestContext) -> &'static str {
    product_card_page(ctx.language())
}

/// The product card's page in `lang` (Ukrainian for `uk*`, else English): its own words (the
/// resource's title and description come from the translation files, as every other text).
/// Each page is written once, on first use: a read only sends it.
pub fn product_card_page(lang: Option<&str>) -> &'static str {
    static PAGES: std::sync::LazyLock<[String; 2]> =
        std::sync::LazyLock::new(|| [card_page(CARD_EN), card_page(CARD_UK)]);
    match lang {
        Some(l) if l.starts_with("uk") => &PAGES[1],
        _ => &PAGES[0],
    }
}

const CARD_EN: [(&str, &str); 6] = [
    ("lang", "en"),
    ("title", "Product card"),
    ("label", "Product"),
    ("waiting", "Waiting for a product…"),
    ("number", "No. {id}"),
    ("missing", "No product found"),
];

const CARD_UK: [(&str, &str); 6] = [
    ("lang", "uk"),
    ("title", "Картка товару"),
    ("label", "Товар"),
    ("waiting", "Чекаю на товар…"),
    ("number", "№ {id}"),
    ("missing", "Товар не знайдено"),
];

/// The embedded page with `words` in place of its `{{key}}` placeholders.
fn card_page(words: [(&str, &str); 6]) -> String {
    words.iter().fold(
        include_str!("../apps/product-card.html").to_owned(),
        |page, (key, text)| page.replace(&format!("{{{{{key}}}}}"), text),
    )
}

/// The shopping skill: how an agent helps a customer with this catalog's tools
/// (`skill://catalog/shopping/SKILL.md`, its files in `examples/skills/shopping`; in Ukrainian,
/// its `SKILL.md` in `examples/skills/shopping.uk`).
#[mcp_skill(dir = "skills/shopping", prefix = "catalog", groups = [MCP], languages = ["uk"])]
pub struct Shopping;

/// Recommend products for a need.
///
/// Asks the model to pick products of the catalog for what a customer needs, using the
/// `Catalog.search` tool.
#[mcp_prompt(name = "recommend", groups = [MCP])]
pub fn recommend(
    /// What the customer needs
    #[complete(with = need_suggestions)]
    need: String,
    /// How many products to propose
    #[param(default = 3)]
    count: u32,
) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!(
        "A customer needs: {need}. Use the Catalog.search tool to find at most {count} \
         products of the catalog that fit, and explain each choice in one sentence."
    ))]
}

/// Needs customers often have, those starting with what was typed.
pub async fn need_suggestions(req: CompletionRequest) -> Vec<&'static str> {
    let typed = req.value.to_lowercase();
    ["a gift", "a mug for tea", "a teapot", "kitchen tidying"]
        .into_iter()
        .filter(|n| n.starts_with(&typed))
        .collect()
}
