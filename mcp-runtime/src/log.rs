//! Logging to stderr in one line (feature `fmt`): [`init`]; and the plain log fields it uses,
//! [`LogFields`], for a `tracing-subscriber` `fmt` layer of one's own.
//!
//! Every call runs in an `rpc.call` span whose dozen fields a formatting subscriber writes
//! into a string when the span opens and when it ends. `fmt`'s default field formatter
//! (`DefaultFields`) styles every name and `=` through its ANSI painter even when colours are
//! off, and writes each field through `format_args!`: about 700 instructions a field, a
//! tenth of a small call over HTTP. [`LogFields`] writes the same text, `name=value` with
//! strings quoted and escaped as `{:?}` does, with plain writes and no styling.
//!
//! ```
//! tracing_subscriber::fmt()
//!     .fmt_fields(mcp_runtime::log::LogFields)
//!     .with_ansi(false)
//!     .with_env_filter("info")
//!     .try_init()
//!     .ok();
//! ```

use std::cell::RefCell;
use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::Writer;

/// Installs a `tracing` subscriber writing the server's logs to stderr (stdout is the MCP
/// channel on stdio), one line an event, with [`LogFields`]: the levels `RUST_LOG` names
/// (`RUST_LOG=debug`, `RUST_LOG=mcp_runtime=debug,info`), `info` when it is unset or invalid;
/// colours only when stderr is a terminal. Returns `false`, changing nothing, when a
/// subscriber is already installed.
///
/// ```
/// // In `main`, before building the server (`mcp-runtime` with `features = ["fmt"]`).
/// mcp_runtime::log::init();
/// ```
pub fn init() -> bool {
    Logging::new().init()
}

/// How the server logs, installed with [`Logging::init`]: to stderr, one line an event, at the
/// levels `RUST_LOG` names (`info` when it is unset or invalid); plain text ([`LogFields`])
/// or JSON lines ([`Logging::json`]); with the `otel` feature, spans exported through an
/// [`Otel`](crate::otel::Otel) too, and each JSON line carrying the trace and span ids of
/// the span it was logged in, so that a log search finds the trace and a trace its logs.
///
/// ```
/// // JSON lines when the environment says so (`LOG_FORMAT=json`).
/// mcp_runtime::log::Logging::from_env().init();
/// ```
#[derive(Debug, Clone, Default)]
pub struct Logging {
    json: bool,
    #[cfg(feature = "otel")]
    otel: Option<crate::otel::Otel>,
}

impl Logging {
    /// Plain text lines.
    pub fn new() -> Self {
        Self::default()
    }

    /// JSON lines when `LOG_FORMAT` is `json`, else plain text.
    pub fn from_env() -> Self {
        let json = std::env::var("LOG_FORMAT").is_ok_and(|f| f.trim().eq_ignore_ascii_case("json"));
        Self::new().json(json)
    }

    /// JSON lines (`true`) or plain text.
    pub fn json(mut self, on: bool) -> Self {
        self.json = on;
        self
    }

    /// Exports the spans through `otel` as well (its [`layer`](crate::otel::Otel::layer)).
    #[cfg(feature = "otel")]
    pub fn otel(mut self, otel: &crate::otel::Otel) -> Self {
        self.otel = Some(otel.clone());
        self
    }

    /// Installs the subscriber; `false`, changing nothing, when one is installed already.
    pub fn init(self) -> bool {
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        // Colours only on a terminal: escape codes in a log file are noise, and writing them
        // costs a good part of what logging a call costs.
        let ansi = !self.json && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let text = (!self.json).then(|| {
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .fmt_fields(LogFields)
                .with_ansi(ansi)
        });
        let json = self.json.then(|| {
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .fmt_fields(LogFields)
                .with_ansi(false)
                .event_format(JsonLines)
        });
        let registry = tracing_subscriber::registry()
            .with(filter)
            .with(text)
            .with(json);
        #[cfg(feature = "otel")]
        let registry = registry.with(self.otel.as_ref().and_then(crate::otel::Otel::layer));
        registry.try_init().is_ok()
    }
}

/// JSON lines: `{"timestamp":…,"level":…,"target":…,"message":…, the event's fields,
/// "spans":[the names of the spans it is in, outermost first], "trace_id":…,"span_id":…}`,
/// the ids with the `otel` feature when the span is exported. Written here: the
/// `tracing-subscriber` JSON formatter knows nothing of OpenTelemetry's ids.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonLines;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for JsonLines
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> fmt::Result {
        use serde_json::{Map, Value};
        let meta = event.metadata();
        let mut line = Map::new();
        line.insert(
            "timestamp".into(),
            humantime::format_rfc3339_micros(std::time::SystemTime::now())
                .to_string()
                .into(),
        );
        line.insert("level".into(), meta.level().as_str().into());
        line.insert("target".into(), meta.target().into());
        event.record(&mut JsonVisitor(&mut line));
        if let Some(scope) = ctx.event_scope() {
            let spans: Vec<Value> = scope.from_root().map(|s| s.name().into()).collect();
            line.insert("spans".into(), spans.into());
        }
        #[cfg(feature = "otel")]
        {
            use opentelemetry::trace::TraceContextExt as _;
            use tracing_opentelemetry::OpenTelemetrySpanExt as _;
            let cx = tracing::Span::current().context();
            let span = cx.span();
            let sc = span.span_context();
            if sc.is_valid() {
                line.insert("trace_id".into(), sc.trace_id().to_string().into());
                line.insert("span_id".into(), sc.span_id().to_string().into());
            }
        }
        writeln!(writer, "{}", Value::Object(line))
    }
}

/// An event's fields as JSON members (`message` among them); `log.*` left out.
struct JsonVisitor<'a>(&'a mut serde_json::Map<String, serde_json::Value>);

impl JsonVisitor<'_> {
    fn put(&mut self, field: &Field, v: serde_json::Value) {
        let name = field.name();
        if !name.starts_with("log.") {
            self.0
                .insert(name.strip_prefix("r#").unwrap_or(name).to_owned(), v);
        }
    }
}

impl Visit for JsonVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, value.into());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, format!("{value:?}").into());
    }
}

/// Formats fields as `name=value`, separated by spaces, without ANSI styling; `message` is
/// written bare and `log.*` fields (from the `log` crate bridge) are left out, as
/// `tracing-subscriber`'s `DefaultFields` does. Use it with `.fmt_fields(LogFields)`; with
/// colours on (`.with_ansi(true)`), the level and the span names stay coloured and the fields
/// are written plain.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogFields;

thread_local! {
    /// Where a thread writes a span's fields before they reach the subscriber's string in
    /// one write: that string then grows once, not once per doubling, and the text needs no
    /// UTF-8 check (it is a `String` throughout).
    static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
}

/// A scratch string that grew past this (a huge field) is let go rather than kept.
const SCRATCH_KEPT: usize = 4096;

impl<'writer> FormatFields<'writer> for LogFields {
    fn format_fields<R: RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        let write = |out: &mut String| {
            let mut v = Visitor {
                out,
                first: true,
                result: Ok(()),
            };
            fields.record(&mut v);
            v.result
        };
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut out) => {
                out.clear();
                let written = write(&mut out).and_then(|()| writer.write_str(&out));
                if out.capacity() > SCRATCH_KEPT {
                    *out = String::new();
                }
                written
            }
            // Formatting again while formatting (a field's `Debug` logged): its own string.
            Err(_) => {
                let mut out = String::new();
                write(&mut out).and_then(|()| writer.write_str(&out))
            }
        })
    }

    /// Fields recorded later (`span.record`) go straight onto the span's string: it is a
    /// `String` already, so no scratch copy is needed.
    fn add_fields(
        &self,
        current: &'writer mut tracing_subscriber::fmt::FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> fmt::Result {
        let mut v = Visitor {
            first: current.fields.is_empty(),
            out: &mut current.fields,
            result: Ok(()),
        };
        fields.record(&mut v);
        v.result
    }
}

struct Visitor<'a> {
    out: &'a mut String,
    first: bool,
    /// A field's `Debug` may fail; writing to the string cannot.
    result: fmt::Result,
}

impl Visitor<'_> {
    /// Writes the separator and `name=`; false for a field that is left out.
    fn name(&mut self, field: &Field) -> bool {
        let name = field.name();
        if name.starts_with("log.") {
            return false;
        }
        if !self.first {
            self.out.push(' ');
        }
        self.first = false;
        if name != "message" {
            self.out.push_str(name.strip_prefix("r#").unwrap_or(name));
            self.out.push('=');
        }
        true
    }

    /// A number in decimal, as `{}` writes it, without the formatting machinery.
    fn number(&mut self, negative: bool, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if negative {
            self.out.push('-');
        }
        digits[i..]
            .iter()
            .for_each(|&d| self.out.push(char::from(d)));
    }
}

/// Whether `{:?}` writes `s` as itself between quotes: printable ASCII without `"` or `\`.
fn plain(s: &str) -> bool {
    s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
}

impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !self.name(field) {
            return;
        }
        if field.name() == "message" {
            self.out.push_str(value);
        } else if plain(value) {
            // What `{:?}` writes, without its per-character escaping.
            self.out.push('"');
            self.out.push_str(value);
            self.out.push('"');
        } else {
            let _ = write!(self.out, "{value:?}");
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if self.name(field) {
            self.number(false, value);
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if self.name(field) {
            self.number(value < 0, value.unsigned_abs());
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        if self.name(field) {
            self.out.push_str(if value { "true" } else { "false" });
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.name(field) && self.result.is_ok() {
            self.result = write!(self.out, "{value:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::ErrorKind::Other)?
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What a subscriber writes for one event in a span with a recorded field.
    fn logged(plain_fields: bool) -> String {
        let buf = Buf::default();
        let b = buf.clone();
        let builder = tracing_subscriber::fmt()
            .with_writer(move || b.clone())
            .with_ansi(false)
            .without_time()
            .with_target(false);
        let run = || {
            let span = tracing::info_span!(
                "rpc.call",
                rpc.method = "Catalog.ping",
                r#type = "x",
                n = 7u64,
                neg = -3i64,
                min = i64::MIN,
                max = u64::MAX,
                zero = 0u64,
                ok = true,
                f = 1.5f64,
                face = ?Some(1),
                quote = "a \"b\"\n\u{7}é",
                outcome = tracing::field::Empty,
            );
            let _e = span.enter();
            span.record("outcome", "ok");
            tracing::info!(code = -32603, text = "x y", "call {} done", 1);
            // Past the stack buffer: a value longer than it, then more fields.
            let long = "y".repeat(600);
            tracing::info!(
                a = "z".repeat(400).as_str(),
                long = long.as_str(),
                b = 2,
                "long"
            );
        };
        if plain_fields {
            tracing::subscriber::with_default(builder.fmt_fields(LogFields).finish(), run);
        } else {
            tracing::subscriber::with_default(builder.finish(), run);
        }
        let out = buf.0.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn writes_what_the_default_fields_write() {
        let ours = logged(true);
        assert_eq!(ours, logged(false));
        let (short, long) = ours.split_once('\n').unwrap_or_default();
        assert!(
            long.ends_with(&format!(
                "long a=\"{}\" long=\"{}\" b=2\n",
                "z".repeat(400),
                "y".repeat(600)
            )),
            "{long}"
        );
        assert_eq!(
            format!("{short}\n"),
            " INFO rpc.call{rpc.method=\"Catalog.ping\" type=\"x\" n=7 neg=-3 min=-9223372036854775808 max=18446744073709551615 zero=0 ok=true f=1.5 \
             face=Some(1) quote=\"a \\\"b\\\"\\n\\u{7}é\" outcome=\"ok\"}: call 1 done \
             code=-32603 text=\"x y\"\n"
        );
    }

    /// Fields written while the thread's scratch string is in use (formatting within
    /// formatting) are written through a string of their own, the same.
    #[test]
    fn fields_are_written_the_same_while_the_scratch_string_is_in_use() {
        let buf = Buf::default();
        let b = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || b.clone())
            .with_ansi(false)
            .without_time()
            .with_target(false)
            .fmt_fields(LogFields)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            let log = || {
                let span = tracing::info_span!("outer", a = "x", n = 2u64);
                let _e = span.enter();
                tracing::info!(m = "y", "done");
            };
            log();
            SCRATCH.with(|scratch| {
                let _held = scratch.borrow_mut();
                log();
            });
        });
        let out = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let line = " INFO outer{a=\"x\" n=2}: done m=\"y\"\n";
        assert_eq!(out, line.repeat(2));
    }
}
