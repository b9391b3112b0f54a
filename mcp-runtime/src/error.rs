//! The one error model: [`RpcError`], its code table and its rendering per environment.

use std::borrow::Cow;
use std::fmt;
use std::panic::Location;

use serde_json::{Map, Value};

use crate::env::{self, Environment};

/// Standard and application error codes.
pub mod codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The method does not exist in this group and version.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i32 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// Runtime error in a procedure.
    pub const RUNTIME_ERROR: i32 = -32500;
    /// Logic error in a procedure (also: the method is locked).
    pub const LOGIC_ERROR: i32 = -32400;
    /// No token was sent to a protected group.
    pub const TOKEN_NOT_SENT: i32 = -32401;
    /// The token sent is not valid.
    pub const INVALID_TOKEN: i32 = -32403;
    /// The requested data does not exist.
    pub const DATA_NOT_FOUND: i32 = -32404;
    /// An asynchronous request failed.
    pub const ASYNC_REQUEST: i32 = -32300;
    /// A batch request failed.
    pub const BATCH_ERROR: i32 = -32301;
}

/// The exception name and default message of a code (the reference's class table).
fn kind_of(code: i32) -> (&'static str, &'static str) {
    use codes::*;
    match code {
        PARSE_ERROR => (
            "RpcJsonParseException",
            "Invalid JSON was received by the server.",
        ),
        INVALID_REQUEST => ("RpcBadRequestException", "Invalid Request"),
        METHOD_NOT_FOUND => ("RpcMethodNotFoundExceptionRpc", "Method not found"),
        INVALID_PARAMS => ("RpcBadParamException", "Required parameter not passed"),
        INTERNAL_ERROR => ("RpcInternalException", "Internal JSON-RPC error"),
        RUNTIME_ERROR => ("RpcRuntimeException", "Runtime error on procedure"),
        LOGIC_ERROR => ("RpcLogicException", "Logic error on procedure"),
        TOKEN_NOT_SENT => ("RpcTokenNotSentException", "Unauthorized. Token not found"),
        INVALID_TOKEN => ("RpcInvalidTokenException", "Forbidden. Invalid token"),
        DATA_NOT_FOUND => (
            "RpcDataNotFoundException",
            "Api method returned error \"Data not found\"",
        ),
        ASYNC_REQUEST => ("RpcAsyncRequestException", "Async request is invalid"),
        BATCH_ERROR => ("RpcInvalidBatchRequestExceptions", "Batch request error"),
        -32099..=-32000 => ("RpcCustomServerException", "Server error"),
        // Other reserved codes map to the nearest hundred, as the reference does.
        -32768..=-32100 => {
            let hundred = (code / 100) * 100;
            match hundred {
                -32700 | -32600 | -32500 | -32400 | -32300 => kind_of(hundred),
                _ => kind_of(INTERNAL_ERROR),
            }
        }
        _ => (
            "CustomApplicationException",
            "Custom application error occurred",
        ),
    }
}

/// The exception name the wire shows for a built-in code (PHP-compatible class names).
pub fn exception_name(code: i32) -> String {
    format!("Ufo\\RpcError\\{}", kind_of(code).0)
}

/// One violated rule of a call's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The parameter, or `param.path.to.field` inside it (`unknown` at the root).
    pub key: String,
    /// The JSON pointer of the value inside the params object (`/limit`).
    pub pointer: String,
    /// The JSON Schema keyword that failed (`required`, `type`, `minLength`, ...).
    pub keyword: Cow<'static, str>,
    /// A human-readable message.
    pub message: String,
}

#[derive(Debug)]
enum Data {
    /// `{"exception": ..., "extra": {...}}`, and details in debug environments.
    Exception {
        exception: Cow<'static, str>,
        extra: Map<String, Value>,
    },
    /// Parameter violations: `data` is `{"key": ["message", ...]}`.
    Violations(Vec<Violation>),
    /// `data` exactly as given.
    Raw(Value),
}

/// A JSON-RPC error: a code, a message and data, with its cause for the logs.
///
/// `RpcError` crosses every layer; each face (JSON-RPC, MCP) renders it once, at its edge,
/// through [`RpcError::to_wire`], which decides what `data` shows in the current
/// [`Environment`]: in production the exception name and `extra` only; in `dev`/`test` also the
/// message, code, source location, backtrace and the `source()` chain.
///
/// ```
/// use mcp_runtime::RpcError;
///
/// let e = RpcError::not_found("No product 7").with_extra("id", 7);
/// assert_eq!(e.code(), -32404);
/// assert_eq!(e.message(), "No product 7");
/// ```
pub struct RpcError(Box<Inner>);

// Boxed so `Result<T, RpcError>` stays one pointer wide on the request path.
struct Inner {
    code: i32,
    message: Cow<'static, str>,
    data: Data,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    location: &'static Location<'static>,
    backtrace: Option<Box<std::backtrace::Backtrace>>,
    /// Set when the params failed the method's input schema (MCP answers these differently).
    from_schema: bool,
    /// Where a method panicked (the panic site, not where this error was built).
    panic_site: Option<(String, u32)>,
}

impl RpcError {
    /// An error with a code and message. An empty message becomes the code's default message.
    #[track_caller]
    pub fn new(code: i32, message: impl Into<Cow<'static, str>>) -> Self {
        let mut message = message.into();
        if message.is_empty() || message == "0" {
            message = Cow::Borrowed(kind_of(code).1);
        }
        Self(Box::new(Inner {
            code,
            message,
            data: Data::Exception {
                exception: Cow::Owned(exception_name(code)),
                extra: Map::new(),
            },
            source: None,
            location: Location::caller(),
            backtrace: env::capture_details()
                .then(|| Box::new(std::backtrace::Backtrace::force_capture())),
            from_schema: false,
            panic_site: None,
        }))
    }

    /// -32700: the body or line is not JSON.
    #[track_caller]
    pub fn parse_error(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(codes::PARSE_ERROR, message)
    }
    /// -32600: not a valid request object.
    #[track_caller]
    pub fn invalid_request(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(codes::INVALID_REQUEST, message)
    }
    /// -32601: the method does not exist.
    #[track_caller]
    pub fn method_not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(codes::METHOD_NOT_FOUND, message)
    }
    /// -32602: invalid parameters.
    #[track_caller]
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(codes::INVALID_PARAMS, message)
    }
    /// -32603: internal error.
    #[track_caller]
    pub fn internal(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(codes::INTERNAL_ERROR, message)
    }
    /// -32500: runtime error.
    #[track_caller]
    pub fn runtime(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(codes::RUNTIME_ERROR, message)
    }
    /// -32400: logic error.
    #[track_caller]
    pub fn logic(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(codes::LOGIC_ERROR, message)
    }
    /// -32401: no token sent.
    #[track_caller]
    pub fn token_not_sent() -> Self {
        Self::new(codes::TOKEN_NOT_SENT, "")
    }
    /// -32403: invalid token.
    #[track_caller]
    pub fn invalid_token() -> Self {
        Self::new(codes::INVALID_TOKEN, "")
    }
    /// -32404: data not found.
    #[track_caller]
    pub fn not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(codes::DATA_NOT_FOUND, message)
    }

    /// -32602 `Invalid Data for call method: <method>` with every violation in `data`.
    #[track_caller]
    pub fn violations(method: &str, violations: Vec<Violation>) -> Self {
        let mut e = Self::new(
            codes::INVALID_PARAMS,
            format!("Invalid Data for call method: {method}"),
        );
        e.0.data = Data::Violations(violations);
        e
    }

    /// Marks a violations error as a failure of the input schema.
    pub(crate) fn schema_failure(mut self) -> Self {
        self.0.from_schema = true;
        self
    }

    /// Whether the params failed the method's input schema (before anything ran).
    pub fn is_schema_failure(&self) -> bool {
        self.0.from_schema
    }

    /// Sets `data` verbatim (replacing exception and extra).
    pub fn with_data(mut self, data: Value) -> Self {
        self.0.data = Data::Raw(data);
        self
    }

    /// Adds a key to `extra` (shown in every environment). Values that do not serialize are dropped.
    pub fn with_extra(mut self, key: impl Into<String>, value: impl serde::Serialize) -> Self {
        if let Data::Exception { extra, .. } = &mut self.0.data
            && let Ok(v) = serde_json::to_value(value)
        {
            extra.insert(key.into(), v);
        }
        self
    }

    /// Sets the exception name shown in `data.exception` (default: the code's class name).
    pub fn with_exception(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        if let Data::Exception { exception, .. } = &mut self.0.data {
            *exception = name.into();
        }
        self
    }

    /// Attaches the underlying cause (its `source()` chain is shown in debug environments).
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.0.source = Some(Box::new(source));
        self
    }

    /// Wraps any error: its `Display` is the message, its type name the exception.
    #[track_caller]
    pub fn from_error<E: std::error::Error + Send + Sync + 'static>(code: i32, err: E) -> Self {
        Self::new(code, err.to_string())
            .with_exception(std::any::type_name::<E>())
            .with_source(err)
    }

    /// The error of a panicking method: -32603; the panic message only in debug environments.
    pub(crate) fn from_panic(payload: Box<dyn std::any::Any + Send>, env: &Environment) -> Self {
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_owned());
        let message = if env.is_debug() {
            format!("Method panicked: {text}")
        } else {
            String::new()
        };
        let mut e = Self::internal(message).with_exception("panic");
        e.0.panic_site = panic_hook::take_site();
        e
    }

    /// The code.
    pub fn code(&self) -> i32 {
        self.0.code
    }
    /// The message.
    pub fn message(&self) -> &str {
        &self.0.message
    }
    /// The parameter violations, if this is a validation error.
    pub fn violation_list(&self) -> Option<&[Violation]> {
        match &self.0.data {
            Data::Violations(v) => Some(v),
            _ => None,
        }
    }
    /// The `source()` chain, outermost first (for logs).
    pub fn source_chain(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut err = self
            .0
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static));
        while let Some(e) = err {
            out.push(e.to_string());
            err = e.source();
        }
        out
    }

    /// Where the error was made.
    pub fn location(&self) -> &'static Location<'static> {
        self.0.location
    }

    /// The HTTP status a JSON-RPC response with this error gets.
    pub fn http_status(&self) -> u16 {
        match self.0.code {
            codes::TOKEN_NOT_SENT => 401,
            codes::INVALID_TOKEN => 403,
            codes::PARSE_ERROR => 500,
            _ => 200,
        }
    }

    /// The wire object `{"code","message","data"}` for `env`.
    pub fn to_wire(&self, env: &Environment) -> Value {
        let mut obj = Map::with_capacity(3);
        obj.insert("code".into(), self.0.code.into());
        obj.insert("message".into(), Value::String(self.0.message.to_string()));
        obj.insert("data".into(), self.data_for(env));
        Value::Object(obj)
    }

    fn data_for(&self, env: &Environment) -> Value {
        match &self.0.data {
            Data::Raw(v) => v.clone(),
            Data::Violations(list) => {
                let mut map = Map::new();
                for v in list {
                    match map
                        .entry(v.key.clone())
                        .or_insert_with(|| Value::Array(Vec::new()))
                    {
                        Value::Array(a) => a.push(Value::String(v.message.clone())),
                        _ => unreachable!("violation entries are arrays"),
                    }
                }
                Value::Object(map)
            }
            Data::Exception { exception, extra } => {
                let mut d = Map::new();
                d.insert("exception".into(), Value::String(exception.to_string()));
                if !extra.is_empty() {
                    d.insert("extra".into(), Value::Object(extra.clone()));
                }
                if env.is_debug() {
                    d.insert("message".into(), Value::String(self.0.message.to_string()));
                    d.insert("code".into(), self.0.code.into());
                    let (file, line) = match &self.0.panic_site {
                        Some((f, l)) => (f.as_str(), *l),
                        None => (self.0.location.file(), self.0.location.line()),
                    };
                    d.insert("file".into(), file.into());
                    d.insert("line".into(), line.into());
                    if let Some(bt) = &self.0.backtrace {
                        d.insert("trace".into(), Value::String(bt.to_string()));
                    }
                    d.insert("previous".into(), {
                        let chain = self.source_chain();
                        if chain.is_empty() {
                            Value::Null
                        } else {
                            chain.into()
                        }
                    });
                }
                Value::Object(d)
            }
        }
    }
}

/// Records where panics happen, so a panicking method's error names its panic site.
pub(crate) mod panic_hook {
    use std::cell::RefCell;
    use std::sync::Once;

    thread_local! {
        static SITE: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
    }

    /// Installs the hook once, keeping the previous hook (which still prints the panic).
    pub fn install() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if let Some(l) = info.location() {
                    SITE.with(|s| *s.borrow_mut() = Some((l.file().to_owned(), l.line())));
                }
                previous(info);
            }));
        });
    }

    /// The site of the last panic on this thread (`catch_unwind` runs on the panicking thread).
    pub fn take_site() -> Option<(String, u32)> {
        SITE.with(|s| s.borrow_mut().take())
    }
}

impl fmt::Debug for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcError")
            .field("code", &self.0.code)
            .field("message", &self.0.message)
            .field("data", &self.0.data)
            .field("location", &self.0.location)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.0.message, self.0.code)
    }
}

impl std::error::Error for RpcError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source.as_deref().map(|e| e as _)
    }
}

impl From<std::io::Error> for RpcError {
    #[track_caller]
    fn from(e: std::io::Error) -> Self {
        Self::from_error(codes::INTERNAL_ERROR, e)
    }
}

impl From<serde_json::Error> for RpcError {
    #[track_caller]
    fn from(e: serde_json::Error) -> Self {
        Self::from_error(codes::INTERNAL_ERROR, e)
    }
}

impl From<String> for RpcError {
    #[track_caller]
    fn from(message: String) -> Self {
        Self::runtime(message)
    }
}

impl From<&'static str> for RpcError {
    #[track_caller]
    fn from(message: &'static str) -> Self {
        Self::runtime(message)
    }
}

impl From<Box<dyn std::error::Error + Send + Sync>> for RpcError {
    #[track_caller]
    fn from(e: Box<dyn std::error::Error + Send + Sync>) -> Self {
        let mut err = Self::internal(e.to_string());
        err.0.source = Some(e);
        err
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn default_messages_and_names() {
        let e = RpcError::not_found("");
        assert_eq!(e.message(), "Api method returned error \"Data not found\"");
        assert_eq!(exception_name(-32450), "Ufo\\RpcError\\RpcLogicException");
        assert_eq!(
            exception_name(-32250),
            "Ufo\\RpcError\\RpcInternalException"
        );
        assert_eq!(
            exception_name(500),
            "Ufo\\RpcError\\CustomApplicationException"
        );
        assert_eq!(
            exception_name(-32050),
            "Ufo\\RpcError\\RpcCustomServerException"
        );
    }

    #[test]
    fn prod_data_has_exception_and_extra_only() {
        let e = RpcError::runtime("kaboom");
        assert_eq!(
            e.to_wire(&Environment::PROD),
            json!({"code":-32500,"message":"kaboom","data":{"exception":"Ufo\\RpcError\\RpcRuntimeException"}})
        );
        let e = RpcError::not_found("x").with_extra("id", 7);
        assert_eq!(
            e.to_wire(&Environment::PROD)["data"]["extra"],
            json!({"id":7})
        );
    }

    #[test]
    fn debug_data_has_details() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] std::io::Error);
        let e = RpcError::from_error(-32000, Outer(std::io::Error::other("inner")));
        let d = &e.to_wire(&Environment::DEV)["data"];
        assert_eq!(d["code"], -32000);
        assert_eq!(d["message"], "outer");
        assert!(d["file"].as_str().is_some_and(|f| f.ends_with("error.rs")));
        assert_eq!(d["previous"], json!(["outer", "inner"]));
    }

    #[test]
    fn violations_group_by_key() {
        let v = |k: &str, m: &str| Violation {
            key: k.into(),
            pointer: format!("/{k}"),
            keyword: "x".into(),
            message: m.into(),
        };
        let e = RpcError::violations("M.x", vec![v("a", "1"), v("b", "2"), v("a", "3")]);
        assert_eq!(
            e.to_wire(&Environment::PROD),
            json!({"code":-32602,"message":"Invalid Data for call method: M.x","data":{"a":["1","3"],"b":["2"]}})
        );
    }
}
