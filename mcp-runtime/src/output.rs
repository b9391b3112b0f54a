//! What a method returns, turned into the result JSON and its schema.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::error::RpcError;

/// A method's result, serialized once: `/rpc` writes it as `result`, MCP as text and
/// `structuredContent`.
#[derive(Debug, Clone)]
pub enum Output {
    /// The result's JSON text.
    Json(Box<RawValue>),
    /// MCP content ([`crate::mcp::ToolOutput`]), as its JSON object.
    Tool(Box<RawValue>),
}

impl Output {
    /// Serializes a value.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, RpcError> {
        serde_json::value::to_raw_value(value)
            .map(Output::Json)
            .map_err(|e| RpcError::internal(format!("cannot serialize the result: {e}")))
    }

    /// The result's JSON text.
    pub fn as_json(&self) -> &RawValue {
        match self {
            Output::Json(raw) | Output::Tool(raw) => raw,
        }
    }
}

/// Autoref-specialization probe over a return value (see [`SpecialOutput`] and [`JsonOutput`]).
#[doc(hidden)]
pub struct Probe<'a, T: ?Sized>(pub &'a T);

/// Autoref-specialization probe over a return type, for its schema.
#[doc(hidden)]
pub struct SchemaProbe<T: ?Sized>(pub std::marker::PhantomData<T>);

impl<T: ?Sized> SchemaProbe<T> {
    /// A probe.
    pub const NEW: Self = SchemaProbe(std::marker::PhantomData);
}

/// Return types with their own rules: `()` (result `null`, no schema) and untyped JSON
/// (no schema). Chosen before [`JsonOutput`] by method resolution.
#[doc(hidden)]
pub trait SpecialOutput {
    fn __rpc_output(&self) -> Result<Output, RpcError>;
}

#[doc(hidden)]
pub trait SpecialOutputSchema {
    fn __rpc_output_schema(&self, g: &mut SchemaGenerator) -> Option<Schema>;
}

/// Every other return type: serialized with serde, described with schemars.
#[doc(hidden)]
pub trait JsonOutput {
    fn __rpc_output(&self) -> Result<Output, RpcError>;
}

#[doc(hidden)]
pub trait JsonOutputSchema {
    fn __rpc_output_schema(&self, g: &mut SchemaGenerator) -> Option<Schema>;
}

impl SpecialOutput for Probe<'_, ()> {
    fn __rpc_output(&self) -> Result<Output, RpcError> {
        Output::json(&())
    }
}
impl SpecialOutputSchema for SchemaProbe<()> {
    fn __rpc_output_schema(&self, _: &mut SchemaGenerator) -> Option<Schema> {
        None
    }
}
impl SpecialOutput for Probe<'_, serde_json::Value> {
    fn __rpc_output(&self) -> Result<Output, RpcError> {
        Output::json(self.0)
    }
}
impl SpecialOutputSchema for SchemaProbe<serde_json::Value> {
    fn __rpc_output_schema(&self, _: &mut SchemaGenerator) -> Option<Schema> {
        None
    }
}

impl<T: Serialize> JsonOutput for &Probe<'_, T> {
    fn __rpc_output(&self) -> Result<Output, RpcError> {
        Output::json(self.0)
    }
}
impl<T: JsonSchema> JsonOutputSchema for &SchemaProbe<T> {
    fn __rpc_output_schema(&self, g: &mut SchemaGenerator) -> Option<Schema> {
        Some(g.subschema_for::<T>())
    }
}

/// A type a method may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an RPC method",
    label = "the result must implement `serde::Serialize` and `JsonSchema`",
    note = "add `#[derive(serde::Serialize, JsonSchema)]` to `{Self}`, or return `serde_json::Value`"
)]
#[doc(hidden)]
pub trait RpcReturn {}
// Not recommended: a type missing both traits gets one error (this trait's message, which
// names both), not one per missing bound with the list of every type that has it.
#[diagnostic::do_not_recommend]
impl<T: Serialize + JsonSchema> RpcReturn for T {}

/// A type a JSON parameter may have.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an RPC parameter",
    label = "parameters must implement `serde::Deserialize` and `JsonSchema`",
    note = "add `#[derive(serde::Deserialize, JsonSchema)]` to `{Self}`, or mark a context parameter `#[param(context)]`"
)]
#[doc(hidden)]
pub trait RpcParam {}
impl<T: serde::de::DeserializeOwned + JsonSchema> RpcParam for T {}

/// `ContextOr<true>`: a context type; `ContextOr<false>`: a JSON parameter type.
#[doc(hidden)]
pub struct ContextOr<const IS_CONTEXT: bool>;

/// The type a parameter named like a context type must be a JSON parameter type as: `()` for a
/// context type (nothing to check), else the type itself (checked with [`RpcParam`], and
/// reported with its message).
#[doc(hidden)]
pub trait SelectParam<T> {
    type Param;
}
impl<T> SelectParam<T> for ContextOr<true> {
    type Param = ();
}
impl<T> SelectParam<T> for ContextOr<false> {
    type Param = T;
}
