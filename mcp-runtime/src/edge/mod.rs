//! The edge every request crosses, one for every face (`/rpc`, MCP over HTTP, MCP over stdio):
//!
//! - [`policy`](mod@policy): `Host`/`Origin`, CORS, `Content-Type`, body limit and timeout,
//!   on every HTTP route;
//! - `read`: the one JSON-RPC reader (per-face rules are a `Dialect`);
//! - `batch`: the one batch executor;
//! - `write`: the one writer of results, errors, batches and SSE events;
//! - every bound they read is in [`crate::Limits`] (one object, below the core);
//! - `caller`: who a request is from, for the per-caller shares of those bounds;
//! - `places`: the counts of what is held at once, in all and per holder.
//!
//! The faces (`jsonrpc`, `mcp`) decide what a message means and call the core through its
//! one entry point, `Core::call` (`core::pipeline`).

pub(crate) mod batch;
pub(crate) mod caller;
pub(crate) mod places;
pub mod policy;
pub(crate) mod read;
pub(crate) mod write;

pub use policy::HostPolicy;
