//! Shared setup: one example server and a current-thread runtime per fuzzing process.

use std::sync::OnceLock;

pub fn server() -> &'static mcp_runtime::Server {
    static S: OnceLock<mcp_runtime::Server> = OnceLock::new();
    S.get_or_init(|| {
        examples::builder().env(mcp_runtime::Environment::PROD).build().expect("example server")
    })
}

pub fn rt() -> &'static tokio::runtime::Runtime {
    static R: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    R.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime"))
}
