//! The example service: `cargo run --release -p examples --bin catalog [-- --listen ADDR]`.

use std::net::SocketAddr;

fn usage() -> ! {
    eprintln!("usage: catalog [--listen ADDR]   (default 127.0.0.1:8080)");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let mut listen: SocketAddr = SocketAddr::from(([127, 0, 0, 1], 8080));
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => match args.next().and_then(|v| v.parse().ok()) {
                Some(addr) => listen = addr,
                None => usage(),
            },
            "-h" | "--help" => usage(),
            _ => usage(),
        }
    }
    let server = match examples::server() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("catalog: {e}");
            std::process::exit(1);
        }
    };
    tracing::info!(%listen, "catalog serving JSON-RPC at /rpc/{{group}}/v{{N}}");
    if let Err(e) = server.serve(listen).await {
        eprintln!("catalog: {e}");
        std::process::exit(1);
    }
}
