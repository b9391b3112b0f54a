//! RFC 6570 URI templates, as resources use them: level 1 (`{var}`) and reserved expansion
//! (`{+var}`), matched against a requested URI to bind the function's parameters.
//!
//! Written by hand: the crates that exist expand templates but do not match URIs against
//! them, which is all a server needs. Matching is linear in the URI's length.

/// One part of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// A variable; `reserved` (`{+var}`) may span `/`.
    Var {
        name: String,
        reserved: bool,
    },
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

/// A template the parser refuses (the macro refuses the same at compile time).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template `{template}`: {reason}")]
pub struct TemplateError {
    /// The template.
    pub template: String,
    /// What is wrong.
    pub reason: &'static str,
}

impl UriTemplate {
    /// Parses a template.
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let err = |reason| TemplateError {
            template: template.to_owned(),
            reason,
        };
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}').ok_or_else(|| err("unclosed `{`"))?;
                    let expr = &rest[1..end];
                    let (reserved, name) = match expr.strip_prefix('+') {
                        Some(n) => (true, n),
                        None => (false, expr),
                    };
                    if name.is_empty()
                        || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    {
                        return Err(err(
                            "a variable is `{name}` or `{+name}`, name [A-Za-z0-9_]+",
                        ));
                    }
                    if matches!(parts.last(), Some(Part::Var { .. })) {
                        return Err(err("two variables need a literal between them"));
                    }
                    parts.push(Part::Var {
                        name: name.to_owned(),
                        reserved,
                    });
                    rest = &rest[end + 1..];
                }
                found => {
                    let end = found.unwrap_or(rest.len());
                    if rest[..end].contains('}') {
                        return Err(err("unopened `}`"));
                    }
                    parts.push(Part::Literal(rest[..end].to_owned()));
                    rest = &rest[end..];
                }
            }
        }
        Ok(Self { parts })
    }

    /// The variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables' values in `uri` (percent-decoded), if it matches.
    pub fn matches(&self, uri: &str) -> Option<Vec<(&str, String)>> {
        let mut rest = uri;
        let mut out = Vec::new();
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Var { name, reserved } => {
                    // A simple variable stops at the first character it cannot hold unencoded;
                    // a reserved one at the next literal (or the end).
                    let stop = if *reserved {
                        rest.len()
                    } else {
                        rest.find(['/', '?', '#', '&', '=', ','])
                            .unwrap_or(rest.len())
                    };
                    let end = match self.parts.get(i + 1) {
                        Some(Part::Literal(l)) => rest[..stop]
                            .find(l.as_str())
                            .or_else(|| rest[stop..].starts_with(l.as_str()).then_some(stop))?,
                        _ => stop,
                    };
                    if end == 0 {
                        return None;
                    }
                    out.push((name.as_str(), percent_decode(&rest[..end])?));
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(out)
    }
}

/// `%XX` decoded; `None` for a broken escape or bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        let t = UriTemplate::parse(t).unwrap();
        t.matches(uri)
            .map(|v| v.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    }

    #[test]
    fn simple_variables_bind_one_segment_and_decode_it() {
        assert_eq!(
            bind("test://template/{id}/data", "test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        assert_eq!(
            bind("catalog://products/{id}", "catalog://products/a%20b"),
            Some(vec![("id".into(), "a b".into())])
        );
        assert_eq!(
            bind("catalog://products/{id}", "catalog://products/1/2"),
            None
        );
        assert_eq!(bind("catalog://products/{id}", "catalog://products/"), None);
        assert_eq!(bind("catalog://products/{id}", "catalog://other/1"), None);
        assert_eq!(
            bind("catalog://products/{id}", "catalog://products/%zz"),
            None
        );
    }

    #[test]
    fn reserved_variables_span_slashes_and_two_variables_need_a_literal() {
        assert_eq!(
            bind("file:///{+path}", "file:///docs/a/README.md"),
            Some(vec![("path".into(), "docs/a/README.md".into())])
        );
        assert_eq!(
            bind("x://{a}-{b}", "x://1-2"),
            Some(vec![("a".into(), "1".into()), ("b".into(), "2".into())])
        );
        assert!(UriTemplate::parse("x://{a}{b}").is_err());
        assert!(UriTemplate::parse("x://{a").is_err());
        assert!(UriTemplate::parse("x://a}").is_err());
        assert!(UriTemplate::parse("x://{a b}").is_err());
    }
}
