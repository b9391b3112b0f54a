//! The one core pipeline that both faces (JSON-RPC and MCP `tools/call`) run calls through.

pub mod cache;
pub mod events;
pub mod json;
pub mod lock;
pub mod metrics;
pub mod params;
pub mod pipeline;
#[cfg(feature = "redis")]
pub mod redis;
pub mod validate;

pub use cache::{CachePolicy, CacheStore, MemoryCache, StoreError};
pub use events::{Event, EventKind, Listener, ListenerDef, Listeners};
pub use lock::{LockPolicy, LockStore, MemoryLocks};
pub use pipeline::{CallRequest, Calling, Core};
#[cfg(feature = "redis")]
pub use redis::RedisStore;
