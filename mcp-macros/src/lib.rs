//! Procedural macros of `mcp-runtime`. Use them through `mcp_runtime::prelude`, never directly:
//! the generated code refers to `::mcp_runtime::__private` (override with `crate = "..."`).
//!
//! Each macro parses its attributes into one checked model (`model::Method`), accumulates
//! every error at the span of the user's token, and on error re-emits the user's item so other
//! diagnostics and IDEs keep working.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{ToTokens, quote};
use syn::{ImplItem, ItemFn, ItemImpl, parse_macro_input};

mod attr;
mod ctxt;
mod derive_error;
mod expand;
mod listener;
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
    let mut func = match syn::parse::<ItemFn>(item.clone()) {
        Ok(f) => f,
        Err(e) => return not_a_fn(item, "rpc_method", e),
    };
    let cx = Ctxt::new();
    let parsed = attr::parse_rpc_method(&cx, args.clone());
    // Errors about the attribute as a whole (a missing key) cover its arguments, or the whole
    // attribute when it has none.
    let method = model::build(&cx, &mut func.sig, &mut func.attrs, parsed, None, args);
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
    let mut func = match syn::parse::<ItemFn>(item.clone()) {
        Ok(f) => f,
        Err(e) => return not_a_fn(item, "mcp_tool", e),
    };
    // `#[mcp_tool]` written above `#[rpc_method]`: move it below, where rpc_method consumes it.
    if let Some(pos) = func.attrs.iter().position(|a| attr_is(a, "rpc_method")) {
        let this: syn::Attribute = syn::parse_quote!(#[::mcp_runtime::mcp_tool(#args)]);
        func.attrs.insert(pos + 1, this);
        return func.into_token_stream().into();
    }
    let err = syn::Error::new(
        Span::call_site(),
        "`#[mcp_tool]` needs `#[rpc_method]` on the same function: tool annotations describe an RPC \
         method of an MCP group; add `#[rpc_method(groups = [...])]` to this function",
    )
    .to_compile_error();
    quote!(#func #err).into()
}

/// The error of a function attribute on something else; the item is re-emitted unchanged.
fn not_a_fn(item: TokenStream, attr: &str, parse_error: syn::Error) -> TokenStream {
    let item = TokenStream2::from(item);
    let err = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(other) => syn::Error::new_spanned(
            item_head(&other),
            format!(
                "`#[{attr}]` goes on a function, not on {}",
                item_kind(&other)
            ),
        ),
        // Not an item at all (e.g. a fn without a body, in a trait): syn's own message.
        Err(_) => parse_error,
    };
    let err = err.to_compile_error();
    quote!(#item #err).into()
}

/// What an item is, for messages: "a struct", "an impl block".
fn item_kind(item: &syn::Item) -> &'static str {
    match item {
        syn::Item::Struct(_) => "a struct",
        syn::Item::Enum(_) => "an enum",
        syn::Item::Union(_) => "a union",
        syn::Item::Impl(i) if i.trait_.is_some() => "a trait impl",
        syn::Item::Impl(_) => "an impl block",
        syn::Item::Trait(_) => "a trait",
        syn::Item::Fn(_) => "a function",
        syn::Item::Mod(_) => "a module",
        syn::Item::Const(_) => "a const",
        syn::Item::Static(_) => "a static",
        syn::Item::Type(_) => "a type alias",
        syn::Item::Use(_) => "a use declaration",
        _ => "this item",
    }
}

fn head(keyword: &dyn ToTokens, name: &syn::Ident) -> TokenStream2 {
    quote!(#keyword #name)
}

/// An item's keyword and name (`struct Svc`), for errors about the item as a whole.
fn item_head(item: &syn::Item) -> TokenStream2 {
    use syn::Item;
    match item {
        Item::Struct(i) => head(&i.struct_token, &i.ident),
        Item::Enum(i) => head(&i.enum_token, &i.ident),
        Item::Union(i) => head(&i.union_token, &i.ident),
        Item::Trait(i) => head(&i.trait_token, &i.ident),
        Item::Impl(i) => match &i.trait_ {
            Some((_, path, for_token)) => quote!(#path #for_token),
            None => i.impl_token.into_token_stream(),
        },
        Item::Fn(i) => head(&i.sig.fn_token, &i.sig.ident),
        Item::Mod(i) => head(&i.mod_token, &i.ident),
        Item::Const(i) => head(&i.const_token, &i.ident),
        Item::Static(i) => head(&i.static_token, &i.ident),
        Item::Type(i) => head(&i.type_token, &i.ident),
        other => other.into_token_stream().into_iter().take(1).collect(),
    }
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
        Err(e) => {
            let err = match syn::parse2::<syn::Item>(item2.clone()) {
                Ok(other) => {
                    let ty = match &other {
                        syn::Item::Struct(i) => i.ident.to_string(),
                        syn::Item::Enum(i) => i.ident.to_string(),
                        _ => "MyService".to_owned(),
                    };
                    syn::Error::new_spanned(
                        item_head(&other),
                        format!(
                            "`#[rpc_service]` goes on an inherent impl block, not on {}: \
                             `#[rpc_service] impl {ty} {{ #[rpc_method] fn ping(&self) {{}} }}`",
                            item_kind(&other)
                        ),
                    )
                }
                Err(_) => e,
            }
            .to_compile_error();
            return quote!(#item2 #err).into();
        }
    };
    let cx = Ctxt::new();
    let sargs = attr::parse_service(&cx, args);
    if let Some((_, path, for_token)) = &imp.trait_ {
        let ty = &imp.self_ty;
        cx.error_spanned_by(
            quote!(#path #for_token),
            format!(
                "`#[rpc_service]` goes on an inherent impl, not a trait impl: put the RPC methods \
                 in `impl {} {{ ... }}` (they may call the trait's methods)",
                quote!(#ty)
            ),
        );
    }
    if !imp.generics.params.is_empty() {
        cx.error_spanned_by(&imp.generics, "an `#[rpc_service]` impl cannot be generic");
    }
    let type_name = match &*imp.self_ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    let (groups_written, version_written) = (sargs.has("groups"), sargs.has("version"));
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
        groups_written,
        groups: sargs.groups.map(|g| {
            if g.value.is_empty() {
                cx.syn_error(syn::Error::new(
                    g.span,
                    "`groups` cannot be empty: name at least one API group, e.g. `groups = [MCP]`",
                ));
            }
            g.value
        }),
        version_written,
        version: match sargs.version {
            Some(v) if v.value == 0 => {
                cx.syn_error(syn::Error::new(
                    v.span,
                    "versions start at 1: `version = 1` is the first version",
                ));
                None
            }
            v => v.map(|v| v.value),
        },
        krate: sargs.krate,
    };
    let mut methods = Vec::new();
    for item in imp.items.iter_mut() {
        let ImplItem::Fn(f) = item else { continue };
        let Some(pos) = f.attrs.iter().position(|a| attr_is(a, "rpc_method")) else {
            continue;
        };
        let a = f.attrs.remove(pos);
        let (tokens, whole) = match &a.meta {
            syn::Meta::List(l) if !l.tokens.is_empty() => (l.tokens.clone(), l.tokens.clone()),
            other => (TokenStream2::new(), other.to_token_stream()),
        };
        let parsed = attr::parse_rpc_method(&cx, tokens);
        if let Some(m) = model::build(&cx, &mut f.sig, &mut f.attrs, parsed, Some(&service), whole)
        {
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

/// Registers a function as a listener of a pipeline event: `#[rpc_listener(event =
/// "post_response", priority = 10)]` on `async fn f(event: &mut Event<'_>) -> Result<(), RpcError>`
/// (or a sync fn). Events: request, pre_execute, post_execute, response, error, post_response.
#[proc_macro_attribute]
pub fn rpc_listener(args: TokenStream, item: TokenStream) -> TokenStream {
    let func = parse_macro_input!(item as ItemFn);
    listener::expand(args.into(), func).into()
}

/// Converts an error type into `RpcError`: `#[rpc(code = -32404)]` on the type or on each
/// variant (default -32603). The `Display` text is the message, the type name the exception.
#[proc_macro_derive(RpcError, attributes(rpc))]
pub fn derive_rpc_error(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as syn::DeriveInput);
    derive_error::expand(&input).into()
}
