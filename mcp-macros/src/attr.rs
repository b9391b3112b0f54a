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

pub const RPC_METHOD_KEYS: &str = "name, groups, version, removed_in, crate";
pub const MCP_TOOL_KEYS: &str =
    "title, read_only_hint, destructive_hint, idempotent_hint, open_world_hint";
pub const PARAM_KEYS: &str = "default, rename, context";
pub const SERVICE_KEYS: &str = "name, concat, groups, version, crate";

#[derive(Default)]
pub struct RpcMethodArgs {
    pub name: Option<Spanned<String>>,
    pub groups: Option<Vec<Path>>,
    pub version: Option<Spanned<u32>>,
    pub removed_in: Option<Spanned<u32>>,
    pub krate: Option<Path>,
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
}

#[derive(Default)]
pub struct ServiceArgs {
    pub name: Option<Spanned<String>>,
    pub concat: Option<Spanned<String>>,
    pub groups: Option<Vec<Path>>,
    pub version: Option<Spanned<u32>>,
    pub krate: Option<Path>,
}

fn lit_str(meta: &ParseNestedMeta) -> syn::Result<Spanned<String>> {
    let lit: LitStr = meta.value()?.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!(
                "expected a string literal: `{} = \"...\"`",
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
                "expected an integer literal: `{} = 1`",
                path_name(&meta.path)
            ),
        )
    })?;
    Ok(Spanned {
        value: lit.base10_parse()?,
        span: lit.span(),
    })
}

fn groups(meta: &ParseNestedMeta) -> syn::Result<Vec<Path>> {
    let value = meta.value()?;
    if !value.peek(syn::token::Bracket) {
        return Err(value.error("expected a list of group constants: `groups = [MCP, INTERNAL]`"));
    }
    let content;
    syn::bracketed!(content in value);
    let list = Punctuated::<Path, Token![,]>::parse_terminated(&content)?;
    Ok(list.into_iter().collect())
}

fn krate(meta: &ParseNestedMeta) -> syn::Result<Path> {
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
                    "expected `true` or `false`: `{} = true`",
                    path_name(&meta.path)
                ),
            )
        })?;
        Ok(lit.value)
    } else {
        Ok(true)
    }
}

pub fn path_name(path: &Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

fn unknown(meta: &ParseNestedMeta, attr: &str, keys: &str) -> syn::Error {
    meta.error(format!(
        "unknown `{attr}` key `{}`; expected one of: {keys}",
        path_name(&meta.path)
    ))
}

/// Runs `parse_nested_meta` and records errors in `cx`; keeps going after a bad key.
fn parse_list(
    cx: &Ctxt,
    tokens: proc_macro2::TokenStream,
    mut each: impl FnMut(&ParseNestedMeta) -> syn::Result<()>,
) {
    let parser = syn::meta::parser(|meta| {
        if let Err(e) = each(&meta) {
            cx.syn_error(e);
            // Skip the rest of this entry so the next keys are still checked.
            if meta.input.peek(Token![=]) {
                let _ = meta.value().and_then(|v| v.parse::<Expr>());
            } else if meta.input.peek(syn::token::Paren) {
                let _ = meta.parse_nested_meta(|m| {
                    let _ = m.value().and_then(|v| v.parse::<Expr>());
                    Ok(())
                });
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
        } else {
            return Err(unknown(meta, "rpc_method", RPC_METHOD_KEYS));
        }
        Ok(())
    });
    args
}

pub fn parse_mcp_tool(cx: &Ctxt, tokens: proc_macro2::TokenStream) -> McpToolArgs {
    let mut args = McpToolArgs::default();
    parse_list(cx, tokens, |meta| {
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
    parse_list(cx, tokens, |meta| {
        if meta.path.is_ident("default") {
            if !meta.input.peek(Token![=]) {
                return Err(meta.error("expected a value: `default = EXPR`"));
            }
            args.default = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("rename") {
            args.rename = Some(lit_str(meta)?);
        } else if meta.path.is_ident("context") {
            args.context = true;
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
