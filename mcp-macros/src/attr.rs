//! Parsing of the attributes' arguments with `parse_nested_meta`.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;
use syn::{Expr, LitBool, LitInt, LitStr, Path, Token};

use crate::ctxt::Ctxt;

/// A value with the span of the user's token.
#[derive(Clone)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

pub const RPC_METHOD_KEYS: &str = "name, groups, version, removed_in, cache, lock, crate";
pub const MCP_TOOL_KEYS: &str =
    "title, read_only_hint, destructive_hint, idempotent_hint, open_world_hint";
pub const PARAM_KEYS: &str = "default, rename, context, min_length, max_length, length, min, max, range, \
     exclusive_min, exclusive_max, pattern, email, url, uuid, one_of, not_blank, min_items, max_items, check";
pub const CACHE_KEYS: &str = "ttl, envs";
pub const LOCK_KEYS: &str = "param, ttl, wait";

/// `cache(ttl = "60s", envs = ["prod"])`.
pub struct CacheArgs {
    pub ttl_ms: u64,
    pub envs: Option<Vec<String>>,
}

/// `lock(param = "order_id", ttl = "10s", wait = "2s")`.
pub struct LockArgs {
    pub param: Option<Spanned<String>>,
    pub ttl_ms: u64,
    pub wait_ms: u64,
}
pub const SERVICE_KEYS: &str = "name, concat, groups, version, crate";

#[derive(Default)]
pub struct RpcMethodArgs {
    pub name: Option<Spanned<String>>,
    pub groups: Option<Spanned<Vec<Path>>>,
    pub version: Option<Spanned<u32>>,
    pub removed_in: Option<Spanned<u32>>,
    pub krate: Option<Path>,
    pub cache: Option<CacheArgs>,
    pub lock: Option<LockArgs>,
    /// Keys that were written, valid or not (so a bad value is not also reported as missing).
    pub seen: Vec<String>,
}

#[derive(Default)]
pub struct McpToolArgs {
    pub title: Option<String>,
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
}

#[derive(Default)]
pub struct ParamArgs {
    pub default: Option<Expr>,
    pub rename: Option<Spanned<String>>,
    pub context: bool,
    /// JSON Schema keywords of the constraints, in order: `("minLength", "1")`.
    pub keywords: Vec<(String, String)>,
    pub check: Option<Path>,
}

/// A duration: `"500ms"`, `"10s"`, `"2m"`, `"1h"`, or an integer of seconds.
fn duration_ms(meta: &ParseNestedMeta) -> syn::Result<u64> {
    let value = meta.value()?;
    if value.peek(LitInt) {
        let n: LitInt = value.parse()?;
        return Ok(n.base10_parse::<u64>()? * 1000);
    }
    let lit: LitStr = value.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!(
                "expected a duration: `{} = \"10s\"` (ms, s, m, h)",
                path_name(&meta.path)
            ),
        )
    })?;
    let s = lit.value();
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| syn::Error::new(lit.span(), "expected a duration such as \"10s\""))?;
    let factor = match unit.trim() {
        "ms" => 1,
        "s" | "" => 1000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => {
            return Err(syn::Error::new(
                lit.span(),
                "unknown duration unit: use ms, s, m or h",
            ));
        }
    };
    Ok(n * factor)
}

fn string_list(meta: &ParseNestedMeta) -> syn::Result<Vec<String>> {
    let value = meta.value()?;
    if !value.peek(syn::token::Bracket) {
        return Err(value.error(format!(
            "expected a list of strings: `{} = [\"prod\"]`",
            path_name(&meta.path)
        )));
    }
    let content;
    syn::bracketed!(content in value);
    let list = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
    Ok(list.into_iter().map(|l| l.value()).collect())
}

/// A number literal (optionally negative) as JSON text.
fn number(meta: &ParseNestedMeta) -> syn::Result<String> {
    let e: Expr = meta.value()?.parse()?;
    fn text(e: &Expr) -> Option<String> {
        match e {
            Expr::Lit(l) => match &l.lit {
                syn::Lit::Int(i) => Some(i.base10_digits().to_owned()),
                syn::Lit::Float(f) => Some(f.base10_digits().to_owned()),
                _ => None,
            },
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
                text(&u.expr).map(|t| format!("-{t}"))
            }
            _ => None,
        }
    }
    text(&e).ok_or_else(|| {
        syn::Error::new_spanned(
            &e,
            format!("expected a number: `{} = 10`", path_name(&meta.path)),
        )
    })
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn min_max(
    meta: &ParseNestedMeta,
    lo: &str,
    hi: &str,
    out: &mut Vec<(String, String)>,
) -> syn::Result<()> {
    meta.parse_nested_meta(|m| {
        if m.path.is_ident("min") {
            out.push((lo.to_owned(), number(&m)?));
        } else if m.path.is_ident("max") {
            out.push((hi.to_owned(), number(&m)?));
        } else {
            return Err(m.error("expected `min = N` or `max = N`"));
        }
        Ok(())
    })
}

/// A light syntax check of a pattern at compile time: balanced groups and classes.
fn regex_syntax_ok(p: &str) -> Result<(), &'static str> {
    let (mut depth, mut class, mut escaped) = (0i32, false, false);
    for c in p.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '[' if !class => class = true,
            ']' if class => class = false,
            '(' if !class => depth += 1,
            ')' if !class => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced `)`");
                }
            }
            _ => {}
        }
    }
    if escaped {
        Err("trailing backslash")
    } else if class {
        Err("unclosed `[`")
    } else if depth != 0 {
        Err("unclosed `(`")
    } else {
        Ok(())
    }
}

#[derive(Default)]
pub struct ServiceArgs {
    pub name: Option<Spanned<String>>,
    pub concat: Option<Spanned<String>>,
    pub groups: Option<Spanned<Vec<Path>>>,
    pub version: Option<Spanned<u32>>,
    pub krate: Option<Path>,
    /// Keys that were written, valid or not.
    pub seen: Vec<String>,
}

impl RpcMethodArgs {
    /// Whether `key` was written (even with a bad value).
    pub fn has(&self, key: &str) -> bool {
        self.seen.iter().any(|k| k == key)
    }
}

impl ServiceArgs {
    /// Whether `key` was written (even with a bad value).
    pub fn has(&self, key: &str) -> bool {
        self.seen.iter().any(|k| k == key)
    }
}

fn lit_str(meta: &ParseNestedMeta) -> syn::Result<Spanned<String>> {
    let lit: LitStr = meta.value()?.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!(
                "`{0}` expects a string literal: `{0} = \"...\"`",
                path_name(&meta.path)
            ),
        )
    })?;
    Ok(Spanned {
        value: lit.value(),
        span: lit.span(),
    })
}

fn lit_u32(meta: &ParseNestedMeta) -> syn::Result<Spanned<u32>> {
    let lit: LitInt = meta.value()?.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!(
                "`{0}` expects an integer literal: `{0} = 1`",
                path_name(&meta.path)
            ),
        )
    })?;
    Ok(Spanned {
        value: lit.base10_parse()?,
        span: lit.span(),
    })
}

fn groups(meta: &ParseNestedMeta) -> syn::Result<Spanned<Vec<Path>>> {
    let value = meta.value()?;
    if !value.peek(syn::token::Bracket) {
        let msg = "expected a list of group constants in brackets: `groups = [MCP]` or \
                   `groups = [MCP, INTERNAL]`";
        return Err(match value.parse::<Expr>() {
            Ok(e) => syn::Error::new_spanned(e, msg),
            Err(_) => value.error(msg),
        });
    }
    let content;
    let bracket = syn::bracketed!(content in value);
    let list = Punctuated::<Path, Token![,]>::parse_terminated(&content).map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected the path of an `ApiGroup` constant: `groups = [MCP, INTERNAL]`",
        )
    })?;
    Ok(Spanned {
        value: list.into_iter().collect(),
        span: bracket.span.join(),
    })
}

pub fn krate(meta: &ParseNestedMeta) -> syn::Result<Path> {
    let s = lit_str(meta)?;
    syn::parse_str::<Path>(&s.value)
        .map_err(|_| syn::Error::new(s.span, "expected a path: `crate = \"my_runtime\"`"))
}

/// A bool flag: `key` alone means true, or `key = true|false`.
fn flag(meta: &ParseNestedMeta) -> syn::Result<bool> {
    if meta.input.peek(Token![=]) {
        let lit: LitBool = meta.value()?.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!(
                    "`{0}` expects `true` or `false`: `{0} = true`, or `{0}` alone for true",
                    path_name(&meta.path)
                ),
            )
        })?;
        Ok(lit.value)
    } else {
        Ok(true)
    }
}

fn is_one_of(meta: &ParseNestedMeta, keys: &str) -> bool {
    keys.split(", ").any(|k| meta.path.is_ident(k))
}

pub fn path_name(path: &Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

pub fn unknown(meta: &ParseNestedMeta, attr: &str, keys: &str) -> syn::Error {
    let key = path_name(&meta.path);
    let hint = suggest(&key, keys)
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default();
    syn::Error::new_spanned(
        &meta.path,
        format!("unknown `{attr}` key `{key}`{hint}; expected one of: {keys}"),
    )
}

/// The known key closest to a misspelt one, if any is close enough.
fn suggest<'k>(key: &str, keys: &'k str) -> Option<&'k str> {
    // A known key the user wrote only the start of (`read_only` for `read_only_hint`).
    if key.len() >= 4
        && let Some(k) = keys.split(", ").find(|k| k.starts_with(key))
    {
        return Some(k);
    }
    keys.split(", ")
        .map(|k| (edit_distance(key, k), k))
        .filter(|(d, k)| *d <= (k.len().max(key.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Edit distance with adjacent transpositions (`nmae` is one edit from `name`), in bytes (keys
/// are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    // d[i][j]: distance between a[..i] and b[..j].
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// Records `key` as written; a second occurrence is an error.
pub fn first_time(meta: &ParseNestedMeta, seen: &mut Vec<String>) -> syn::Result<()> {
    let key = path_name(&meta.path);
    if seen.contains(&key) {
        return Err(syn::Error::new_spanned(
            &meta.path,
            format!("duplicate key `{key}`: give it once"),
        ));
    }
    seen.push(key);
    Ok(())
}

/// Runs `parse_nested_meta` and records errors in `cx`; keeps going after a bad key.
pub fn parse_list(
    cx: &Ctxt,
    tokens: proc_macro2::TokenStream,
    mut each: impl FnMut(&ParseNestedMeta) -> syn::Result<()>,
) {
    let parser = syn::meta::parser(|meta| {
        if let Err(e) = each(&meta) {
            cx.syn_error(e);
            // Skip the rest of this entry (up to the next top-level `,`), wherever the error
            // left off, so the next keys are still checked and nothing is reported twice.
            while !meta.input.is_empty() && !meta.input.peek(Token![,]) {
                meta.input.parse::<proc_macro2::TokenTree>()?;
            }
        }
        Ok(())
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, tokens) {
        cx.syn_error(e);
    }
}

pub fn parse_rpc_method(cx: &Ctxt, tokens: proc_macro2::TokenStream) -> RpcMethodArgs {
    let mut args = RpcMethodArgs::default();
    parse_list(cx, tokens, |meta| {
        if is_one_of(meta, RPC_METHOD_KEYS) {
            first_time(meta, &mut args.seen)?;
        }
        if meta.path.is_ident("name") {
            args.name = Some(lit_str(meta)?);
        } else if meta.path.is_ident("groups") {
            args.groups = Some(groups(meta)?);
        } else if meta.path.is_ident("version") {
            args.version = Some(lit_u32(meta)?);
        } else if meta.path.is_ident("removed_in") {
            args.removed_in = Some(lit_u32(meta)?);
        } else if meta.path.is_ident("crate") {
            args.krate = Some(krate(meta)?);
        } else if meta.path.is_ident("cache") {
            let mut c = CacheArgs {
                ttl_ms: 60_000,
                envs: None,
            };
            meta.parse_nested_meta(|m| {
                if m.path.is_ident("ttl") {
                    c.ttl_ms = duration_ms(&m)?;
                } else if m.path.is_ident("envs") {
                    c.envs = Some(string_list(&m)?);
                } else {
                    return Err(unknown(&m, "cache", CACHE_KEYS));
                }
                Ok(())
            })?;
            args.cache = Some(c);
        } else if meta.path.is_ident("lock") {
            let mut l = LockArgs {
                param: None,
                ttl_ms: 30_000,
                wait_ms: 0,
            };
            if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|m| {
                    if m.path.is_ident("param") {
                        l.param = Some(lit_str(&m)?);
                    } else if m.path.is_ident("ttl") {
                        l.ttl_ms = duration_ms(&m)?;
                    } else if m.path.is_ident("wait") {
                        l.wait_ms = duration_ms(&m)?;
                    } else {
                        return Err(unknown(&m, "lock", LOCK_KEYS));
                    }
                    Ok(())
                })?;
            }
            args.lock = Some(l);
        } else {
            return Err(unknown(meta, "rpc_method", RPC_METHOD_KEYS));
        }

        Ok(())
    });
    args
}

pub fn parse_mcp_tool(cx: &Ctxt, tokens: proc_macro2::TokenStream) -> McpToolArgs {
    let mut args = McpToolArgs::default();
    let mut seen = Vec::new();
    parse_list(cx, tokens, |meta| {
        if is_one_of(meta, MCP_TOOL_KEYS) {
            first_time(meta, &mut seen)?;
        }
        if meta.path.is_ident("title") {
            args.title = Some(lit_str(meta)?.value);
        } else if meta.path.is_ident("read_only_hint") {
            args.read_only_hint = Some(flag(meta)?);
        } else if meta.path.is_ident("destructive_hint") {
            args.destructive_hint = Some(flag(meta)?);
        } else if meta.path.is_ident("idempotent_hint") {
            args.idempotent_hint = Some(flag(meta)?);
        } else if meta.path.is_ident("open_world_hint") {
            args.open_world_hint = Some(flag(meta)?);
        } else {
            return Err(unknown(meta, "mcp_tool", MCP_TOOL_KEYS));
        }
        Ok(())
    });
    args
}

pub fn parse_param(cx: &Ctxt, attr: &syn::Attribute) -> ParamArgs {
    let mut args = ParamArgs::default();
    let tokens = match &attr.meta {
        syn::Meta::List(list) => list.tokens.clone(),
        other => {
            cx.error_spanned_by(
                other,
                format!("expected `#[param(...)]` with one of: {PARAM_KEYS}"),
            );
            return args;
        }
    };
    let mut seen = Vec::new();
    parse_list(cx, tokens, |meta| {
        if is_one_of(meta, PARAM_KEYS) {
            first_time(meta, &mut seen)?;
        }
        if meta.path.is_ident("default") {
            if !meta.input.peek(Token![=]) {
                return Err(syn::Error::new_spanned(
                    &meta.path,
                    "`default` needs a value: `#[param(default = 10)]` (an `Option<T>` parameter \
                     is optional without one)",
                ));
            }
            args.default = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("rename") {
            args.rename = Some(lit_str(meta)?);
        } else if meta.path.is_ident("context") {
            if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
                return Err(meta.error("`context` takes no value: `#[param(context)]`"));
            }
            args.context = true;
        } else if meta.path.is_ident("min_length") {
            args.keywords.push(("minLength".into(), number(meta)?));
        } else if meta.path.is_ident("max_length") {
            args.keywords.push(("maxLength".into(), number(meta)?));
        } else if meta.path.is_ident("length") {
            min_max(meta, "minLength", "maxLength", &mut args.keywords)?;
        } else if meta.path.is_ident("min_items") {
            args.keywords.push(("minItems".into(), number(meta)?));
        } else if meta.path.is_ident("max_items") {
            args.keywords.push(("maxItems".into(), number(meta)?));
        } else if meta.path.is_ident("min") {
            args.keywords.push(("minimum".into(), number(meta)?));
        } else if meta.path.is_ident("max") {
            args.keywords.push(("maximum".into(), number(meta)?));
        } else if meta.path.is_ident("range") {
            min_max(meta, "minimum", "maximum", &mut args.keywords)?;
        } else if meta.path.is_ident("exclusive_min") {
            args.keywords
                .push(("exclusiveMinimum".into(), number(meta)?));
        } else if meta.path.is_ident("exclusive_max") {
            args.keywords
                .push(("exclusiveMaximum".into(), number(meta)?));
        } else if meta.path.is_ident("pattern") {
            let p = lit_str(meta)?;
            if let Err(e) = regex_syntax_ok(&p.value) {
                return Err(syn::Error::new(
                    p.span,
                    format!("invalid regular expression: {e}"),
                ));
            }
            args.keywords
                .push(("pattern".into(), json_string(&p.value)));
        } else if meta.path.is_ident("email") {
            args.keywords.push(("format".into(), json_string("email")));
        } else if meta.path.is_ident("url") {
            args.keywords.push(("format".into(), json_string("uri")));
        } else if meta.path.is_ident("uuid") {
            args.keywords.push(("format".into(), json_string("uuid")));
        } else if meta.path.is_ident("not_blank") {
            args.keywords.push(("minLength".into(), "1".into()));
            args.keywords.push(("pattern".into(), json_string("\\S")));
        } else if meta.path.is_ident("one_of") {
            let value = meta.value()?;
            let content;
            syn::bracketed!(content in value);
            let list = Punctuated::<syn::Lit, Token![,]>::parse_terminated(&content)?;
            let items: Vec<String> = list
                .iter()
                .map(|l| match l {
                    syn::Lit::Str(s) => Ok(json_string(&s.value())),
                    syn::Lit::Int(i) => Ok(i.base10_digits().to_owned()),
                    syn::Lit::Float(f) => Ok(f.base10_digits().to_owned()),
                    syn::Lit::Bool(b) => Ok(b.value.to_string()),
                    other => Err(syn::Error::new_spanned(
                        other,
                        "expected a string, number or bool literal",
                    )),
                })
                .collect::<syn::Result<_>>()?;
            args.keywords
                .push(("enum".into(), format!("[{}]", items.join(","))));
        } else if meta.path.is_ident("check") {
            args.check = Some(meta.value()?.parse()?);
        } else {
            return Err(unknown(meta, "param", PARAM_KEYS));
        }

        Ok(())
    });
    args
}

pub fn parse_service(cx: &Ctxt, tokens: proc_macro2::TokenStream) -> ServiceArgs {
    let mut args = ServiceArgs::default();
    parse_list(cx, tokens, |meta| {
        if is_one_of(meta, SERVICE_KEYS) {
            first_time(meta, &mut args.seen)?;
        }
        if meta.path.is_ident("name") {
            args.name = Some(lit_str(meta)?);
        } else if meta.path.is_ident("concat") {
            args.concat = Some(lit_str(meta)?);
        } else if meta.path.is_ident("groups") {
            args.groups = Some(groups(meta)?);
        } else if meta.path.is_ident("version") {
            args.version = Some(lit_u32(meta)?);
        } else if meta.path.is_ident("crate") {
            args.krate = Some(krate(meta)?);
        } else {
            return Err(unknown(meta, "rpc_service", SERVICE_KEYS));
        }
        Ok(())
    });
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(suggest("nmae", RPC_METHOD_KEYS), Some("name"));
        assert_eq!(suggest("group", RPC_METHOD_KEYS), Some("groups"));
        assert_eq!(suggest("removed", RPC_METHOD_KEYS), Some("removed_in"));
        assert_eq!(suggest("title", RPC_METHOD_KEYS), None);
        assert_eq!(
            suggest("readonly_hint", MCP_TOOL_KEYS),
            Some("read_only_hint")
        );
        assert_eq!(suggest("defualt", PARAM_KEYS), Some("default"));
        assert_eq!(suggest("bogus", PARAM_KEYS), None);
        assert_eq!(suggest("read_only", MCP_TOOL_KEYS), Some("read_only_hint"));
        assert_eq!(
            suggest("open_world", MCP_TOOL_KEYS),
            Some("open_world_hint")
        );
        assert_eq!(suggest("x", PARAM_KEYS), None);
    }

    #[test]
    fn distances() {
        assert_eq!(edit_distance("name", "name"), 0);
        assert_eq!(edit_distance("nmae", "name"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
