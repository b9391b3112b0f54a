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
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colours only on a terminal: escape codes in a log file are noise, and writing them
    // costs a good part of what logging a call costs.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .fmt_fields(LogFields)
        .with_ansi(ansi)
        .with_env_filter(filter)
        .try_init()
        .is_ok()
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
