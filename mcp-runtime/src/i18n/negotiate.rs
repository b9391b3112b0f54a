//! `Accept-Language` negotiation (RFC 9110 q-values, RFC 4647 lookup).

/// Picks the best of `available` (lowercase language tags such as `en`, `uk`) for an
/// `Accept-Language` header; `None` when nothing acceptable matches (use the default).
///
/// `uk-UA` falls back to `uk`; `*` matches the default; `q=0` excludes a language.
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
    let header = header?;
    let mut ranges: Vec<(String, f32, usize)> = Vec::new();
    for (i, part) in header.split(',').enumerate() {
        let mut pieces = part.split(';');
        let tag = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
        if tag.is_empty() || tag.len() > 64 {
            continue;
        }
        let mut q = 1.0f32;
        for p in pieces {
            if let Some(v) = p
                .trim()
                .strip_prefix("q=")
                .or_else(|| p.trim().strip_prefix("Q="))
            {
                q = v
                    .trim()
                    .parse::<f32>()
                    .ok()
                    .filter(|q| (0.0..=1.0).contains(q))
                    .unwrap_or(0.0);
            }
        }
        ranges.push((tag, q, i));
    }
    // Highest q first; equal q keeps the client's order.
    ranges.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.2.cmp(&b.2))
    });
    let excluded: Vec<&str> = ranges
        .iter()
        .filter(|r| r.1 == 0.0)
        .map(|r| r.0.as_str())
        .collect();
    let allowed = |lang: &str| !excluded.contains(&lang);
    for (tag, q, _) in &ranges {
        if *q == 0.0 {
            continue;
        }
        if tag == "*" {
            if allowed(default) {
                return Some(default);
            }
            return available.iter().copied().find(|l| allowed(l));
        }
        // RFC 4647 lookup: drop subtags from the end until one is available.
        let mut t = tag.as_str();
        loop {
            if let Some(l) = available.iter().copied().find(|l| *l == t)
                && allowed(l)
            {
                return Some(l);
            }
            match t.rfind('-') {
                Some(i) => t = &t[..i],
                None => break,
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::negotiate;

    const L: [&str; 2] = ["en", "uk"];

    #[test]
    fn q_values_order_and_exclusion() {
        assert_eq!(negotiate(Some("en;q=0.3, uk;q=0.9"), &L, "en"), Some("uk"));
        assert_eq!(negotiate(Some("uk;q=0, en"), &L, "en"), Some("en"));
        assert_eq!(negotiate(Some("uk;q=0"), &L, "en"), None);
        assert_eq!(negotiate(Some("UK-ua"), &L, "en"), Some("uk"));
        assert_eq!(negotiate(Some("zh-Hant-TW, uk"), &L, "en"), Some("uk"));
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
    }
}
