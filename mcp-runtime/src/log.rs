//! Plain log fields for `tracing-subscriber`'s `fmt` layer (feature `fmt`).
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

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::Writer;

/// Formats fields as `name=value`, separated by spaces, without ANSI styling; `message` is
/// written bare and `log.*` fields (from the `log` crate bridge) are left out, as
/// `tracing-subscriber`'s `DefaultFields` does. Use it with `.fmt_fields(LogFields)`; with
/// colours on (`.with_ansi(true)`), the level and the span names stay coloured and the fields
/// are written plain.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogFields;

impl<'writer> FormatFields<'writer> for LogFields {
    fn format_fields<R: RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        let mut v = Visitor {
            w: Buffered {
                out: &mut writer,
                buf: [0; BUF],
                len: 0,
            },
            first: true,
            result: Ok(()),
        };
        fields.record(&mut v);
        v.result.and_then(|()| v.w.flush())
    }
}

/// Bytes gathered on the stack before they reach the subscriber's string: a span's fields
/// (about 250 bytes for `rpc.call`) then grow that string once, not once per doubling.
const BUF: usize = 512;

/// A stack buffer in front of the writer; only whole `&str`s go in, so it holds UTF-8.
struct Buffered<'a, 'w> {
    out: &'a mut Writer<'w>,
    buf: [u8; BUF],
    len: usize,
}

impl Buffered<'_, '_> {
    /// One ASCII byte (a separator or a quote): most writes are one, and need no copy call.
    fn byte(&mut self, b: u8) -> fmt::Result {
        debug_assert!(b.is_ascii());
        if self.len == BUF {
            self.flush()?;
        }
        self.buf[self.len] = b;
        self.len += 1;
        Ok(())
    }

    /// A number in decimal, as `{}` writes it, without the formatting machinery.
    fn number(&mut self, negative: bool, mut n: u64) -> fmt::Result {
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
            self.byte(b'-')?;
        }
        digits[i..].iter().try_for_each(|&d| self.byte(d))
    }

    fn flush(&mut self) -> fmt::Result {
        let pending = std::str::from_utf8(&self.buf[..self.len]).map_err(|_| fmt::Error)?;
        self.len = 0;
        self.out.write_str(pending)
    }
}

impl fmt::Write for Buffered<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.len + s.len() > BUF {
            self.flush()?;
            if s.len() > BUF {
                return self.out.write_str(s);
            }
        }
        self.buf[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
        self.len += s.len();
        Ok(())
    }
}

struct Visitor<'a, 'w> {
    w: Buffered<'a, 'w>,
    first: bool,
    result: fmt::Result,
}

impl Visitor<'_, '_> {
    /// Writes the separator and `name=`; false for a field that is left out.
    fn name(&mut self, field: &Field) -> bool {
        let name = field.name();
        if self.result.is_err() || name.starts_with("log.") {
            return false;
        }
        if !self.first {
            self.result = self.w.byte(b' ');
        }
        self.first = false;
        if name != "message" {
            let name = name.strip_prefix("r#").unwrap_or(name);
            self.result = self
                .result
                .and_then(|()| self.w.write_str(name))
                .and_then(|()| self.w.byte(b'='));
        }
        true
    }
}

/// Whether `{:?}` writes `s` as itself between quotes: printable ASCII without `"` or `\`.
fn plain(s: &str) -> bool {
    s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
}

impl Visit for Visitor<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !self.name(field) || self.result.is_err() {
            return;
        }
        self.result = if field.name() == "message" {
            self.w.write_str(value)
        } else if plain(value) {
            // What `{:?}` writes, without its per-character escaping.
            self.w
                .byte(b'"')
                .and_then(|()| self.w.write_str(value))
                .and_then(|()| self.w.byte(b'"'))
        } else {
            write!(self.w, "{value:?}")
        };
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if self.name(field) && self.result.is_ok() {
            self.result = self.w.number(false, value);
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if self.name(field) && self.result.is_ok() {
            self.result = self.w.number(value < 0, value.unsigned_abs());
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        if self.name(field) && self.result.is_ok() {
            self.result = self.w.write_str(if value { "true" } else { "false" });
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.name(field) && self.result.is_ok() {
            self.result = write!(self.w, "{value:?}");
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
}
