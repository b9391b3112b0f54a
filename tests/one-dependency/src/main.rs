//! The README's quick start, and the DTO of a user's first hour, with no `schemars` dependency.

use mcp_runtime::prelude::*;

/// Published over JSON-RPC at `/rpc/shop/v1` and over MCP at `/mcp/shop/v1`.
pub const SHOP: ApiGroup = ApiGroup::mcp("shop");

/// Greet someone.
///
/// The first doc line is the summary; the whole comment is the description.
#[rpc_method(name = "Shop.greet", groups = [SHOP])]
fn greet(
    /// Who to greet
    name: String,
    /// How many times
    #[param(default = 1)]
    times: u32,
) -> String {
    vec![format!("Hello, {name}!"); times as usize].join(" ")
}

/// A product of the shop.
#[derive(serde::Serialize, serde::Deserialize, JsonSchema)]
pub struct Product {
    /// Its id
    pub id: u64,
    pub name: String,
    /// What it belongs to (a recursive DTO)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Product>,
}

/// One product, by id.
#[rpc_method(name = "Shop.product", groups = [SHOP])]
fn product(id: u64) -> Result<Product, RpcError> {
    match id {
        1 => Ok(Product {
            id: 1,
            name: "Red mug".into(),
            parts: Vec::new(),
        }),
        _ => Err(RpcError::not_found(format!("no product {id}"))),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder().name("shop").build()?;
    server.serve("127.0.0.1:8080".parse()?).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use mcp_runtime::serde_json::json;

    use super::*;

    #[tokio::test]
    async fn greet_and_product_in_process() {
        let ctx = RequestContext::builder().build();
        let _ = &ctx;
        assert_eq!(greet("Ann".into(), 2), "Hello, Ann! Hello, Ann!");

        let server = Server::builder().name("shop").build().unwrap();
        let client = server.client("shop", 1);
        assert_eq!(
            client
                .call("Shop.greet", json!({"name": "Ann"}))
                .await
                .unwrap(),
            json!("Hello, Ann!")
        );
        assert_eq!(
            client.call("Shop.product", json!({"id": 1})).await.unwrap(),
            json!({"id": 1, "name": "Red mug"})
        );
        assert_eq!(
            client
                .call("Shop.product", json!({"id": 2}))
                .await
                .unwrap_err()
                .code(),
            -32404
        );
        let catalog = server.registry().catalog("shop", 1).unwrap();
        let method = catalog.get("Shop.product").unwrap();
        let schema = method.output_schema.as_ref().unwrap().to_string();
        assert!(
            schema.contains("\"Product\"") && schema.contains("Its id"),
            "{schema}"
        );
    }
}
