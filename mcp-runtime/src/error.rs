//! The one error model: [`RpcError`], its code table and its rendering per environment.

use std::backtrace::{Backtrace, BacktraceStatus};
use std::borrow::Cow;
use std::fmt;
use std::panic::Location;

use serde_json::{Map, Value};

use crate::env::Environment;

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
    /// MCP, handshake era: `resources/read` or `resources/subscribe` of a URI that names no
    /// resource (`data.uri` names it); 2026-07-28 answers [`INVALID_PARAMS`] instead.
    pub const RESOURCE_NOT_FOUND: i32 = -32002;
    /// MCP 2026-07-28: an `Mcp-*` header does not mirror the request body (HTTP 400).
    pub const HEADER_MISMATCH: i32 = -32020;
    /// MCP 2026-07-28: the envelope names a protocol revision the server does not serve
    /// (`data.supported` lists those it does; HTTP 400).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
    /// MCP: the call needs a client capability the client did not declare (`data.requiredCapabilities`
    /// names it, e.g. `{"sampling":{}}`); HTTP 400 on 2026-07-28.
    pub const MISSING_CLIENT_CAPABILITY: i32 = -32021;
    /// The caller called a method more often than its rate limit allows (`data.retryAfterMs`
    /// says when to try again); HTTP 429 with `Retry-After` where the face answers one call.
    pub const RATE_LIMITED: i32 = -32429;
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
        RATE_LIMITED => ("RpcTooManyRequestsException", "Too many requests"),
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

/// How many characters of a name or URI a client sent an error message repeats.
pub(crate) const SHOWN_CHARS: usize = 128;

/// A name or URI a client sent, as an error message repeats it: its first
/// [`SHOWN_CHARS`] characters, then `…` when it was longer. Every echo of client input goes
/// through here, so a 1 MB name costs a 1 MB request, not a 1 MB answer too.
pub(crate) fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(SHOWN_CHARS) {
        None => std::borrow::Cow::Borrowed(s),
        Some((at, _)) => std::borrow::Cow::Owned(format!("{}…", &s[..at])),
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

/// How many violations a validation error reports ([`crate::Limits::violations`], 20 by
/// default). Past it, one last entry counts the rest (`"... and N more"`, key
/// [`MORE_VIOLATIONS_KEY`], keyword `truncated`), so an error stays small however many unknown
/// or invalid parameters a request has.
const MAX_VIOLATIONS: usize = crate::Limits::DEFAULT_VIOLATIONS;

/// The key (and, in `data`, the member) of the entry that counts the violations past
/// [`crate::Limits::violations`]: `...`, which no parameter name can be.
pub const MORE_VIOLATIONS_KEY: &str = "...";

/// Collects the violations of one call, keeping the first [`crate::Limits::violations`] and counting the
/// rest without building them.
#[derive(Debug)]
pub struct ViolationSink {
    list: Vec<Violation>,
    more: usize,
    cap: usize,
}

impl Default for ViolationSink {
    fn default() -> Self {
        Self::new()
    }
}

impl ViolationSink {
    /// A sink keeping [`crate::Limits::violations`].
    pub fn new() -> Self {
        Self::with_cap(MAX_VIOLATIONS)
    }

    /// A sink keeping `cap` violations (at least 1).
    pub fn with_cap(cap: usize) -> Self {
        Self {
            list: Vec::new(),
            more: 0,
            cap: cap.max(1),
        }
    }

    /// Whether the sink keeps no more violations (the next ones are only counted).
    pub fn is_full(&self) -> bool {
        self.list.len() >= self.cap
    }

    /// Adds a violation, built only when there is room for it.
    pub fn push_with(&mut self, build: impl FnOnce() -> Violation) {
        if self.is_full() {
            self.more = self.more.saturating_add(1);
        } else {
            self.list.push(build());
        }
    }

    /// Adds a violation (counted only, when the sink is full).
    pub fn push(&mut self, v: Violation) {
        self.push_with(|| v);
    }

    /// Counts `n` violations without building them (they go to the kept ones while there is
    /// room: use [`ViolationSink::push_with`] for those).
    fn count_more(&mut self, n: usize) {
        self.more = self.more.saturating_add(n);
    }

    /// Adds `n` violations, building those that fit with `build(i)` (`i` < `n`) and counting
    /// the rest: O(kept) work, however large `n` is.
    pub fn extend_with(&mut self, n: usize, mut build: impl FnMut(usize) -> Violation) {
        let room = self.cap.saturating_sub(self.list.len()).min(n);
        self.list.extend((0..room).map(&mut build));
        self.count_more(n - room);
    }

    /// How many violations were found in all (kept and counted).
    pub fn total(&self) -> usize {
        self.list.len().saturating_add(self.more)
    }

    /// Whether no violation was found.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty() && self.more == 0
    }

    /// The -32602 error of the violations (see [`RpcError::violations`]).
    #[track_caller]
    pub fn into_error(self, method: &str) -> RpcError {
        RpcError::violations_counted(method, self.list, self.more, self.cap)
    }
}

/// The last entry of a capped list: how many violations were left out.
fn more_violations(n: usize) -> Violation {
    Violation {
        key: MORE_VIOLATIONS_KEY.to_owned(),
        pointer: String::new(),
        keyword: Cow::Borrowed("truncated"),
        message: format!("... and {n} more"),
    }
}

#[derive(Debug)]
enum Data {
    /// `{"exception": ..., "extra": {...}}`, and details in debug environments.
    Exception {
        exception: Cow<'static, str>,
        extra: Map<String, Value>,
    },
    /// Parameter violations: `data` is `{"key": ["message", ...]}`. At most
    /// [`crate::Limits::violations`], then the `"... and N more"` entry (`omitted` is N).
    Violations {
        list: Vec<Violation>,
        omitted: usize,
    },
    /// `data` exactly as given.
    Raw(Value),
}

/// A JSON-RPC error: a code, a message and data, with its cause for the logs.
///
/// `RpcError` crosses every layer; each face (JSON-RPC, MCP) renders it once, at its edge,
/// through [`RpcError::to_wire`], which decides what `data` shows in the [`Environment`] of the
/// server rendering it: in production the exception name and `extra` only; in `dev`/`test`
/// also the message, code, source location, backtrace (`trace`) and the `source()` chain.
///
/// What an error records does not depend on which server was built first: the location
/// always (it costs nothing); a backtrace when the process enables library backtraces
/// (`RUST_LIB_BACKTRACE=1`, or `RUST_BACKTRACE=1`), and for a panicking method caught by a
/// server in a debug environment always (a stack walk only a debug server pays for). The
/// server's environment alone decides whether `trace` is shown.
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
    /// Captured where the error was made when the process enables library backtraces
    /// (`RUST_LIB_BACKTRACE`/`RUST_BACKTRACE`, see [`std::backtrace::Backtrace::capture`]);
    /// for a panic caught in a debug environment, always (the panic site's when the process
    /// enables backtraces, else where it was caught). Shown as `trace` only when the
    /// environment that renders the error is a debug one.
    backtrace: Option<Box<Backtrace>>,
    /// Set when the params failed the method's input schema (MCP answers these differently).
    from_schema: bool,
    /// Where a method panicked (the panic site, not where this error was built).
    panic_site: Option<(String, u32)>,
    /// When a refused caller may try again ([`codes::RATE_LIMITED`]), in milliseconds.
    retry_after_ms: Option<u64>,
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
            backtrace: captured_backtrace(),
            from_schema: false,
            panic_site: None,
            retry_after_ms: None,
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
    /// -32403 for a caller whose identity lacks scopes `method` requires (HTTP 403; MCP adds
    /// `WWW-Authenticate: Bearer error="insufficient_scope"`); the scopes are in
    /// `data.extra.scopes`.
    #[track_caller]
    pub fn insufficient_scope(method: &str, scopes: &[&str]) -> Self {
        Self::new(
            codes::INVALID_TOKEN,
            format!(
                "Forbidden. Insufficient scope: `{method}` requires {}",
                scopes.join(" ")
            ),
        )
        .with_extra("scopes", scopes)
    }
    /// -32429: `method` was called more often than its rate limit allows; the caller may try
    /// again in `retry_after` (`data.retryAfterMs`, rounded up to a whole millisecond).
    #[track_caller]
    pub fn rate_limited(method: &str, retry_after: std::time::Duration) -> Self {
        let ms = u64::try_from(retry_after.as_micros().div_ceil(1000)).unwrap_or(u64::MAX);
        let mut e = Self::new(
            codes::RATE_LIMITED,
            format!("Too many requests: `{method}` is rate limited; retry in {ms} ms"),
        );
        e.0.retry_after_ms = Some(ms);
        e
    }

    /// When a rate-limited caller may try again ([`Self::rate_limited`]; for an error read
    /// back from the wire, its `data.retryAfterMs`).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        let ms = self.0.retry_after_ms.or_else(|| match &self.0.data {
            Data::Raw(d) if self.0.code == codes::RATE_LIMITED => d.get("retryAfterMs")?.as_u64(),
            _ => None,
        })?;
        Some(std::time::Duration::from_millis(ms))
    }

    /// -32404: data not found.
    #[track_caller]
    pub fn not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(codes::DATA_NOT_FOUND, message)
    }

    /// -32602 `Invalid Data for call method: <method>` with the violations in `data`: the
    /// first [`crate::Limits::violations`], then one entry `"... and N more"` for the rest.
    #[track_caller]
    pub fn violations(method: &str, violations: Vec<Violation>) -> Self {
        Self::violations_counted(method, violations, 0, MAX_VIOLATIONS)
    }

    /// The violations error of `list` and `more` found but not built, keeping at most `cap`.
    #[track_caller]
    fn violations_counted(method: &str, mut list: Vec<Violation>, more: usize, cap: usize) -> Self {
        let mut omitted = more;
        if list.len() > cap {
            omitted = omitted.saturating_add(list.len() - cap);
            list.truncate(cap);
        }
        if omitted > 0 {
            list.push(more_violations(omitted));
        }
        let mut e = Self::new(
            codes::INVALID_PARAMS,
            format!("Invalid Data for call method: {method}"),
        );
        e.0.data = Data::Violations { list, omitted };
        e
    }

    /// The error read back from the wire (`code`, `message`, `data`): a -32602 whose `data` is
    /// `{"key": ["message", ...]}` keeps its violations ([`Self::violation_list`]: key and
    /// message; the pointer is the key's path, the keyword unknown); anything else keeps
    /// `data` as is.
    pub(crate) fn from_wire(code: i32, message: String, data: Option<Value>) -> Self {
        let e = Self::new(code, message);
        let Some(data) = data else {
            return e;
        };
        let per_key = (code == codes::INVALID_PARAMS)
            .then(|| data.as_object())
            .flatten()
            .filter(|m| {
                !m.is_empty()
                    && m.values()
                        .all(|v| v.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
            });
        let Some(per_key) = per_key else {
            return e.with_data(data);
        };
        let list = per_key
            .iter()
            .flat_map(|(key, messages)| {
                messages
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(move |m| Violation {
                        key: key.clone(),
                        pointer: format!("/{}", key.replace('.', "/")),
                        keyword: Cow::Borrowed(""),
                        message: m.as_str().unwrap_or_default().to_owned(),
                    })
            })
            .collect();
        let mut e = e;
        e.0.data = Data::Violations { list, omitted: 0 };
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

    /// The `data` set verbatim ([`Self::with_data`]), if any.
    pub(crate) fn raw_data(&self) -> Option<&Value> {
        match &self.0.data {
            Data::Raw(v) => Some(v),
            _ => None,
        }
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
        let (site, backtrace) = match panic_hook::take_site() {
            Some(s) => (Some((s.file, s.line)), s.backtrace),
            None => (None, None),
        };
        if env.is_debug() {
            // The panic site's backtrace when the hook recorded one; else the stack where the
            // panic was caught, captured here, for debug environments only.
            e.0.backtrace = backtrace.or_else(|| Some(Box::new(Backtrace::force_capture())));
        }
        e.0.panic_site = site;
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
    /// The parameter violations, if this is a validation error: at most [`crate::Limits::violations`],
    /// and when more were found, a last entry (key [`MORE_VIOLATIONS_KEY`], keyword
    /// `truncated`) whose message is `"... and N more"`.
    pub fn violation_list(&self) -> Option<&[Violation]> {
        match &self.0.data {
            Data::Violations { list, .. } => Some(list),
            _ => None,
        }
    }

    /// How many violations were found but left out of [`RpcError::violation_list`] (the N of
    /// its last entry); 0 when none were, or when this is not a validation error.
    pub fn violations_omitted(&self) -> usize {
        match &self.0.data {
            Data::Violations { omitted, .. } => *omitted,
            _ => 0,
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
            codes::RATE_LIMITED => 429,
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
            Data::Violations { list, .. } => {
                let mut map = Map::new();
                for v in list {
                    if let Value::Array(a) = map
                        .entry(v.key.clone())
                        .or_insert_with(|| Value::Array(Vec::new()))
                    {
                        a.push(Value::String(v.message.clone()));
                    }
                }
                Value::Object(map)
            }
            Data::Exception { exception, extra } => {
                let mut d = Map::new();
                d.insert("exception".into(), Value::String(exception.to_string()));
                if let Some(ms) = self.0.retry_after_ms {
                    d.insert("retryAfterMs".into(), ms.into());
                }
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

/// The backtrace of an error being made: captured only when the process enables library
/// backtraces (`RUST_LIB_BACKTRACE=1`, or `RUST_BACKTRACE=1` without `RUST_LIB_BACKTRACE=0`).
/// Otherwise [`Backtrace::capture`] returns at once (it reads the variables once per process),
/// so errors made on a hot path cost no stack walk.
fn captured_backtrace() -> Option<Box<Backtrace>> {
    let bt = Backtrace::capture();
    (bt.status() == BacktraceStatus::Captured).then(|| Box::new(bt))
}

/// Records where panics happen, so a panicking method's error names its panic site (and, in
/// debug environments, carries its backtrace).
pub(crate) mod panic_hook {
    use std::backtrace::Backtrace;
    use std::cell::RefCell;
    use std::sync::Once;

    /// Where the last panic of a thread happened.
    pub struct Site {
        pub file: String,
        pub line: u32,
        /// Its stack, when the process enables library backtraces (unresolved: symbols are
        /// looked up only if it is rendered).
        pub backtrace: Option<Box<Backtrace>>,
    }

    thread_local! {
        static SITE: RefCell<Option<Site>> = const { RefCell::new(None) };
    }

    /// Installs the hook once, keeping the previous hook (which still prints the panic).
    ///
    /// The hook records the panic's location, and its stack when the process enables library
    /// backtraces (which server catches the panic is not known yet: one in a debug
    /// environment captures the stack where it catches the panic otherwise).
    pub fn install() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if let Some(l) = info.location() {
                    let site = Site {
                        file: l.file().to_owned(),
                        line: l.line(),
                        backtrace: super::captured_backtrace(),
                    };
                    SITE.with(|s| *s.borrow_mut() = Some(site));
                }
                previous(info);
            }));
        });
    }

    /// The site of the last panic on this thread (`catch_unwind` runs on the panicking thread).
    pub fn take_site() -> Option<Site> {
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

/// `anyhow::Error` (the `anyhow` feature): -32603 with the error's `Display` text, and its
/// context chain as the sources (`data.previous` in `dev` and `test`), as for
/// `Box<dyn Error + Send + Sync>`. A method can return `anyhow::Result<T>`.
#[cfg(feature = "anyhow")]
impl From<anyhow::Error> for RpcError {
    #[track_caller]
    fn from(e: anyhow::Error) -> Self {
        let boxed: Box<dyn std::error::Error + Send + Sync> = e.into();
        Self::from(boxed)
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

    fn v(k: &str) -> Violation {
        Violation {
            key: k.into(),
            pointer: format!("/{k}"),
            keyword: "x".into(),
            message: format!("bad {k}"),
        }
    }

    #[test]
    fn violations_past_the_cap_are_one_counted_entry() {
        let list: Vec<Violation> = (0..25).map(|i| v(&format!("k{i}"))).collect();
        let e = RpcError::violations("M.x", list);
        let kept = e.violation_list().unwrap();
        assert_eq!(kept.len(), MAX_VIOLATIONS + 1);
        assert_eq!(kept[MAX_VIOLATIONS].message, "... and 5 more");
        assert_eq!(e.violations_omitted(), 5);
        let data = &e.to_wire(&Environment::PROD)["data"];
        assert_eq!(data["..."], json!(["... and 5 more"]));
        assert_eq!(data["k19"], json!(["bad k19"]));
        assert!(data.get("k20").is_none());
        // Exactly the cap: no count entry.
        let e = RpcError::violations("M.x", (0..20).map(|i| v(&format!("k{i}"))).collect());
        assert_eq!(e.violation_list().unwrap().len(), MAX_VIOLATIONS);
        assert_eq!(e.violations_omitted(), 0);
    }

    /// The violations past the cap are counted, not built: a million cost a count.
    #[test]
    fn the_sink_builds_only_what_it_keeps() {
        let mut built = 0;
        let mut sink = ViolationSink::new();
        sink.push(v("first"));
        sink.extend_with(1_000_000, |i| {
            built += 1;
            v(&i.to_string())
        });
        for _ in 0..10 {
            sink.push_with(|| unreachable!("the sink is full"));
        }
        assert_eq!(built, MAX_VIOLATIONS - 1);
        assert_eq!(sink.total(), 1_000_011);
        let e = sink.into_error("M.x");
        let list = e.violation_list().unwrap();
        assert_eq!(list.len(), MAX_VIOLATIONS + 1);
        assert_eq!(list[MAX_VIOLATIONS].message, "... and 999991 more");
        assert_eq!(e.violations_omitted(), 999_991);
        assert!(ViolationSink::with_cap(0).is_empty());
    }

    /// Whether `trace` is shown is the rendering server's environment's decision alone: a
    /// panic caught by a debug server always carries a stack, shown in debug and hidden in
    /// production, whatever server was built first (and whatever `RUST_BACKTRACE` says).
    #[test]
    fn trace_is_decided_by_the_rendering_environment() {
        panic_hook::install();
        let caught = std::panic::catch_unwind(|| panic!("boom")).unwrap_err();
        let e = RpcError::from_panic(caught, &Environment::DEV);
        let dev = e.to_wire(&Environment::DEV);
        assert!(
            dev["data"]["trace"].as_str().is_some_and(|t| !t.is_empty()),
            "{dev}"
        );
        assert!(
            dev["data"]["file"]
                .as_str()
                .is_some_and(|f| f.ends_with("error.rs"))
        );
        let prod = e.to_wire(&Environment::PROD);
        assert_eq!(prod["data"], json!({"exception": "panic"}));
        // An error made anywhere is never shown with a trace in production.
        let e = RpcError::runtime("x");
        assert!(e.to_wire(&Environment::PROD)["data"].get("trace").is_none());
        assert_eq!(e.to_wire(&Environment::DEV)["data"]["file"], json!(file!()));
    }
}
