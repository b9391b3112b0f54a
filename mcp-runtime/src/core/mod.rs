//! The one core pipeline that both faces (JSON-RPC and MCP `tools/call`) run calls through.

pub mod cache;
pub mod changes;
pub mod events;
pub(crate) mod json;
pub mod lock;
pub mod metrics;
pub(crate) mod params;
pub(crate) mod pipeline;
#[cfg(feature = "redis")]
pub mod redis;
pub mod tasks;
pub(crate) mod validate;

pub use cache::{CachePolicy, CacheStore, MemoryCache, StoreError};
pub use changes::{Change, Changes};
pub use events::{Event, EventKind, Listener, ListenerDef, Listeners};
pub use lock::{LockPolicy, LockStore, MemoryLocks};
pub use pipeline::{CallRequest, Calling, Core};
#[cfg(feature = "redis")]
pub use redis::RedisStore;
pub use tasks::{TaskNotice, TaskOutcome, TaskStatus, TaskView, Tasks};
