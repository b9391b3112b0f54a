//! `Accept-Language` negotiation (RFC 9110 q-values, RFC 4647 lookup).
//!
//! Linear in the header and bounded: at most [`MAX_LANGUAGE_RANGES`] ranges are read (the rest
//! of the header is never looked at), each is kept as a slice of the header (no allocation),
//! and the work after reading is bounded by that count and the languages available.

/// How many language ranges of an `Accept-Language` header are read: 32. Ranges after
/// the 32nd are ignored, as if the client had not sent them (empty list elements, `,,`, are
/// skipped and do not count).
pub const MAX_LANGUAGE_RANGES: usize = 32;

/// The longest language range considered, in bytes: 64 (a longer one is skipped). RFC 5646
/// tags of real languages are far shorter; the bound keeps the subtag fallback cheap.
const MAX_TAG_BYTES: usize = 64;

/// Picks the best of `available` (lowercase language tags such as `en`, `uk`) for an
/// `Accept-Language` header; `None` when nothing acceptable matches (use the default).
///
/// `uk-UA` falls back to `uk`; `*` matches the default; `q=0` excludes a language. Only the
/// first [`MAX_LANGUAGE_RANGES`] ranges are read.
///
/// ```
/// use mcp_runtime::i18n::negotiate;
/// let langs = ["en", "uk"];
/// assert_eq!(negotiate(Some("uk-UA,en;q=0.5"), &langs, "en"), Some("uk"));
/// assert_eq!(negotiate(Some("de, *;q=0.1"), &langs, "en"), Some("en"));
/// assert_eq!(negotiate(Some("fr"), &langs, "en"), None);
/// ```
pub fn negotiate<'a>(
    header: Option<&str>,
    available: &[&'a str],
    default: &'a str,
) -> Option<&'a str> {
    negotiate_in(header, available, default, MAX_LANGUAGE_RANGES).map(|i| match i {
        Some(i) => available[i],
        None => default,
    })
}

/// [`negotiate`] reading at most `max_ranges` ranges (at most [`MAX_LANGUAGE_RANGES`]: a
/// larger bound is lowered to it).
pub fn negotiate_limited<'a>(
    header: Option<&str>,
    available: &[&'a str],
    default: &'a str,
    max_ranges: usize,
) -> Option<&'a str> {
    negotiate_in(header, available, default, max_ranges).map(|i| match i {
        Some(i) => available[i],
        None => default,
    })
}

/// One range of the header: a slice of it and its weight (an empty tag: a skipped range).
#[derive(Clone, Copy)]
struct Range<'h> {
    tag: &'h str,
    q: f32,
}

/// The negotiation proper, over any list of language names: `Some(Some(i))` picks
/// `available[i]`, `Some(None)` the default, `None` nothing.
pub(crate) fn negotiate_in<S: AsRef<str>>(
    header: Option<&str>,
    available: &[S],
    default: &str,
    max_ranges: usize,
) -> Option<Option<usize>> {
    let header = header?;
    let max_ranges = max_ranges.clamp(1, MAX_LANGUAGE_RANGES);
    // On the stack: the ranges read, in the client's order.
    let mut ranges = [Range { tag: "", q: 0.0 }; MAX_LANGUAGE_RANGES];
    let mut n = 0;
    for part in header.split(',') {
        if n == max_ranges {
            break; // the rest of the header is not read
        }
        let mut pieces = part.split(';');
        let tag = pieces.next().unwrap_or("").trim();
        if tag.is_empty() {
            continue; // an empty list element is not a range
        }
        n += 1;
        if tag.len() > MAX_TAG_BYTES {
            continue;
        }
        let mut q = 1.0f32;
        for p in pieces {
            let p = p.trim();
            if let Some(v) = p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")) {
                q = v
                    .trim()
                    .parse::<f32>()
                    .ok()
                    .filter(|q| (0.0..=1.0).contains(q))
                    .unwrap_or(0.0);
            }
        }
        ranges[n - 1] = Range { tag, q };
    }
    let ranges = &ranges[..n];
    let excluded = |lang: &str| {
        ranges
            .iter()
            .any(|r| r.q == 0.0 && !r.tag.is_empty() && r.tag.eq_ignore_ascii_case(lang))
    };
    // The highest q wins; equal q keeps the client's order (the first one found stays).
    let mut best: Option<(f32, Option<usize>)> = None;
    for r in ranges {
        if r.q == 0.0 || r.tag.is_empty() || best.is_some_and(|(q, _)| q >= r.q) {
            continue;
        }
        let found = if r.tag == "*" {
            if excluded(default) {
                available
                    .iter()
                    .position(|l| !excluded(l.as_ref()))
                    .map(Some)
            } else {
                Some(None)
            }
        } else {
            lookup(r.tag, available, &excluded).map(Some)
        };
        if let Some(found) = found {
            best = Some((r.q, found));
        }
    }
    best.map(|(_, found)| found)
}

/// Whether `value` is an `Accept-Language` field value as RFC 9110 §12.5.4 writes it: a list
/// of language ranges (`*` or `1*8ALPHA *("-" 1*8alphanum)`), each with an optional weight
/// (`;q=` and a qvalue of at most three decimals), list elements separated by commas with
/// optional whitespace (empty elements allowed, at least one range). The SEP-2792 `_meta`
/// carrier is checked with it before any negotiation: a malformed one counts as absent.
///
/// Linear in the value, allocation-free.
pub(crate) fn well_formed(value: &str) -> bool {
    let mut ranges = 0usize;
    for element in value.split(',') {
        let element = element.trim_matches([' ', '\t']);
        if element.is_empty() {
            continue;
        }
        let (range, weight) = match element.split_once(';') {
            Some((r, w)) => (r.trim_end_matches([' ', '\t']), Some(w)),
            None => (element, None),
        };
        if !language_range(range) || !weight.is_none_or(weight_ok) {
            return false;
        }
        ranges += 1;
    }
    ranges > 0
}

/// `language-range` of RFC 4647 §2.1.
fn language_range(r: &str) -> bool {
    if r == "*" {
        return true;
    }
    let mut subtags = r.split('-');
    let first = subtags.next().unwrap_or("");
    let sized = |s: &str| (1..=8).contains(&s.len());
    sized(first)
        && first.bytes().all(|b| b.is_ascii_alphabetic())
        && subtags.all(|s| sized(s) && s.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// What follows a range's `;`: `OWS "q=" qvalue` (RFC 9110 §12.4.2; `q` in either case).
fn weight_ok(w: &str) -> bool {
    let w = w.trim_matches([' ', '\t']);
    let Some(q) = w.strip_prefix("q=").or_else(|| w.strip_prefix("Q=")) else {
        return false;
    };
    let (whole, decimals) = match q.split_once('.') {
        Some((w, d)) => (w, Some(d)),
        None => (q, None),
    };
    let digits = decimals.unwrap_or("");
    digits.len() <= 3
        && digits.bytes().all(|b| b.is_ascii_digit())
        && match whole {
            "0" => true,
            "1" => digits.bytes().all(|b| b == b'0'),
            _ => false,
        }
}

/// RFC 4647 lookup: drop subtags from the end until one is available (and not excluded).
fn lookup<S: AsRef<str>>(
    tag: &str,
    available: &[S],
    excluded: &impl Fn(&str) -> bool,
) -> Option<usize> {
    let mut t = tag;
    loop {
        if let Some(i) = available
            .iter()
            .position(|l| l.as_ref().eq_ignore_ascii_case(t))
            && !excluded(available[i].as_ref())
        {
            return Some(i);
        }
        match t.rfind('-') {
            Some(i) => t = &t[..i],
            None => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_LANGUAGE_RANGES, negotiate, negotiate_limited, well_formed};

    const L: [&str; 2] = ["en", "uk"];

    #[test]
    fn q_values_order_and_exclusion() {
        assert_eq!(negotiate(Some("en;q=0.3, uk;q=0.9"), &L, "en"), Some("uk"));
        assert_eq!(negotiate(Some("uk;q=0, en"), &L, "en"), Some("en"));
        assert_eq!(negotiate(Some("uk;q=0"), &L, "en"), None);
        assert_eq!(negotiate(Some("UK-ua"), &L, "en"), Some("uk"));
        assert_eq!(negotiate(Some("zh-Hant-TW, uk"), &L, "en"), Some("uk"));
        assert_eq!(negotiate(Some("en;q=0.5, uk;q=0.5"), &L, "en"), Some("en"));
        assert_eq!(negotiate(Some("uk;q=0.5, en;q=0.5"), &L, "en"), Some("uk"));
        assert_eq!(
            negotiate(Some("fr, uk;q=0.2, en;q=0.4"), &L, "en"),
            Some("en")
        );
    }

    #[test]
    fn wildcard_missing_and_garbage() {
        assert_eq!(negotiate(Some("*"), &L, "en"), Some("en"));
        assert_eq!(negotiate(Some("en;q=0, *"), &L, "en"), Some("uk"));
        assert_eq!(negotiate(None, &L, "en"), None);
        assert_eq!(negotiate(Some(""), &L, "en"), None);
        assert_eq!(negotiate(Some(";;;,,q=x"), &L, "en"), None);
        assert_eq!(
            negotiate(Some("uk;q=banana, en;q=0.1"), &L, "en"),
            Some("en")
        );
        assert_eq!(
            negotiate(Some(&format!("{}, uk", "a".repeat(65))), &L, "en"),
            Some("uk")
        );
    }

    /// A 260 KB header (the one that took 2.3 s when every range was read and compared with
    /// every other): only the first 32 ranges count, so `uk` at the end is never seen.
    #[test]
    fn the_accept_language_grammar_is_checked_as_rfc_9110_writes_it() {
        for ok in [
            "en",
            "en-US",
            "en-US,en;q=0.9,fr;q=0.5",
            "*",
            "uk-UA , en ;q=0.5",
            "de;Q=1.000, ,fr;q=0",
            "zh-Hant-TW;q=0.",
            "x-klingon",
        ] {
            assert!(well_formed(ok), "{ok}");
        }
        for bad in [
            "",
            " , ",
            "en_US",
            "en;q=1.5",
            "en;q=0.1234",
            "en;q=",
            "en;level=1",
            "toolongtag",
            "en-",
            "-en",
            "1en",
            "en-toolongsub",
            "en;q=0.5;q=0.4",
            "ü",
        ] {
            assert!(!well_formed(bad), "{bad}");
        }
    }

    #[test]
    fn only_the_first_ranges_are_read() {
        let filler = "xx-yy;q=0.9,".repeat(22_000);
        assert!(filler.len() > 260_000);
        let header = format!("{filler}uk");
        assert_eq!(negotiate(Some(&header), &L, "en"), None);

        // The 32nd range is read, the 33rd is not; empty elements do not count.
        let before = "fr,".repeat(MAX_LANGUAGE_RANGES - 1);
        assert_eq!(
            negotiate(Some(&format!("{before},,,uk;q=0.1")), &L, "en"),
            Some("uk")
        );
        assert_eq!(
            negotiate(Some(&format!("{before}de,uk;q=0.1")), &L, "en"),
            None
        );
        // Exclusions past the bound are ignored too.
        let header = format!("{}, uk, {filler}uk;q=0", "fr,".repeat(20));
        assert_eq!(negotiate(Some(&header), &L, "en"), Some("uk"));
        // A smaller bound; a larger one is lowered to the constant.
        assert_eq!(negotiate_limited(Some("fr, uk"), &L, "en", 1), None);
        assert_eq!(negotiate_limited(Some("fr, uk"), &L, "en", 2), Some("uk"));
        assert_eq!(
            negotiate_limited(Some(&format!("{before}de,uk")), &L, "en", usize::MAX),
            None
        );
    }
}
