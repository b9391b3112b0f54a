//! Procedural macros of `mcp-runtime`. Use them through `mcp_runtime::prelude`, never directly:
//! the generated code refers to `::mcp_runtime::__private` (override with `crate = "..."`).
//!
//! Each macro parses its attributes into one checked model ([`model::Method`]), accumulates
//! every error at the span of the user's token, and on error re-emits the user's item so other
//! diagnostics and IDEs keep working.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{ToTokens, quote};
use syn::spanned::Spanned;
use syn::{ImplItem, ItemFn, ItemImpl, parse_macro_input};

mod attr;
mod ctxt;
mod derive_error;
mod expand;
mod model;

use ctxt::Ctxt;
use model::attr_is;

/// Publishes a function as an RPC method (and, in MCP groups, as an MCP tool).
///
/// Keys: `name = "Svc.method"`, `groups = [GROUP, ...]`, `version = N` (first version, default 1),
/// `removed_in = M`, `crate = "path"`. Parameters take `#[param(default = EXPR, rename = "..",
/// context)]` and doc comments (their descriptions).
#[proc_macro_attribute]
pub fn rpc_method(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = TokenStream2::from(args);
    let attr_span = if args.is_empty() {
        Span::call_site()
    } else {
        args.span()
    };
    let mut func = parse_macro_input!(item as ItemFn);
    let cx = Ctxt::new();
    let parsed = attr::parse_rpc_method(&cx, args);
    let method = model::build(&cx, &mut func.sig, &mut func.attrs, parsed, None, attr_span);
    match method {
        Some(m) if !cx.has_errors() => {
            let reg = expand::method(&m);
            quote!(#func #reg).into()
        }
        _ => {
            let errors = cx.into_compile_errors();
            quote!(#func #errors).into()
        }
    }
}

/// MCP tool annotations of an `#[rpc_method]`: `read_only_hint`, `destructive_hint`,
/// `idempotent_hint`, `open_world_hint` (each `key` or `key = bool`) and `title = ".."`.
/// Hints left out are left out of the tool. It never affects publication.
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = TokenStream2::from(args);
    let mut func = parse_macro_input!(item as ItemFn);
    // `#[mcp_tool]` written above `#[rpc_method]`: move it below, where rpc_method consumes it.
    if let Some(pos) = func.attrs.iter().position(|a| attr_is(a, "rpc_method")) {
        let this: syn::Attribute = syn::parse_quote!(#[::mcp_runtime::mcp_tool(#args)]);
        func.attrs.insert(pos + 1, this);
        return func.into_token_stream().into();
    }
    let err = syn::Error::new(
        Span::call_site(),
        "`#[mcp_tool]` needs `#[rpc_method]` on the same function: tool annotations describe an RPC \
         method of an MCP group",
    )
    .to_compile_error();
    quote!(#func #err).into()
}

/// Publishes the `#[rpc_method]`s of an impl block; the instance comes from the server's state
/// (`ServerBuilder::state`).
///
/// Keys: `name = "Catalog"` (default: the type name), `concat = "."` (between name and method),
/// `groups = [...]` and `version = N` (defaults for its methods), `crate = "path"`.
#[proc_macro_attribute]
pub fn rpc_service(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = TokenStream2::from(args);
    let item2 = TokenStream2::from(item.clone());
    let mut imp: ItemImpl = match syn::parse2(item2.clone()) {
        Ok(i) => i,
        Err(_) => {
            let err = syn::Error::new(
                Span::call_site(),
                "`#[rpc_service]` goes on an inherent impl block: `#[rpc_service] impl Catalog { ... }`",
            )
            .to_compile_error();
            return quote!(#item2 #err).into();
        }
    };
    let cx = Ctxt::new();
    let sargs = attr::parse_service(&cx, args);
    if let Some((_, path, _)) = &imp.trait_ {
        cx.error_spanned_by(
            path,
            "`#[rpc_service]` goes on an inherent impl, not a trait impl",
        );
    }
    if !imp.generics.params.is_empty() {
        cx.error_spanned_by(&imp.generics, "an `#[rpc_service]` impl cannot be generic");
    }
    let type_name = match &*imp.self_ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    let service = model::Service {
        self_ty: (*imp.self_ty).clone(),
        name: sargs
            .name
            .map(|n| n.value)
            .or(type_name)
            .unwrap_or_default(),
        concat: sargs
            .concat
            .map(|c| c.value)
            .unwrap_or_else(|| ".".to_owned()),
        groups: sargs.groups,
        version: sargs.version.map(|v| v.value),
        krate: sargs.krate,
    };
    let mut methods = Vec::new();
    for item in imp.items.iter_mut() {
        let ImplItem::Fn(f) = item else { continue };
        let Some(pos) = f.attrs.iter().position(|a| attr_is(a, "rpc_method")) else {
            continue;
        };
        let a = f.attrs.remove(pos);
        let (tokens, span) = match &a.meta {
            syn::Meta::List(l) => (l.tokens.clone(), l.tokens.span()),
            other => (TokenStream2::new(), other.span()),
        };
        let parsed = attr::parse_rpc_method(&cx, tokens);
        if let Some(m) = model::build(&cx, &mut f.sig, &mut f.attrs, parsed, Some(&service), span) {
            methods.push(m);
        }
    }
    if cx.has_errors() {
        let errors = cx.into_compile_errors();
        return quote!(#imp #errors).into();
    }
    let regs = methods.iter().map(expand::method);
    quote!(#imp #(#regs)*).into()
}

/// Converts an error type into `RpcError`: `#[rpc(code = -32404)]` on the type or on each
/// variant (default -32603). The `Display` text is the message, the type name the exception.
#[proc_macro_derive(RpcError, attributes(rpc))]
pub fn derive_rpc_error(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as syn::DeriveInput);
    derive_error::expand(&input).into()
}
