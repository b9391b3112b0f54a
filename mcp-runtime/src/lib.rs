//! Serve ordinary Rust functions as **JSON-RPC 2.0 methods** and **MCP tools** from one
//! annotation.
//!
//! `#[rpc_method]` generates, at compile time, a method's metadata (name, groups, versions,
//! docs, JSON Schemas of its parameters and result) and registers it with `inventory`. At
//! startup the [`Server`] collects the methods into one catalog per API group and version and
//! serves them over HTTP: `POST /rpc/{group}/v{N}` (JSON-RPC, with the OpenRPC document on `GET`).
//! Methods of a group made with [`ApiGroup::mcp`] must have valid MCP tool names: a bad one is
//! a compile error.
//!
//! ```
//! use mcp_runtime::prelude::*;
//!
//! pub const MCP: ApiGroup = ApiGroup::mcp("mcp");
//!
//! /// Ping.
//! #[rpc_method(name = "Catalog.ping", groups = [MCP])]
//! fn ping(
//!     /// Who is pinging
//!     #[param(default = "x")]
//!     who: String,
//! ) -> String {
//!     format!("pong, {who}")
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder().name("demo").build().expect("valid catalog");
//! let catalog = server.registry().catalog("mcp", 1).expect("group mcp, version 1");
//! let tool = catalog.get("Catalog.ping").expect("registered");
//! assert_eq!(
//!     tool.input_schema,
//!     serde_json::json!({"type":"object","properties":{"who":{"type":"string",
//!         "description":"Who is pinging","default":"x"}},"additionalProperties":false})
//! );
//! // Serve it: server.serve("127.0.0.1:8080".parse().unwrap()).await
//! # }
//! ```
#![warn(missing_docs)]

pub(crate) mod background;
mod catalog;
pub mod cli;
mod client;
mod completion;
mod context;
pub mod core;
pub(crate) mod edge;
mod env;
pub mod error;
pub mod group;
pub mod i18n;
pub(crate) mod ids;
pub mod jsonrpc;
mod limits;
#[cfg(feature = "fmt")]
pub mod log;
mod log_level;
pub mod mcp;
#[cfg(feature = "otel")]
pub mod otel;
mod output;
mod rate_limit;
pub mod record;
mod registry;
pub mod schema;
mod scope_views;
mod server;
mod skill;
#[cfg(any(test, feature = "test-util"))]
mod test_redis;
#[cfg(feature = "test-util")]
mod test_sse;
pub mod transport;
pub(crate) mod uri_template;
mod wire;

pub use catalog::{
    Bindings, Catalog, CatalogError, MethodInfo, PromptInfo, ResourceInfo, SchemaError,
};
pub use client::Client;
pub use context::{
    CallExtras, Caller, CancelSignal, ClientInput, ContextBuilder, Face, FromContext, Identity,
    InputRequest, Notifier, RequestContext, RequestId, State, StateMap, TraceParent,
};
pub use edge::HostPolicy;
pub use env::Environment;
pub use error::{RpcError, Violation, codes};
pub use group::{ApiGroup, is_valid_tool_name};
pub use limits::Limits;
pub use mcp_macros::{
    RpcError, mcp_prompt, mcp_resource, mcp_skill, mcp_tool, rpc_listener, rpc_method, rpc_service,
};
pub use output::Output;
pub use rate_limit::{RateLimit, RatePer};
pub use record::{MethodDef, ParamDef, PromptDef, ResourceDef, TaskSupport, ToolAnnotations};
pub use registry::Registry;
pub use skill::SkillInfo;
/// The `JsonSchema` trait (schemars'); the derive of the same name is this crate's, which needs
/// no `schemars` dependency in the user's crate (see [`macro@JsonSchema`]).
mod schema_trait {
    pub use schemars::JsonSchema;
}
pub use mcp_macros::JsonSchema;
pub use schema_trait::*;
/// `serde_json`, the values methods take and return (`mcp_runtime::serde_json::json!` in a
/// test), so a service needs no dependency of its own for it.
pub use serde_json;
pub use server::{BuildError, DEFAULT_LISTEN, Server, ServerBuilder, shutdown_signal};

/// Everything a service module needs: `use mcp_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::core::{Changes, Event, EventKind};
    pub use crate::mcp::{
        Blob, Completion, CompletionRequest, Content, Elicited, LogLevel, PromptMessage,
        PromptResult, ResourceContent, SamplingRequest, ToolOutput,
    };
    pub use crate::rpc_listener;
    pub use crate::{
        ApiGroup, Environment, FromContext, JsonSchema, RequestContext, RpcError, Server, State,
        mcp_prompt, mcp_resource, mcp_skill, mcp_tool, rpc_method, rpc_service,
    };
}

/// The pipeline, the faces and the stdio loop, as this repository's tests, benches and fuzz
/// targets drive them (feature `test-util`, off by default, as tokio's is). Not part of the
/// stable API: it changes with the internals it exposes.
#[cfg(feature = "test-util")]
pub mod test_util {
    pub use crate::core::cache::cache_key;
    pub use crate::core::pipeline::{CallRequest, Calling, Core};
    pub use crate::edge::write::AnswerBody;
    pub use crate::jsonrpc::face::{Reply, handle, handle_as};
    pub use crate::mcp::handler::{Answer, McpEndpoint, Message};
    pub use crate::mcp::protocol::Era;
    pub use crate::test_redis::Redis;
    pub use crate::test_sse::{SseEvent, sse_events, sse_events_so_far};
    pub use crate::transport::stdio::serve_io;
}

/// What the generated code uses. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use futures_util::future::BoxFuture;
    pub use schemars::{JsonSchema, Schema, SchemaGenerator};
    pub use {inventory, schemars, serde, serde_json};

    pub use crate::completion::{Completer, Completion, CompletionRequest};
    pub use crate::context::{FromContext, RequestContext, SharedState};
    pub use crate::core::params::{finish, json_params, or_default, required, run_check};
    pub use crate::core::{CachePolicy, Event, EventKind, ListenerDef, ListenerFn, LockPolicy};
    pub use crate::error::{RpcError, Violation};
    pub use crate::group::{ApiGroup, is_valid_tool_name};
    pub use crate::mcp::prompt::PromptReturn;
    pub use crate::mcp::resource::ResourceReturn;
    pub use crate::output::{
        ContextOr, JsonOutput, JsonOutputSchema, Output, Probe, RpcParam, RpcReturn, SchemaProbe,
        SelectParam, SpecialOutput, SpecialOutputSchema,
    };
    pub use crate::rate_limit::RateLimit;
    pub use crate::record::{
        APP_MIME_TYPE, Annotations, AppPermission, AppUi, CompletionDef, Handler, Icon, MethodDef,
        ParamDef, ParamKind, Params, PromptDef, ResourceDef, Role, SkillDef, SkillFile,
        SkillTranslation, SourceLocation, TaskSupport, ToolAnnotations, ToolApp,
    };

    /// The methods of a `JsonSchema` impl, as function pointers: what the prelude's
    /// `#[derive(JsonSchema)]` delegates to (those of its shadow copy of the item).
    pub struct SchemaFns {
        /// `JsonSchema::inline_schema`.
        pub inline_schema: fn() -> bool,
        /// `JsonSchema::schema_name`.
        pub schema_name: fn() -> std::borrow::Cow<'static, str>,
        /// `JsonSchema::schema_id`.
        pub schema_id: fn() -> std::borrow::Cow<'static, str>,
        /// `JsonSchema::json_schema`.
        pub json_schema: fn(&mut SchemaGenerator) -> Schema,
        /// schemars' hidden `_schemars_private_non_optional_json_schema`.
        pub non_optional_json_schema: fn(&mut SchemaGenerator) -> Schema,
        /// schemars' hidden `_schemars_private_is_option`.
        pub is_option: fn() -> bool,
    }

    impl SchemaFns {
        /// The methods of `T`'s impl.
        pub fn of<T: JsonSchema + ?Sized>() -> Self {
            SchemaFns {
                inline_schema: T::inline_schema,
                schema_name: T::schema_name,
                schema_id: T::schema_id,
                json_schema: T::json_schema,
                non_optional_json_schema: T::_schemars_private_non_optional_json_schema,
                is_option: T::_schemars_private_is_option,
            }
        }
    }

    /// Compile-time check: `T` can be returned from a resource.
    pub fn assert_resource_return<T: ResourceReturn>() {}
    /// Compile-time check: `T` can be returned from a prompt.
    pub fn assert_prompt_return<T: PromptReturn>() {}

    /// Runs a `#[complete(with = f)]` function.
    pub fn complete<M, F: Completer<M>>(
        f: F,
        req: CompletionRequest,
    ) -> BoxFuture<'static, Result<Completion, RpcError>> {
        f.complete(req)
    }

    /// Compile-time check: `T` can be a JSON parameter.
    pub fn assert_param<T: RpcParam>() {}
    /// Compile-time check: `T` can be returned.
    pub fn assert_return<T: RpcReturn>() {}

    /// The schema of a parameter type.
    pub fn param_schema<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
        g.subschema_for::<T>()
    }

    /// A default value as JSON, for the schemas.
    pub fn to_json<T: serde::Serialize>(value: &T) -> serde_json::Value {
        serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
    }

    /// The `#[rpc_service]` instance a method is called on.
    pub fn service<T: Send + Sync + 'static>(
        ctx: &RequestContext,
    ) -> Result<std::sync::Arc<T>, RpcError> {
        ctx.state::<T>()
            .ok_or_else(crate::context::missing_state::<T>)
    }

    /// An already-finished call, as a boxed future.
    pub fn ready(r: Result<Output, RpcError>) -> BoxFuture<'static, Result<Output, RpcError>> {
        Box::pin(std::future::ready(r))
    }

    /// The shared state a context parameter of type `T` is taken from (`MethodDef::states`).
    pub fn needed_state<T: FromContext>() -> Option<(std::any::TypeId, &'static str)> {
        T::needed_state()
    }

    pub use crate::State;
    pub use crate::record::NeededState;

    /// Extracts a context parameter.
    pub fn from_context<T: FromContext>(ctx: &RequestContext) -> Result<T, RpcError> {
        T::from_context(ctx)
    }

    /// Builds the error of a derived `RpcError` conversion.
    #[track_caller]
    pub fn error_from<E: std::error::Error + Send + Sync + 'static>(code: i32, e: E) -> RpcError {
        RpcError::from_error(code, e)
    }
}
