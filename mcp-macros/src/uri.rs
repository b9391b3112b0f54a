//! The URIs of `#[mcp_resource]`, checked at compile time: a fixed `uri` is an absolute URI,
//! a `uri_template` an RFC 6570 template of level 1 (`{var}`) and reserved (`{+var}`)
//! expressions, the ones the runtime matches requested URIs against.

/// Why `uri` is not an absolute URI without template expressions, if it is not.
pub fn uri_problem(uri: &str) -> Option<String> {
    if uri.contains(['{', '}']) {
        return Some(
            "`{` and `}` are template expressions: for a URI with variables, write \
             `uri_template = \"...\"`"
                .to_owned(),
        );
    }
    scheme_problem(uri).or_else(|| char_problem(uri))
}

/// Why `origin` is not a CSP origin (`scheme://host[:port]`, the host possibly starting with
/// `*.`), if it is not: no credentials, path, query or fragment.
pub fn origin_problem(origin: &str) -> Option<String> {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Some(format!("`{origin}` has no `scheme://`"));
    };
    if scheme.is_empty()
        || !scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return Some(format!("`{scheme}` is not a URI scheme"));
    }
    if rest.contains('@') {
        return Some(format!("`{origin}` has credentials"));
    }
    if let Some(i) = rest.find(['/', '?', '#']) {
        let what = match rest.as_bytes()[i] {
            b'/' => "a path",
            b'?' => "a query",
            _ => "a fragment",
        };
        return Some(format!("`{origin}` has {what}"));
    }
    // An IPv6 literal has colons of its own: the port follows its `]`.
    let split = match rest.find(']') {
        Some(end) if rest.starts_with('[') => rest[end..].find(':').map(|i| end + i),
        _ => rest.rfind(':'),
    };
    let (host, port) = match split {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    if let Some(p) = port
        && (p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Some(format!("`{p}` is not a port"));
    }
    let bare = host.strip_prefix("*.").unwrap_or(host);
    let ip6 = bare.starts_with('[') && bare.ends_with(']');
    if bare.is_empty()
        || (!ip6
            && !bare
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.')))
    {
        return Some(format!("`{host}` is not a host name"));
    }
    None
}

/// The variables of a URI template, in order, or why it is not a template the runtime can match.
pub fn template_variables(template: &str) -> Result<Vec<&str>, String> {
    if let Some(p) = scheme_problem(template).or_else(|| char_problem(template)) {
        return Err(p);
    }
    let mut vars: Vec<&str> = Vec::new();
    let mut rest = template;
    // Whether `rest` starts right after an expression.
    let mut after_expr = false;
    while let Some(open) = rest.find(['{', '}']) {
        if rest.as_bytes()[open] == b'}' {
            return Err("a `}` closes no `{`".to_owned());
        }
        let inner = &rest[open + 1..];
        let close = inner
            .find(['{', '}'])
            .ok_or_else(|| "a `{` is never closed".to_owned())?;
        if inner.as_bytes()[close] == b'{' {
            return Err("expressions cannot be nested: a `{` opens inside `{...}`".to_owned());
        }
        let expr = &inner[..close];
        if open == 0 && after_expr {
            return Err(format!(
                "`{{{}}}` follows another expression: two variables need a literal between \
                 them (as in `{{a}}/{{b}}`), or a URI cannot tell where one ends",
                expr
            ));
        }
        let name = expr.strip_prefix('+').unwrap_or(expr);
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!(
                "`{{{expr}}}` is not a supported expression: use `{{name}}` or `{{+name}}` (may \
                 contain `/`), where the name has letters, digits and `_`"
            ));
        }
        if vars.contains(&name) {
            return Err(format!("variable `{name}` appears twice"));
        }
        vars.push(name);
        rest = &inner[close + 1..];
        after_expr = true;
    }
    if vars.is_empty() {
        return Err(
            "it has no variable: a resource without variables has a fixed `uri = \"...\"`"
                .to_owned(),
        );
    }
    Ok(vars)
}

/// An absolute URI starts with its scheme: `[A-Za-z][A-Za-z0-9+.-]*:`.
fn scheme_problem(uri: &str) -> Option<String> {
    let Some((scheme, _)) = uri.split_once(':') else {
        return Some(
            "it has no scheme: an absolute URI starts with one, as in `file:///`, `https://` or \
             `catalog://`"
                .to_owned(),
        );
    };
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'));
    (!valid).then(|| {
        format!(
            "`{scheme}` is not a URI scheme: an absolute URI starts with a letter, then letters, \
             digits, `+`, `.` or `-`, then `:`"
        )
    })
}

fn char_problem(uri: &str) -> Option<String> {
    uri.chars()
        .find(|c| c.is_whitespace() || c.is_control())
        .map(|c| format!("it contains {c:?}: percent-encode it"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        for good in [
            "https://api.example.com",
            "wss://realtime.example.com:8443",
            "https://*.cdn.example",
            "http://[::1]:8080",
            "http://[::1]",
        ] {
            assert_eq!(origin_problem(good), None, "{good}");
        }
        for (bad, why) in [
            ("api.example.com", "has no `scheme://`"),
            ("https://user:pw@example.com", "has credentials"),
            ("https://example.com/", "has a path"),
            ("https://example.com?x=1", "has a query"),
            ("https://example.com#top", "has a fragment"),
            ("https://example.com:http", "is not a port"),
            ("https://", "is not a host name"),
            ("https://exa mple.com", "is not a host name"),
            ("1https://example.com", "is not a URI scheme"),
        ] {
            let problem = origin_problem(bad).unwrap_or_default();
            assert!(problem.ends_with(why), "{bad}: {problem}");
        }
    }

    #[test]
    fn uris() {
        assert_eq!(uri_problem("catalog://store/hours"), None);
        assert_eq!(uri_problem("file:///docs/README.md"), None);
        assert_eq!(uri_problem("urn:isbn:0451450523"), None);
        assert_eq!(uri_problem("x-my.app+v1:thing"), None);
        assert!(uri_problem("/no/scheme").unwrap().contains("no scheme"));
        assert!(
            uri_problem("1abc://x")
                .unwrap()
                .contains("not a URI scheme")
        );
        assert!(uri_problem("://x").unwrap().contains("not a URI scheme"));
        assert!(
            uri_problem("my app://x")
                .unwrap()
                .contains("not a URI scheme")
        );
        assert!(uri_problem("file:///a b").unwrap().contains("' '"));
        assert!(uri_problem("file:///a\tb").unwrap().contains("'\\t'"));
        assert!(
            uri_problem("db://items/{id}")
                .unwrap()
                .contains("uri_template")
        );
    }

    #[test]
    fn templates() {
        assert_eq!(
            template_variables("catalog://products/{id}"),
            Ok(vec!["id"])
        );
        assert_eq!(
            template_variables("file:///{+path}/v{version}.txt"),
            Ok(vec!["path", "version"])
        );
        assert_eq!(template_variables("db://{a}-{b_2}"), Ok(vec!["a", "b_2"]));
        let err = |t| template_variables(t).unwrap_err();
        assert!(err("products/{id}").contains("no scheme"));
        assert!(err("{scheme}://x").contains("not a URI scheme"));
        assert!(err("db://a b/{id}").contains("' '"));
        assert!(err("db://items/{id").contains("never closed"));
        assert!(err("db://items/id}").contains("closes no"));
        assert!(err("db://items/{a{b}}").contains("nested"));
        assert!(err("db://items/{a}{b}").contains("follows another expression"));
        assert!(err("db://items/{a}{+b}").contains("follows another expression"));
        assert!(err("db://items/{}").contains("not a supported expression"));
        assert!(err("db://items/{?q}").contains("`{?q}`"));
        assert!(err("db://items/{a,b}").contains("`{a,b}`"));
        assert!(err("db://items/{id*}").contains("`{id*}`"));
        assert!(err("db://items/{a-b}").contains("`{a-b}`"));
        assert!(err("db://{id}/{id}").contains("`id` appears twice"));
        assert!(err("db://items/all").contains("no variable"));
    }
}
