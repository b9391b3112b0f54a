//! The macros on `proc_macro2` tokens: parse → model → check → expand, with every error of the
//! first three steps accumulated in one `Ctxt` and checked before anything is expanded. On
//! error the user's item is re-emitted, so other diagnostics and IDEs keep working.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::{ImplItem, ItemFn, ItemImpl};

use crate::attr::{self, RPC_METHOD_ATTR, attr_is};
use crate::ctxt::Ctxt;
use crate::model::Kind;
use crate::{check, derive_error, expand, listener, model, skill};

const RPC_SERVICE_ATTR: &str = "rpc_service";
const RPC_LISTENER_ATTR: &str = "rpc_listener";

/// `#[rpc_method(...)]` on a function.
pub fn rpc_method(args: TokenStream, item: TokenStream) -> TokenStream {
    on_fn(
        RPC_METHOD_ATTR,
        args,
        item,
        expand::method,
        |cx, func, args| {
            let parsed = attr::parse_rpc_method(cx, args.clone());
            let method = model::build(
                cx,
                Kind::Method,
                &mut func.sig,
                &mut func.attrs,
                parsed,
                None,
                args,
            );
            check::method(cx, &method);
            method
        },
    )
}

/// `#[mcp_resource(...)]` on a function.
pub fn mcp_resource(args: TokenStream, item: TokenStream) -> TokenStream {
    on_fn(
        attr::MCP_RESOURCE_ATTR,
        args,
        item,
        expand::resource,
        |cx, func, args| {
            let parsed = attr::parse_mcp_resource(cx, args.clone());
            let resource = model::Resource::build(cx, &mut func.sig, &mut func.attrs, parsed, args);
            check::resource(cx, &resource);
            resource
        },
    )
}

/// `#[mcp_prompt(...)]` on a function.
pub fn mcp_prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    on_fn(
        attr::MCP_PROMPT_ATTR,
        args,
        item,
        expand::prompt,
        |cx, func, args| {
            let parsed = attr::parse_mcp_prompt(cx, args.clone());
            let prompt = model::Prompt::build(cx, &mut func.sig, &mut func.attrs, parsed, args);
            check::prompt(cx, &prompt);
            prompt
        },
    )
}

/// An attribute on a function: parse, build and check (`build`, which strips the attributes it
/// consumes from the function), then expand, or the errors. Errors about the attribute as a
/// whole (a missing key) cover its arguments, or the whole attribute when it has none.
fn on_fn<M>(
    attr: &str,
    args: TokenStream,
    item: TokenStream,
    expand: fn(&M) -> TokenStream,
    build: impl FnOnce(&Ctxt, &mut ItemFn, TokenStream) -> M,
) -> TokenStream {
    let mut func = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(f) => f,
        Err(e) => return not_a_fn(item, attr, e),
    };
    let cx = Ctxt::new();
    let model = build(&cx, &mut func, args);
    match cx.check() {
        Ok(()) => {
            let reg = expand(&model);
            quote!(#func #reg)
        }
        Err(e) => {
            let errors = e.to_compile_error();
            quote!(#func #errors)
        }
    }
}

/// `#[mcp_tool(...)]`: consumed by the `#[rpc_method]` below it; one above it is moved below.
pub fn mcp_tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut func = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(f) => f,
        Err(e) => return not_a_fn(item, attr::MCP_TOOL_ATTR, e),
    };
    // `#[mcp_tool]` written above `#[rpc_method]`: move it below, where rpc_method consumes it.
    if let Some(pos) = func.attrs.iter().position(|a| attr_is(a, RPC_METHOD_ATTR)) {
        let this: syn::Attribute = syn::parse_quote!(#[::mcp_runtime::mcp_tool(#args)]);
        func.attrs.insert(pos + 1, this);
        return func.into_token_stream();
    }
    let err = syn::Error::new(
        Span::call_site(),
        "`#[mcp_tool]` needs `#[rpc_method]` on the same function: tool annotations describe an RPC \
         method of an MCP group; add `#[rpc_method(groups = [...])]` to this function",
    )
    .to_compile_error();
    quote!(#func #err)
}

/// `#[rpc_service(...)]` on an inherent impl block.
pub fn rpc_service(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut imp: ItemImpl = match syn::parse2(item.clone()) {
        Ok(i) => i,
        Err(e) => return not_an_impl(item, e),
    };
    let cx = Ctxt::new();
    let service = model::Service::build(&imp, attr::parse_service(&cx, args));
    check::service(&cx, &service);
    let mut methods = Vec::new();
    for item in imp.items.iter_mut() {
        let ImplItem::Fn(f) = item else { continue };
        let Some(pos) = f.attrs.iter().position(|a| attr_is(a, RPC_METHOD_ATTR)) else {
            continue;
        };
        let a = f.attrs.remove(pos);
        let (tokens, whole) = match &a.meta {
            syn::Meta::List(l) if !l.tokens.is_empty() => (l.tokens.clone(), l.tokens.clone()),
            other => (TokenStream::new(), other.to_token_stream()),
        };
        let parsed = attr::parse_rpc_method(&cx, tokens);
        let m = model::build(
            &cx,
            Kind::Method,
            &mut f.sig,
            &mut f.attrs,
            parsed,
            Some(&service),
            whole,
        );
        check::method(&cx, &m);
        methods.push(m);
    }
    if let Err(e) = cx.check() {
        let errors = e.to_compile_error();
        return quote!(#imp #errors);
    }
    let regs = methods.iter().map(expand::method);
    quote!(#imp #(#regs)*)
}

/// `#[rpc_listener(...)]` on a function.
pub fn rpc_listener(args: TokenStream, item: TokenStream) -> TokenStream {
    match syn::parse2::<ItemFn>(item.clone()) {
        Ok(func) => listener::expand(args, func),
        Err(e) => not_a_fn(item, RPC_LISTENER_ATTR, e),
    }
}

/// `#[mcp_skill]`: on a unit struct.
pub fn mcp_skill(args: TokenStream, item: TokenStream) -> TokenStream {
    match syn::parse2::<syn::ItemStruct>(item.clone()) {
        Ok(s) => skill::expand(args, s),
        Err(_) => {
            let err = syn::Error::new_spanned(
                &item,
                "`#[mcp_skill]` goes on a unit struct that names the skill: `pub struct Shopping;`",
            );
            let errors = err.to_compile_error();
            quote!(#item #errors)
        }
    }
}

/// `#[derive(RpcError)]`.
pub fn derive_rpc_error(input: TokenStream) -> TokenStream {
    match syn::parse2::<syn::DeriveInput>(input) {
        Ok(input) => derive_error::expand(&input),
        Err(e) => e.to_compile_error(),
    }
}

/// The error of a function attribute on something else; the item is re-emitted unchanged.
fn not_a_fn(item: TokenStream, attr: &str, parse_error: syn::Error) -> TokenStream {
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
    quote!(#item #err)
}

/// The error of `#[rpc_service]` on something other than an impl block.
fn not_an_impl(item: TokenStream, parse_error: syn::Error) -> TokenStream {
    let err = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(other) => {
            let ty = match &other {
                syn::Item::Struct(i) => i.ident.to_string(),
                syn::Item::Enum(i) => i.ident.to_string(),
                _ => "MyService".to_owned(),
            };
            syn::Error::new_spanned(
                item_head(&other),
                format!(
                    "`#[{RPC_SERVICE_ATTR}]` goes on an inherent impl block, not on {}: \
                     `#[{RPC_SERVICE_ATTR}] impl {ty} {{ #[{RPC_METHOD_ATTR}] fn ping(&self) {{}} }}`",
                    item_kind(&other)
                ),
            )
        }
        Err(_) => parse_error,
    }
    .to_compile_error();
    quote!(#item #err)
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

fn head(keyword: &dyn ToTokens, name: &syn::Ident) -> TokenStream {
    quote!(#keyword #name)
}

/// An item's keyword and name (`struct Svc`), for errors about the item as a whole.
fn item_head(item: &syn::Item) -> TokenStream {
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
