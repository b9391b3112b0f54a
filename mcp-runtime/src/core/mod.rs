//! The one core pipeline that both faces (JSON-RPC and MCP `tools/call`) run calls through.

#[cfg(feature = "redis")]
pub(crate) mod breaker;
pub(crate) mod cache;
pub mod changes;
pub(crate) mod events;
pub(crate) mod json;
pub(crate) mod lock;
pub(crate) mod params;
pub(crate) mod pipeline;
pub(crate) mod rate;
#[cfg(feature = "redis")]
pub(crate) mod redis;
#[cfg(feature = "redis")]
pub(crate) mod redis_conn;
#[cfg(feature = "redis")]
pub(crate) mod redis_work;
pub(crate) mod shares;
pub(crate) mod task;
pub(crate) mod tasks;
pub(crate) mod telemetry;
mod unwind;
pub(crate) mod validate;

pub use cache::{
    CACHE_ENTRY_OVERHEAD_BYTES, CachePolicy, CacheStore, DEFAULT_CACHE_BYTES,
    DEFAULT_CACHE_ENTRIES, MemoryCache, StoreError,
};
pub use changes::{Change, Changes};
pub use events::{Event, EventKind, Listener, ListenerDef, ListenerFn, Listeners};
pub use lock::{LockPolicy, LockStore, MemoryLocks};
pub(crate) use pipeline::{CallRequest, Calling, Core};
pub use rate::RateStore;
#[cfg(feature = "redis")]
pub use redis::RedisStore;
pub use task::{SharedTask, TaskNotice, TaskStatus, TaskView};
pub use tasks::{TaskOutcome, Tasks};
