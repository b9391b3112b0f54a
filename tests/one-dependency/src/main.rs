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
        // Served over HTTP on a loopback port, asked with a plain HTTP/1.1 request.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let served = server.clone();
        tokio::spawn(async move {
            served
                .serve_listener(listener, std::future::pending())
                .await
        });
        let body = r#"{"jsonrpc":"2.0","method":"Shop.greet","params":{"name":"Bob"},"id":1}"#;
        let request = format!(
            "POST /rpc/shop/v1 HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(
            answer.ends_with(r#"{"jsonrpc":"2.0","id":1,"result":"Hello, Bob!"}"#),
            "{answer}"
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
