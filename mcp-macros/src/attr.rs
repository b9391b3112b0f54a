//! Parsing: the attributes' arguments, read with `parse_nested_meta` through one shared key
//! parser ([`parse_keys`]) that reports unknown keys (with a did-you-mean) and duplicate keys
//! the same way for every attribute. Each attribute's key names are constants next to its
//! parser.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, LitBool, LitInt, LitStr, Path, Token};

use crate::ctxt::Ctxt;

/// A value with the span of the user's token.
#[derive(Clone)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// An attribute (or a nested list such as `cache(...)`) and the keys it takes, for the shared
/// parser and its messages.
pub struct Keys {
    /// The name in messages: "unknown `rpc_method` key".
    pub attr: &'static str,
    pub keys: &'static [&'static str],
}

impl Keys {
    /// The keys as a list for messages: "name, groups, version".
    pub fn list(&self) -> String {
        self.keys.join(", ")
    }

    /// The key `meta` names, if it is one of these.
    fn find(&self, meta: &ParseNestedMeta) -> Option<&'static str> {
        self.keys.iter().copied().find(|k| meta.path.is_ident(k))
    }
}

// ---------------------------------------------------------------------------------------------
// The shared key parser.

/// Parses a key list with `parse_nested_meta`, records errors in `cx` and keeps going after a
/// bad entry. An unknown key (with a did-you-mean) and a key given twice are errors; every other
/// key is passed to `each` with its constant. Returns the keys that were written, valid or not
/// (so a bad value is not also reported as missing).
pub fn parse_keys(
    cx: &Ctxt,
    tokens: TokenStream,
    spec: &Keys,
    each: impl FnMut(&'static str, &ParseNestedMeta) -> syn::Result<()>,
) -> Vec<&'static str> {
    let mut seen = Vec::new();
    parse_keys_seen(cx, tokens, spec, &mut seen, each);
    seen
}

/// [`parse_keys`] for an attribute that may be written several times (`#[rpc(...)]`): a key
/// in `seen` was given by an earlier one.
pub fn parse_keys_seen(
    cx: &Ctxt,
    tokens: TokenStream,
    spec: &Keys,
    seen: &mut Vec<&'static str>,
    mut each: impl FnMut(&'static str, &ParseNestedMeta) -> syn::Result<()>,
) {
    let parser = syn::meta::parser(|meta| {
        if let Err(e) = known_key(&meta, spec, seen).and_then(|key| each(key, &meta)) {
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
        // The rest of the list is unknown: count every key as written, so none is also
        // reported as missing.
        for key in spec.keys {
            if !seen.contains(key) {
                seen.push(key);
            }
        }
    }
}

/// A nested key list (`cache(ttl = "60s")`), with the same rules as [`parse_keys`]; its first
/// error ends the list and is the error of the whole entry.
pub fn parse_nested_keys(
    meta: &ParseNestedMeta,
    spec: &Keys,
    mut each: impl FnMut(&'static str, &ParseNestedMeta) -> syn::Result<()>,
) -> syn::Result<()> {
    let mut seen = Vec::new();
    meta.parse_nested_meta(|m| {
        let result = known_key(&m, spec, &mut seen).and_then(|key| each(key, &m));
        if result.is_err() {
            drain(m.input);
        }
        result
    })
}

/// Consumes what is left of a delimited group after an error, so syn does not also report its
/// first token as unexpected.
fn drain(input: syn::parse::ParseStream) {
    while input.parse::<proc_macro2::TokenTree>().is_ok() {}
}

/// Keys that may be given several times, one entry each: `icon(...)`.
const REPEATABLE: &[&str] = &[ICON];

/// The key of an entry: an error if it is unknown or was already given (unless it is
/// repeatable).
fn known_key(
    meta: &ParseNestedMeta,
    spec: &Keys,
    seen: &mut Vec<&'static str>,
) -> syn::Result<&'static str> {
    let Some(key) = spec.find(meta) else {
        return Err(unknown(meta, spec));
    };
    if REPEATABLE.contains(&key) {
        return Ok(key);
    }
    if seen.contains(&key) {
        return Err(syn::Error::new_spanned(
            &meta.path,
            format!("duplicate key `{key}`: give it once"),
        ));
    }
    seen.push(key);
    Ok(key)
}

pub fn path_name(path: &Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

fn unknown(meta: &ParseNestedMeta, spec: &Keys) -> syn::Error {
    let key = path_name(&meta.path);
    let hint = suggest(&key, spec.keys)
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default();
    syn::Error::new_spanned(
        &meta.path,
        format!(
            "unknown `{}` key `{key}`{hint}; expected one of: {}",
            spec.attr,
            spec.list()
        ),
    )
}

/// The known key closest to a misspelt one, if any is close enough.
fn suggest(key: &str, keys: &[&'static str]) -> Option<&'static str> {
    // A known key the user wrote only the start of (`read_only` for `read_only_hint`).
    if key.len() >= 4
        && let Some(k) = keys.iter().find(|k| k.starts_with(key))
    {
        return Some(k);
    }
    keys.iter()
        .map(|k| (edit_distance(key, k), *k))
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

// ---------------------------------------------------------------------------------------------
// Values.

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

/// An `i32` literal, optionally negative: `priority = -10`.
fn lit_i32(meta: &ParseNestedMeta) -> syn::Result<i32> {
    let value = meta.value()?;
    let neg = value.parse::<Option<Token![-]>>()?.is_some();
    let lit: LitInt = value.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!(
                "`{0}` expects an integer literal: `{0} = 10` or `{0} = -10`",
                path_name(&meta.path)
            ),
        )
    })?;
    let n: i32 = lit.base10_parse()?;
    Ok(if neg { -n } else { n })
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
        drain(&content);
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

/// `crate = "path"`.
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

/// A key without a value: `context`.
fn bare(meta: &ParseNestedMeta, example: &str) -> syn::Result<()> {
    if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
        return Err(meta.error(format!(
            "`{}` takes no value: `{example}`",
            path_name(&meta.path)
        )));
    }
    Ok(())
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
    Ok(string_lits(meta, "[\"prod\"]")?
        .iter()
        .map(LitStr::value)
        .collect())
}

/// A list of string literals in brackets, each with its span; `example` is a list for messages.
fn string_lits(meta: &ParseNestedMeta, example: &str) -> syn::Result<Vec<LitStr>> {
    let value = meta.value()?;
    if !value.peek(syn::token::Bracket) {
        return Err(value.error(format!(
            "expected a list of strings: `{} = {example}`",
            path_name(&meta.path)
        )));
    }
    let content;
    syn::bracketed!(content in value);
    let list = Punctuated::<LitStr, Token![,]>::parse_terminated(&content).map_err(|e| {
        drain(&content);
        syn::Error::new(
            e.span(),
            format!(
                "expected a string literal: `{} = {example}`",
                path_name(&meta.path)
            ),
        )
    })?;
    Ok(list.into_iter().collect())
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

/// A list of literals as a JSON array's text: `one_of = ["a", "b"]`.
fn literal_list(meta: &ParseNestedMeta) -> syn::Result<String> {
    let value = meta.value()?;
    if !value.peek(syn::token::Bracket) {
        return Err(value.error(format!(
            "expected a list of literals in brackets: `{} = [\"a\", \"b\"]`",
            path_name(&meta.path)
        )));
    }
    let content;
    syn::bracketed!(content in value);
    let list = Punctuated::<syn::Lit, Token![,]>::parse_terminated(&content)
        .inspect_err(|_| drain(&content))
        .map_err(|e| {
            syn::Error::new(
                e.span(),
                format!(
                    "`{}` lists literals (strings, numbers, bools), not constants or expressions",
                    path_name(&meta.path)
                ),
            )
        })?;
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
    Ok(format!("[{}]", items.join(",")))
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

// ---------------------------------------------------------------------------------------------
// Keys shared by several attributes.

pub const NAME: &str = "name";
pub const GROUPS: &str = "groups";
pub const VERSION: &str = "version";
pub const CRATE: &str = "crate";

// ---------------------------------------------------------------------------------------------
// `#[rpc_method(...)]`.

pub const REMOVED_IN: &str = "removed_in";
pub const CACHE: &str = "cache";
pub const LOCK: &str = "lock";
pub const TRANSFORM: &str = "transform";
pub const SCOPES: &str = "scopes";
pub const RATE_LIMIT: &str = "rate_limit";

pub const RPC_METHOD_ATTR: &str = "rpc_method";

pub const RPC_METHOD: Keys = Keys {
    attr: RPC_METHOD_ATTR,
    keys: &[
        NAME, GROUPS, VERSION, REMOVED_IN, CACHE, LOCK, RATE_LIMIT, TRANSFORM, SCOPES, CRATE,
    ],
};

#[derive(Default)]
pub struct RpcMethodArgs {
    pub name: Option<Spanned<String>>,
    pub groups: Option<Spanned<Vec<Path>>>,
    pub version: Option<Spanned<u32>>,
    pub removed_in: Option<Spanned<u32>>,
    pub krate: Option<Path>,
    pub cache: Option<CacheArgs>,
    pub lock: Option<LockArgs>,
    pub rate_limit: Option<RateLimitArgs>,
    /// `transform = path`: a `fn(&mut Schema)` applied to the input schema.
    pub transform: Option<Path>,
    /// `scopes = ["orders:write"]`: what a caller's identity must have.
    pub scopes: Option<Spanned<Vec<LitStr>>>,
    /// Keys that were written, valid or not (so a bad value is not also reported as missing).
    pub seen: Vec<&'static str>,
}

impl RpcMethodArgs {
    /// Whether `key` was written (even with a bad value).
    pub fn has(&self, key: &str) -> bool {
        self.seen.contains(&key)
    }
}

pub fn parse_rpc_method(cx: &Ctxt, tokens: TokenStream) -> RpcMethodArgs {
    let mut args = RpcMethodArgs::default();
    args.seen = parse_keys(cx, tokens, &RPC_METHOD, |key, meta| {
        match key {
            NAME => args.name = Some(lit_str(meta)?),
            GROUPS => args.groups = Some(groups(meta)?),
            VERSION => args.version = Some(lit_u32(meta)?),
            REMOVED_IN => args.removed_in = Some(lit_u32(meta)?),
            CRATE => args.krate = Some(krate(meta)?),
            CACHE => args.cache = Some(cache(meta)?),
            LOCK => args.lock = Some(lock(meta)?),
            RATE_LIMIT => args.rate_limit = Some(rate_limit(meta)?),
            SCOPES => args.scopes = Some(scopes(meta)?),
            TRANSFORM => {
                let value = meta.value()?;
                args.transform = Some(value.parse().map_err(|e: syn::Error| {
                    syn::Error::new(
                        e.span(),
                        "`transform` names a function by its path: `transform = my_fn` \
                         (`fn(&mut mcp_runtime::schema::Schema)`), not a string",
                    )
                })?);
            }
            _ => unreachable!("a key of RPC_METHOD"),
        }
        Ok(())
    });
    args
}

/// `scopes = ["orders:write", ...]`, with the span of the whole list.
fn scopes(meta: &ParseNestedMeta) -> syn::Result<Spanned<Vec<LitStr>>> {
    let span = syn::spanned::Spanned::span(&meta.path);
    Ok(Spanned {
        value: string_lits(meta, "[\"orders:write\"]")?,
        span,
    })
}

// `cache(...)`.

pub const TTL: &str = "ttl";
pub const ENVS: &str = "envs";

pub const CACHE_KEYS: Keys = Keys {
    attr: "cache",
    keys: &[TTL, ENVS],
};

/// `cache(ttl = "60s", envs = ["prod"])`.
pub struct CacheArgs {
    pub ttl_ms: u64,
    pub envs: Option<Vec<String>>,
}

fn cache(meta: &ParseNestedMeta) -> syn::Result<CacheArgs> {
    let mut c = CacheArgs {
        ttl_ms: 60_000,
        envs: None,
    };
    parse_nested_keys(meta, &CACHE_KEYS, |key, m| {
        match key {
            TTL => c.ttl_ms = duration_ms(m)?,
            ENVS => c.envs = Some(string_list(m)?),
            _ => unreachable!("a key of CACHE_KEYS"),
        }
        Ok(())
    })?;
    Ok(c)
}

// `lock(...)`, or `lock` alone.

pub const PARAM: &str = "param";
pub const WAIT: &str = "wait";

pub const LOCK_KEYS: Keys = Keys {
    attr: "lock",
    keys: &[PARAM, TTL, WAIT],
};

/// `lock(param = "order_id", ttl = "10s", wait = "2s")`.
pub struct LockArgs {
    pub param: Option<Spanned<String>>,
    pub ttl_ms: u64,
    pub wait_ms: u64,
}

fn lock(meta: &ParseNestedMeta) -> syn::Result<LockArgs> {
    let mut l = LockArgs {
        param: None,
        ttl_ms: 30_000,
        wait_ms: 0,
    };
    if meta.input.peek(syn::token::Paren) {
        parse_nested_keys(meta, &LOCK_KEYS, |key, m| {
            match key {
                PARAM => l.param = Some(lit_str(m)?),
                TTL => l.ttl_ms = duration_ms(m)?,
                WAIT => l.wait_ms = duration_ms(m)?,
                _ => unreachable!("a key of LOCK_KEYS"),
            }
            Ok(())
        })?;
    }
    Ok(l)
}

// `rate_limit(...)`.

pub const LIMIT: &str = "limit";
pub const BURST: &str = "burst";
pub const PER: &str = "per";

pub const RATE_LIMIT_KEYS: Keys = Keys {
    attr: "rate_limit",
    keys: &[LIMIT, BURST, PER],
};

/// `rate_limit(limit = "60/min", burst = 10, per = "caller")`.
pub struct RateLimitArgs {
    /// Calls per period.
    pub count: u32,
    pub period_ms: u64,
    /// `None`: `count` at once.
    pub burst: Option<u32>,
    /// `per = "method"`: one limit shared by every caller.
    pub per_method: bool,
}

fn rate_limit(meta: &ParseNestedMeta) -> syn::Result<RateLimitArgs> {
    let mut rate = None;
    let (mut burst, mut per_method) = (None, false);
    parse_nested_keys(meta, &RATE_LIMIT_KEYS, |key, m| {
        match key {
            LIMIT => {
                let lit = lit_str(m)?;
                rate = Some(parse_rate(&lit.value).map_err(|e| syn::Error::new(lit.span, e))?);
            }
            BURST => {
                let b = lit_u32(m)?;
                if b.value == 0 {
                    return Err(syn::Error::new(
                        b.span,
                        "`burst` is at least 1: the calls a caller may make at once",
                    ));
                }
                burst = Some(b.value);
            }
            PER => {
                let p = lit_str(m)?;
                per_method = match p.value.as_str() {
                    "caller" => false,
                    "method" => true,
                    other => {
                        return Err(syn::Error::new(
                            p.span,
                            format!(
                                "unknown `per = \"{other}\"`: use `per = \"caller\"` (each caller has the whole limit, the default) or `per = \"method\"` (all callers share it)"
                            ),
                        ));
                    }
                };
            }
            _ => unreachable!("a key of RATE_LIMIT_KEYS"),
        }
        Ok(())
    })?;
    let Some((count, period_ms)) = rate else {
        return Err(syn::Error::new(
            syn::spanned::Spanned::span(&meta.path),
            "`rate_limit` needs its rate: `rate_limit(limit = \"60/min\")`",
        ));
    };
    Ok(RateLimitArgs {
        count,
        period_ms,
        burst,
        per_method,
    })
}

/// `"60/min"`, `"10/s"`, `"1000/h"`, `"5/10s"`, `"100/day"`: calls, then the period (an
/// optional number and a unit: ms, s, min, h, day).
fn parse_rate(text: &str) -> Result<(u32, u64), String> {
    const HELP: &str = "write a rate as calls per period: \"60/min\", \"10/s\", \"5/10s\" (units: ms, s, min, h, day)";
    let Some((count, period)) = text.split_once('/') else {
        return Err(format!("`{text}` is not a rate: {HELP}"));
    };
    let count: u32 = count
        .trim()
        .parse()
        .map_err(|_| format!("`{}` is not a number of calls: {HELP}", count.trim()))?;
    if count == 0 {
        return Err("a rate limit allows at least one call: `limit = \"1/min\"` or more".into());
    }
    let period = period.trim();
    let (n, unit) = period.split_at(
        period
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(period.len()),
    );
    let n: u64 = if n.is_empty() {
        1
    } else {
        n.parse()
            .map_err(|_| format!("`{period}` is not a period: {HELP}"))?
    };
    let unit_ms: u64 = match unit.trim() {
        "ms" => 1,
        "s" | "sec" | "second" => 1000,
        "m" | "min" | "minute" => 60_000,
        "h" | "hour" => 3_600_000,
        "d" | "day" => 86_400_000,
        "" => return Err(format!("`{period}` has no unit: {HELP}")),
        other => return Err(format!("unknown unit `{other}`: {HELP}")),
    };
    match n.checked_mul(unit_ms) {
        Some(0) => Err(format!("a rate's period is not zero: {HELP}")),
        Some(ms) => Ok((count, ms)),
        None => Err(format!("`{period}` is too long a period")),
    }
}

#[cfg(test)]
mod rate_tests {
    use super::parse_rate;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("60/min"), Ok((60, 60_000)));
        assert_eq!(parse_rate(" 10 / s "), Ok((10, 1000)));
        assert_eq!(parse_rate("5/10s"), Ok((5, 10_000)));
        assert_eq!(parse_rate("100/day"), Ok((100, 86_400_000)));
        assert_eq!(parse_rate("3/250ms"), Ok((3, 250)));
        for bad in [
            "60",
            "x/min",
            "0/min",
            "60/",
            "60/0s",
            "60/fortnight",
            "-1/s",
        ] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// `#[mcp_tool(...)]`.

pub const MCP_TOOL_ATTR: &str = "mcp_tool";
pub const TITLE: &str = "title";
pub const READ_ONLY_HINT: &str = "read_only_hint";
pub const DESTRUCTIVE_HINT: &str = "destructive_hint";
pub const IDEMPOTENT_HINT: &str = "idempotent_hint";
pub const OPEN_WORLD_HINT: &str = "open_world_hint";
pub const TASK: &str = "task";
pub const RETRY: &str = "retry";
pub const APP: &str = "app";
pub const VISIBILITY: &str = "visibility";

pub const MCP_TOOL: Keys = Keys {
    attr: MCP_TOOL_ATTR,
    keys: &[
        TITLE,
        READ_ONLY_HINT,
        DESTRUCTIVE_HINT,
        IDEMPOTENT_HINT,
        OPEN_WORLD_HINT,
        TASK,
        RETRY,
        APP,
        VISIBILITY,
    ],
};

/// `task = "forbidden" | "optional" | "required"`.
#[derive(Clone, Copy, Default)]
pub enum TaskSupport {
    #[default]
    Forbidden,
    Optional,
    Required,
}

#[derive(Default)]
pub struct McpToolArgs {
    pub title: Option<String>,
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
    pub task: TaskSupport,
    /// `retry = false`: a task of it is not run again when its instance stops.
    pub retry: bool,
    /// `app = "ui://..."`: the MCP App its results are shown in.
    pub app: Option<Spanned<String>>,
    /// `visibility = ["model", "app"]`: who may see and call it.
    pub visibility: Option<Spanned<Vec<LitStr>>>,
}

fn task_support(meta: &ParseNestedMeta) -> syn::Result<TaskSupport> {
    let lit = lit_str(meta)?;
    match lit.value.as_str() {
        "forbidden" => Ok(TaskSupport::Forbidden),
        "optional" => Ok(TaskSupport::Optional),
        "required" => Ok(TaskSupport::Required),
        other => Err(syn::Error::new(
            lit.span,
            format!(
                "unknown task support `{other}`: use `task = \"optional\"` (a task when the client accepts tasks), `task = \"required\"` (only as a task) or `task = \"forbidden\"` (the default)"
            ),
        )),
    }
}

pub fn parse_mcp_tool(cx: &Ctxt, tokens: TokenStream) -> McpToolArgs {
    let mut args = McpToolArgs {
        retry: true,
        ..McpToolArgs::default()
    };
    let mut retry_key = None;
    parse_keys(cx, tokens, &MCP_TOOL, |key, meta| {
        match key {
            TITLE => args.title = Some(lit_str(meta)?.value),
            READ_ONLY_HINT => args.read_only_hint = Some(flag(meta)?),
            DESTRUCTIVE_HINT => args.destructive_hint = Some(flag(meta)?),
            IDEMPOTENT_HINT => args.idempotent_hint = Some(flag(meta)?),
            OPEN_WORLD_HINT => args.open_world_hint = Some(flag(meta)?),
            TASK => args.task = task_support(meta)?,
            APP => args.app = Some(lit_str(meta)?),
            VISIBILITY => {
                let span = syn::spanned::Spanned::span(&meta.path);
                let value = string_lits(meta, "[\"model\", \"app\"]")?;
                args.visibility = Some(Spanned { value, span });
            }
            RETRY => {
                args.retry = flag(meta)?;
                retry_key = Some(meta.path.clone());
            }
            _ => unreachable!("a key of MCP_TOOL"),
        }
        Ok(())
    });
    if let (Some(key), TaskSupport::Forbidden) = (retry_key, args.task) {
        cx.error_spanned_by(
            key,
            "`retry` is about tasks: it needs `task = \"optional\"` or `task = \"required\"`",
        );
    }
    args
}

/// Removes the `#[mcp_tool(...)]` attributes from a function's attributes and parses them; a
/// second one is an error.
pub fn take_mcp_tool(cx: &Ctxt, attrs: &mut Vec<Attribute>) -> Option<McpToolArgs> {
    let mut tool = None;
    let mut kept = Vec::with_capacity(attrs.len());
    for a in attrs.drain(..) {
        if !attr_is(&a, MCP_TOOL_ATTR) {
            kept.push(a);
        } else if tool.is_some() {
            cx.error_spanned_by(&a, "duplicate `#[mcp_tool]` attribute");
        } else {
            let tokens = match &a.meta {
                syn::Meta::List(l) => l.tokens.clone(),
                _ => TokenStream::new(),
            };
            tool = Some(parse_mcp_tool(cx, tokens));
        }
    }
    *attrs = kept;
    tool
}

// ---------------------------------------------------------------------------------------------
// `#[mcp_resource(...)]` and `#[mcp_prompt(...)]`.

pub const MCP_RESOURCE_ATTR: &str = "mcp_resource";
pub const MCP_PROMPT_ATTR: &str = "mcp_prompt";
pub const URI: &str = "uri";
pub const URI_TEMPLATE: &str = "uri_template";
pub const MIME_TYPE: &str = "mime_type";
pub const SIZE: &str = "size";
pub const AUDIENCE: &str = "audience";
pub const LAST_MODIFIED: &str = "last_modified";
pub const ICON: &str = "icon";

pub const MCP_RESOURCE: Keys = Keys {
    attr: MCP_RESOURCE_ATTR,
    keys: &[
        URI,
        URI_TEMPLATE,
        NAME,
        MIME_TYPE,
        GROUPS,
        VERSION,
        REMOVED_IN,
        SIZE,
        AUDIENCE,
        PRIORITY,
        LAST_MODIFIED,
        ICON,
        APP,
        CACHE,
        RATE_LIMIT,
        SCOPES,
        CRATE,
    ],
};

pub const MCP_PROMPT: Keys = Keys {
    attr: MCP_PROMPT_ATTR,
    keys: &[
        NAME, GROUPS, VERSION, REMOVED_IN, ICON, RATE_LIMIT, SCOPES, CRATE,
    ],
};

/// The arguments of `#[mcp_resource]` and `#[mcp_prompt]` (a prompt takes only `name`, the
/// method keys and `icon`).
#[derive(Default)]
pub struct McpArgs {
    /// The keys of the method behind it (`groups`, `version`, `removed_in`, `cache`,
    /// `crate`); its `name` is always `None`.
    pub method: RpcMethodArgs,
    /// The resource's or prompt's `name`.
    pub name: Option<Spanned<String>>,
    pub uri: Option<Spanned<String>>,
    pub uri_template: Option<Spanned<String>>,
    pub mime_type: Option<String>,
    pub size: Option<Spanned<u64>>,
    pub audience: Vec<Role>,
    /// The value and the expression as written (`-0.5` is two tokens).
    pub priority: Option<(f64, Expr)>,
    pub last_modified: Option<String>,
    pub icons: Vec<IconArgs>,
    /// `app` or `app(...)`: the resource is an MCP App's page.
    pub app: Option<AppArgs>,
}

/// `audience = ["user", "assistant"]`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

pub fn parse_mcp_resource(cx: &Ctxt, tokens: TokenStream) -> McpArgs {
    parse_mcp(cx, tokens, &MCP_RESOURCE)
}

pub fn parse_mcp_prompt(cx: &Ctxt, tokens: TokenStream) -> McpArgs {
    parse_mcp(cx, tokens, &MCP_PROMPT)
}

fn parse_mcp(cx: &Ctxt, tokens: TokenStream, spec: &Keys) -> McpArgs {
    let mut args = McpArgs::default();
    let m = &mut args.method;
    m.seen = parse_keys(cx, tokens, spec, |key, meta| {
        match key {
            NAME => args.name = Some(lit_str(meta)?),
            GROUPS => m.groups = Some(groups(meta)?),
            VERSION => m.version = Some(lit_u32(meta)?),
            REMOVED_IN => m.removed_in = Some(lit_u32(meta)?),
            CACHE => m.cache = Some(cache(meta)?),
            RATE_LIMIT => m.rate_limit = Some(rate_limit(meta)?),
            SCOPES => m.scopes = Some(scopes(meta)?),
            CRATE => m.krate = Some(krate(meta)?),
            URI => args.uri = Some(lit_str(meta)?),
            URI_TEMPLATE => args.uri_template = Some(lit_str(meta)?),
            MIME_TYPE => args.mime_type = Some(lit_str(meta)?.value),
            SIZE => args.size = Some(lit_u64(meta)?),
            AUDIENCE => args.audience = audience(meta)?,
            PRIORITY => args.priority = Some(lit_f64(meta)?),
            LAST_MODIFIED => args.last_modified = Some(lit_str(meta)?.value),
            ICON => args.icons.push(icon(meta)?),
            APP => {
                // Written, even if its keys are wrong: no "add `app`" is reported after their
                // error.
                args.app = Some(AppArgs {
                    span: Some(syn::spanned::Spanned::span(&meta.path)),
                    ..AppArgs::default()
                });
                args.app = Some(app(meta)?);
            }
            _ => unreachable!("a key of {}", spec.attr),
        }
        Ok(())
    });
    args
}

fn lit_u64(meta: &ParseNestedMeta) -> syn::Result<Spanned<u64>> {
    let lit: LitInt = meta.value()?.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!(
                "`{0}` expects an integer literal: `{0} = 1024`",
                path_name(&meta.path)
            ),
        )
    })?;
    Ok(Spanned {
        value: lit.base10_parse()?,
        span: lit.span(),
    })
}

/// A number literal, optionally negative, as an `f64`, and the expression: `priority = 0.5`
/// (its range is checked by `check`).
fn lit_f64(meta: &ParseNestedMeta) -> syn::Result<(f64, Expr)> {
    let e: Expr = meta.value()?.parse()?;
    fn value(e: &Expr) -> Option<syn::Result<f64>> {
        match e {
            Expr::Lit(l) => match &l.lit {
                syn::Lit::Float(f) => Some(f.base10_parse()),
                syn::Lit::Int(i) => Some(i.base10_parse()),
                _ => None,
            },
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
                value(&u.expr).map(|v| v.map(|v| -v))
            }
            _ => None,
        }
    }
    let v = value(&e).unwrap_or_else(|| {
        Err(syn::Error::new_spanned(
            &e,
            format!(
                "`{0}` expects a number literal: `{0} = 0.5`",
                path_name(&meta.path)
            ),
        ))
    })?;
    Ok((v, e))
}

/// `audience = ["user", "assistant"]`.
fn audience(meta: &ParseNestedMeta) -> syn::Result<Vec<Role>> {
    string_lits(meta, "[\"user\", \"assistant\"]")?
        .iter()
        .map(|lit| match lit.value().as_str() {
            "user" => Ok(Role::User),
            "assistant" => Ok(Role::Assistant),
            other => Err(syn::Error::new(
                lit.span(),
                format!("unknown audience `{other}`: expected \"user\" or \"assistant\""),
            )),
        })
        .collect()
}

// `icon(...)`, repeatable.

pub const SRC: &str = "src";
pub const SIZES: &str = "sizes";
pub const THEME: &str = "theme";

pub const ICON_KEYS: Keys = Keys {
    attr: ICON,
    keys: &[SRC, MIME_TYPE, SIZES, THEME],
};

/// `icon(src = "https://...", mime_type = "image/png", sizes = ["48x48"], theme = "dark")`.
pub struct IconArgs {
    pub src: String,
    pub mime_type: Option<String>,
    pub sizes: Vec<String>,
    pub theme: Option<String>,
}

fn icon(meta: &ParseNestedMeta) -> syn::Result<IconArgs> {
    let (mut src, mut mime_type, mut sizes, mut theme) = (None, None, Vec::new(), None);
    if !meta.input.peek(syn::token::Paren) {
        return Err(syn::Error::new_spanned(
            &meta.path,
            "`icon` needs its keys: `icon(src = \"https://example.com/icon.png\", mime_type = \
             \"image/png\", sizes = [\"48x48\"], theme = \"light\")`",
        ));
    }
    parse_nested_keys(meta, &ICON_KEYS, |key, m| {
        match key {
            SRC => src = Some(lit_str(m)?.value),
            MIME_TYPE => mime_type = Some(lit_str(m)?.value),
            SIZES => {
                sizes = string_lits(m, "[\"48x48\", \"any\"]")?
                    .iter()
                    .map(LitStr::value)
                    .collect();
            }
            THEME => {
                let t = lit_str(m)?;
                if !matches!(t.value.as_str(), "light" | "dark") {
                    return Err(syn::Error::new(
                        t.span,
                        format!(
                            "unknown icon theme `{}`: expected \"light\" or \"dark\"",
                            t.value
                        ),
                    ));
                }
                theme = Some(t.value);
            }
            _ => unreachable!("a key of ICON_KEYS"),
        }
        Ok(())
    })?;
    let src = src.ok_or_else(|| {
        syn::Error::new_spanned(
            &meta.path,
            "`icon` needs `src = \"...\"` (an `https:` or `data:` URI)",
        )
    })?;
    Ok(IconArgs {
        src,
        mime_type,
        sizes,
        theme,
    })
}

// `app` / `app(...)` of `#[mcp_resource]`.

pub const CONNECT_DOMAINS: &str = "connect_domains";
pub const RESOURCE_DOMAINS: &str = "resource_domains";
pub const FRAME_DOMAINS: &str = "frame_domains";
pub const BASE_URI_DOMAINS: &str = "base_uri_domains";
pub const PERMISSIONS: &str = "permissions";
pub const DOMAIN: &str = "domain";
pub const PREFERS_BORDER: &str = "prefers_border";

pub const APP_KEYS: Keys = Keys {
    attr: APP,
    keys: &[
        CONNECT_DOMAINS,
        RESOURCE_DOMAINS,
        FRAME_DOMAINS,
        BASE_URI_DOMAINS,
        PERMISSIONS,
        DOMAIN,
        PREFERS_BORDER,
    ],
};

/// A browser permission an app asks for (`permissions = ["camera"]`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AppPermission {
    Camera,
    Microphone,
    Geolocation,
    ClipboardWrite,
}

/// `app(connect_domains = [...], resource_domains = [...], frame_domains = [...],
/// base_uri_domains = [...], permissions = [...], domain = "...", prefers_border = true)`; each
/// key may be left out, and `app` alone asks for nothing.
#[derive(Default)]
pub struct AppArgs {
    /// The `app` key itself.
    pub span: Option<Span>,
    /// The CSP origin lists, in the order of the keys above.
    pub connect_domains: Vec<LitStr>,
    pub resource_domains: Vec<LitStr>,
    pub frame_domains: Vec<LitStr>,
    pub base_uri_domains: Vec<LitStr>,
    pub permissions: Vec<(AppPermission, Span)>,
    pub domain: Option<Spanned<String>>,
    pub prefers_border: Option<bool>,
}

impl AppArgs {
    /// Every CSP origin with its list's key.
    pub fn origins(&self) -> impl Iterator<Item = (&'static str, &LitStr)> {
        [
            (CONNECT_DOMAINS, &self.connect_domains),
            (RESOURCE_DOMAINS, &self.resource_domains),
            (FRAME_DOMAINS, &self.frame_domains),
            (BASE_URI_DOMAINS, &self.base_uri_domains),
        ]
        .into_iter()
        .flat_map(|(k, list)| list.iter().map(move |l| (k, l)))
    }
}

fn app(meta: &ParseNestedMeta) -> syn::Result<AppArgs> {
    let mut args = AppArgs {
        span: Some(syn::spanned::Spanned::span(&meta.path)),
        ..AppArgs::default()
    };
    if !meta.input.peek(syn::token::Paren) {
        if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
            return Err(meta.error(
                "`app` is written alone, or with what the page needs: `app(connect_domains = \
                 [\"https://api.example.com\"], prefers_border = true)`",
            ));
        }
        return Ok(args);
    }
    const ORIGINS: &str = "[\"https://api.example.com\"]";
    parse_nested_keys(meta, &APP_KEYS, |key, m| {
        match key {
            CONNECT_DOMAINS => args.connect_domains = string_lits(m, ORIGINS)?,
            RESOURCE_DOMAINS => args.resource_domains = string_lits(m, ORIGINS)?,
            FRAME_DOMAINS => args.frame_domains = string_lits(m, ORIGINS)?,
            BASE_URI_DOMAINS => args.base_uri_domains = string_lits(m, ORIGINS)?,
            PERMISSIONS => {
                for lit in string_lits(m, "[\"camera\", \"clipboardWrite\"]")? {
                    let p = match lit.value().as_str() {
                        "camera" => AppPermission::Camera,
                        "microphone" => AppPermission::Microphone,
                        "geolocation" => AppPermission::Geolocation,
                        "clipboardWrite" => AppPermission::ClipboardWrite,
                        other => {
                            return Err(syn::Error::new(
                                lit.span(),
                                format!(
                                    "unknown app permission `{other}`: expected \"camera\", \
                                     \"microphone\", \"geolocation\" or \"clipboardWrite\""
                                ),
                            ));
                        }
                    };
                    args.permissions.push((p, lit.span()));
                }
            }
            DOMAIN => args.domain = Some(lit_str(m)?),
            PREFERS_BORDER => args.prefers_border = Some(flag(m)?),
            _ => unreachable!("a key of APP_KEYS"),
        }
        Ok(())
    })?;
    Ok(args)
}

// ---------------------------------------------------------------------------------------------
// `#[param(...)]` on a parameter.

pub const PARAM_ATTR: &str = "param";
pub const DEFAULT: &str = "default";
pub const RENAME: &str = "rename";
pub const CONTEXT: &str = "context";
pub const MIN_LENGTH: &str = "min_length";
pub const MAX_LENGTH: &str = "max_length";
pub const LENGTH: &str = "length";
pub const MIN: &str = "min";
pub const MAX: &str = "max";
pub const RANGE: &str = "range";
pub const EXCLUSIVE_MIN: &str = "exclusive_min";
pub const EXCLUSIVE_MAX: &str = "exclusive_max";
pub const PATTERN: &str = "pattern";
pub const EMAIL: &str = "email";
pub const URL: &str = "url";
pub const UUID: &str = "uuid";
pub const ONE_OF: &str = "one_of";
pub const NOT_BLANK: &str = "not_blank";
pub const MIN_ITEMS: &str = "min_items";
pub const MAX_ITEMS: &str = "max_items";
pub const CHECK: &str = "check";
pub const HEADER: &str = "header";

/// An RFC 9110 token (a header field name), not empty.
fn is_header_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

pub const PARAM_KEYS: Keys = Keys {
    attr: PARAM_ATTR,
    keys: &[
        DEFAULT,
        RENAME,
        CONTEXT,
        MIN_LENGTH,
        MAX_LENGTH,
        LENGTH,
        MIN,
        MAX,
        RANGE,
        EXCLUSIVE_MIN,
        EXCLUSIVE_MAX,
        PATTERN,
        EMAIL,
        URL,
        UUID,
        ONE_OF,
        NOT_BLANK,
        MIN_ITEMS,
        MAX_ITEMS,
        CHECK,
        HEADER,
    ],
};

/// The keys of `length(...)` and `range(...)`.
pub const MIN_MAX_LENGTH: Keys = Keys {
    attr: LENGTH,
    keys: &[MIN, MAX],
};
pub const MIN_MAX_RANGE: Keys = Keys {
    attr: RANGE,
    keys: &[MIN, MAX],
};

#[derive(Default)]
pub struct ParamArgs {
    pub default: Option<Expr>,
    pub rename: Option<Spanned<String>>,
    pub context: bool,
    /// JSON Schema keywords of the constraints, in order: `("minLength", "1")`.
    pub keywords: Vec<(String, String)>,
    /// The `pattern = "..."` regular expressions as written (checked by `check`).
    pub patterns: Vec<Spanned<String>>,
    pub check: Option<Path>,
    /// `header = "Name"`: the argument is mirrored in the `Mcp-Param-Name` header (SEP-2243).
    pub header: Option<Spanned<String>>,
    /// `#[complete(with = f)]`, a separate attribute.
    pub complete: Option<CompleteArgs>,
}

impl ParamArgs {
    /// Whether a key only a JSON parameter can have was written: `default`, `rename`, a
    /// constraint or `check`.
    pub fn is_json(&self) -> bool {
        self.default.is_some()
            || self.rename.is_some()
            || !self.keywords.is_empty()
            || self.check.is_some()
    }
}

pub fn parse_param(cx: &Ctxt, attr: &Attribute) -> ParamArgs {
    let mut args = ParamArgs::default();
    let tokens = match &attr.meta {
        syn::Meta::List(list) => list.tokens.clone(),
        other => {
            cx.error_spanned_by(
                other,
                format!(
                    "expected `#[param(...)]` with one of: {}",
                    PARAM_KEYS.list()
                ),
            );
            return args;
        }
    };
    parse_keys(cx, tokens, &PARAM_KEYS, |key, meta| {
        let kw = &mut args.keywords;
        match key {
            DEFAULT => {
                if !meta.input.peek(Token![=]) {
                    return Err(syn::Error::new_spanned(
                        &meta.path,
                        "`default` needs a value: `#[param(default = 10)]` (an `Option<T>` \
                         parameter is optional without one)",
                    ));
                }
                let value = meta.value()?;
                // An expression that ends early would be reported at the whole attribute:
                // point at the key instead, and say what is expected.
                args.default = Some(value.parse().map_err(|e: syn::Error| {
                    syn::Error::new_spanned(
                        &meta.path,
                        format!("`default` needs a Rust expression: {e}"),
                    )
                })?);
            }
            RENAME => args.rename = Some(lit_str(meta)?),
            CONTEXT => {
                bare(meta, "#[param(context)]")?;
                args.context = true;
            }
            MIN_LENGTH => kw.push(("minLength".into(), number(meta)?)),
            MAX_LENGTH => kw.push(("maxLength".into(), number(meta)?)),
            LENGTH => min_max(meta, &MIN_MAX_LENGTH, "minLength", "maxLength", kw)?,
            MIN_ITEMS => kw.push(("minItems".into(), number(meta)?)),
            MAX_ITEMS => kw.push(("maxItems".into(), number(meta)?)),
            MIN => kw.push(("minimum".into(), number(meta)?)),
            MAX => kw.push(("maximum".into(), number(meta)?)),
            RANGE => min_max(meta, &MIN_MAX_RANGE, "minimum", "maximum", kw)?,
            EXCLUSIVE_MIN => kw.push(("exclusiveMinimum".into(), number(meta)?)),
            EXCLUSIVE_MAX => kw.push(("exclusiveMaximum".into(), number(meta)?)),
            PATTERN => {
                let p = lit_str(meta)?;
                kw.push(("pattern".into(), json_string(&p.value)));
                args.patterns.push(p);
            }
            EMAIL => kw.push(("format".into(), json_string("email"))),
            URL => kw.push(("format".into(), json_string("uri"))),
            UUID => kw.push(("format".into(), json_string("uuid"))),
            HEADER => {
                let h = lit_str(meta)?;
                if !is_header_token(&h.value) {
                    return Err(syn::Error::new(
                        h.span,
                        format!(
                            "`header` names an HTTP header (sent as `Mcp-Param-<name>`): `{}` is not a token of letters, digits and !#$%&'*+-.^_`|~",
                            h.value
                        ),
                    ));
                }
                kw.push(("x-mcp-header".into(), json_string(&h.value)));
                args.header = Some(h);
            }
            NOT_BLANK => {
                kw.push(("minLength".into(), "1".into()));
                kw.push(("pattern".into(), json_string("\\S")));
            }
            ONE_OF => kw.push(("enum".into(), literal_list(meta)?)),
            CHECK => {
                let value = meta.value()?;
                args.check = Some(value.parse().map_err(|e: syn::Error| {
                    syn::Error::new(
                        e.span(),
                        "`check` names a function by its path: `check = my_check` \
                         (`fn(&T) -> Result<(), E: Display>`), not a string",
                    )
                })?);
            }
            _ => unreachable!("a key of PARAM_KEYS"),
        }
        Ok(())
    });
    args
}

fn min_max(
    meta: &ParseNestedMeta,
    spec: &Keys,
    lo: &str,
    hi: &str,
    out: &mut Vec<(String, String)>,
) -> syn::Result<()> {
    parse_nested_keys(meta, spec, |key, m| {
        let keyword = if key == MIN { lo } else { hi };
        out.push((keyword.to_owned(), number(m)?));
        Ok(())
    })
}

/// A parameter's `#[param]` and `#[complete]` arguments and doc comments, removed from its
/// attributes; a second `#[param]` or `#[complete]` is an error.
pub fn take_param(cx: &Ctxt, attrs: &mut Vec<Attribute>) -> (ParamArgs, String) {
    let mut doc_attrs = Vec::new();
    let mut args = ParamArgs::default();
    let mut complete = None;
    let mut seen = false;
    attrs.retain(|a| {
        if a.path().is_ident("doc") {
            doc_attrs.push(a.clone());
            false
        } else if a.path().is_ident(PARAM_ATTR) {
            if seen {
                cx.error_spanned_by(a, "duplicate `#[param]` attribute: put every key in one");
            }
            seen = true;
            args = parse_param(cx, a);
            false
        } else if a.path().is_ident(COMPLETE_ATTR) {
            if complete.is_some() {
                cx.error_spanned_by(
                    a,
                    "duplicate `#[complete]` attribute: an argument has one completion function",
                );
            } else {
                complete = Some(parse_complete(cx, a));
            }
            false
        } else {
            true
        }
    });
    args.complete = complete;
    (args, doc_text(&doc_attrs))
}

// ---------------------------------------------------------------------------------------------
// `#[mcp_skill(...)]` on a unit struct.

pub const MCP_SKILL_ATTR: &str = "mcp_skill";
pub const DIR: &str = "dir";
pub const PREFIX: &str = "prefix";
pub const LANGUAGES: &str = "languages";

pub const MCP_SKILL: Keys = Keys {
    attr: MCP_SKILL_ATTR,
    keys: &[
        DIR, PREFIX, GROUPS, VERSION, REMOVED_IN, SCOPES, LANGUAGES, CRATE,
    ],
};

/// The arguments of `#[mcp_skill]`.
#[derive(Default)]
pub struct SkillArgs {
    pub dir: Option<Spanned<String>>,
    pub prefix: Option<Spanned<String>>,
    pub groups: Option<Spanned<Vec<Path>>>,
    pub version: Option<Spanned<u32>>,
    pub removed_in: Option<Spanned<u32>>,
    /// `scopes = [...]`: what a caller's identity must have to see and read the skill.
    pub scopes: Option<Spanned<Vec<LitStr>>>,
    /// `languages = ["uk"]`: the skill's translations, each in `<dir>.<lang>`.
    pub languages: Option<Spanned<Vec<LitStr>>>,
    pub krate: Option<Path>,
    /// The keys written, valid or not.
    pub seen: Vec<&'static str>,
}

pub fn parse_skill(cx: &Ctxt, tokens: TokenStream) -> SkillArgs {
    let mut args = SkillArgs::default();
    args.seen = parse_keys(cx, tokens, &MCP_SKILL, |key, meta| {
        match key {
            DIR => args.dir = Some(lit_str(meta)?),
            PREFIX => args.prefix = Some(lit_str(meta)?),
            GROUPS => args.groups = Some(groups(meta)?),
            VERSION => args.version = Some(lit_u32(meta)?),
            REMOVED_IN => args.removed_in = Some(lit_u32(meta)?),
            SCOPES => args.scopes = Some(scopes(meta)?),
            LANGUAGES => {
                args.languages = Some(Spanned {
                    value: string_lits(meta, "[\"uk\"]")?,
                    span: syn::spanned::Spanned::span(&meta.path),
                })
            }
            CRATE => args.krate = Some(krate(meta)?),
            _ => unreachable!("a key of MCP_SKILL"),
        }
        Ok(())
    });
    args
}

// ---------------------------------------------------------------------------------------------
// `#[complete(with = f)]` on a parameter of `#[mcp_resource]` or `#[mcp_prompt]`.

pub const COMPLETE_ATTR: &str = "complete";
pub const WITH: &str = "with";

pub const COMPLETE_KEYS: Keys = Keys {
    attr: COMPLETE_ATTR,
    keys: &[WITH],
};

/// `#[complete(with = f)]`: `with` is `None` when it is missing or bad (reported already: an
/// empty attribute as such, else the entry that is not `with = path`).
pub struct CompleteArgs {
    pub with: Option<Path>,
    /// The whole attribute, for errors about it.
    pub attr: TokenStream,
}

const COMPLETE_EXAMPLE: &str = "`#[complete(with = suggest_names)]`, with `fn \
                                suggest_names(req: &CompletionRequest) -> Vec<String>`";

fn parse_complete(cx: &Ctxt, a: &Attribute) -> CompleteArgs {
    let mut with = None;
    let tokens = match &a.meta {
        syn::Meta::List(l) if !l.tokens.is_empty() => l.tokens.clone(),
        _ => TokenStream::new(),
    };
    if tokens.is_empty() {
        cx.error_spanned_by(
            a,
            format!("`#[complete]` needs `with = function`: {COMPLETE_EXAMPLE}"),
        );
    }
    parse_keys(cx, tokens, &COMPLETE_KEYS, |key, meta| {
        match key {
            WITH => {
                let value = meta.value()?;
                with = Some(value.parse::<Path>().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        format!(
                            "`with` expects the path of a completion function: {COMPLETE_EXAMPLE}"
                        ),
                    )
                })?);
            }
            _ => unreachable!("a key of COMPLETE_KEYS"),
        }
        Ok(())
    });
    CompleteArgs {
        with,
        attr: a.to_token_stream(),
    }
}

// ---------------------------------------------------------------------------------------------
// `#[rpc_service(...)]`.

pub const CONCAT: &str = "concat";

pub const RPC_SERVICE: Keys = Keys {
    attr: "rpc_service",
    keys: &[NAME, CONCAT, GROUPS, VERSION, CRATE],
};

#[derive(Default)]
pub struct ServiceArgs {
    pub name: Option<Spanned<String>>,
    pub concat: Option<Spanned<String>>,
    pub groups: Option<Spanned<Vec<Path>>>,
    pub version: Option<Spanned<u32>>,
    pub krate: Option<Path>,
    /// Keys that were written, valid or not.
    pub seen: Vec<&'static str>,
}

impl ServiceArgs {
    /// Whether `key` was written (even with a bad value).
    pub fn has(&self, key: &str) -> bool {
        self.seen.contains(&key)
    }
}

pub fn parse_service(cx: &Ctxt, tokens: TokenStream) -> ServiceArgs {
    let mut args = ServiceArgs::default();
    args.seen = parse_keys(cx, tokens, &RPC_SERVICE, |key, meta| {
        match key {
            NAME => args.name = Some(lit_str(meta)?),
            CONCAT => args.concat = Some(lit_str(meta)?),
            GROUPS => args.groups = Some(groups(meta)?),
            VERSION => args.version = Some(lit_u32(meta)?),
            CRATE => args.krate = Some(krate(meta)?),
            _ => unreachable!("a key of RPC_SERVICE"),
        }
        Ok(())
    });
    args
}

// ---------------------------------------------------------------------------------------------
// `#[rpc_listener(...)]`.

pub const EVENT: &str = "event";
pub const PRIORITY: &str = "priority";

pub const RPC_LISTENER: Keys = Keys {
    attr: "rpc_listener",
    keys: &[EVENT, PRIORITY, CRATE],
};

#[derive(Default)]
pub struct ListenerArgs {
    pub event: Option<Spanned<String>>,
    pub priority: i32,
    pub krate: Option<Path>,
    /// Keys that were written, valid or not.
    pub seen: Vec<&'static str>,
}

pub fn parse_listener(cx: &Ctxt, tokens: TokenStream) -> ListenerArgs {
    let mut args = ListenerArgs::default();
    args.seen = parse_keys(cx, tokens, &RPC_LISTENER, |key, meta| {
        match key {
            EVENT => args.event = Some(lit_str(meta)?),
            PRIORITY => args.priority = lit_i32(meta)?,
            CRATE => args.krate = Some(krate(meta)?),
            _ => unreachable!("a key of RPC_LISTENER"),
        }
        Ok(())
    });
    args
}

// ---------------------------------------------------------------------------------------------
// `#[rpc(...)]` of `#[derive(RpcError)]`.

pub const RPC_ATTR: &str = "rpc";
pub const CODE: &str = "code";

pub const RPC_ERROR: Keys = Keys {
    attr: RPC_ATTR,
    keys: &[CODE, CRATE],
};

// ---------------------------------------------------------------------------------------------
// Attributes in general.

/// Whether an attribute's last path segment is `name` (`mcp_tool`, `mcp_runtime::mcp_tool`).
pub fn attr_is(a: &Attribute, name: &str) -> bool {
    a.path().segments.last().is_some_and(|s| s.ident == name)
}

/// The text of `#[doc = "..."]` attributes, one leading space stripped per line.
pub fn doc_text(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for a in attrs {
        if !a.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &a.meta
            && let Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            let v = s.value();
            for line in v.split('\n') {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    lines.join("\n").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let rpc = RPC_METHOD.keys;
        let tool = MCP_TOOL.keys;
        let param = PARAM_KEYS.keys;
        assert_eq!(suggest("nmae", rpc), Some("name"));
        assert_eq!(suggest("group", rpc), Some("groups"));
        assert_eq!(suggest("removed", rpc), Some("removed_in"));
        assert_eq!(suggest("title", rpc), None);
        assert_eq!(suggest("readonly_hint", tool), Some("read_only_hint"));
        assert_eq!(suggest("defualt", param), Some("default"));
        assert_eq!(suggest("bogus", param), None);
        assert_eq!(suggest("read_only", tool), Some("read_only_hint"));
        assert_eq!(suggest("open_world", tool), Some("open_world_hint"));
        assert_eq!(suggest("x", param), None);
        assert_eq!(suggest("evnt", RPC_LISTENER.keys), Some("event"));
    }

    #[test]
    fn key_lists() {
        assert_eq!(
            RPC_METHOD.list(),
            "name, groups, version, removed_in, cache, lock, rate_limit, transform, scopes, crate"
        );
        assert_eq!(
            PARAM_KEYS.list(),
            "default, rename, context, min_length, max_length, length, min, max, range, \
             exclusive_min, exclusive_max, pattern, email, url, uuid, one_of, not_blank, \
             min_items, max_items, check, header"
        );
    }

    #[test]
    fn distances() {
        assert_eq!(edit_distance("name", "name"), 0);
        assert_eq!(edit_distance("nmae", "name"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
