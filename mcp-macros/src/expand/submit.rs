//! The `MethodDef` submitted to the registry with `inventory`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::Cx;
use super::params::Params;

fn opt_bool(v: Option<bool>) -> TokenStream {
    match v {
        Some(b) => quote!(::core::option::Option::Some(#b)),
        None => quote!(::core::option::Option::None),
    }
}

pub(super) fn method_def(cx: &Cx, params: &Params) -> TokenStream {
    let (m, rt) = (cx.m, &cx.rt);
    let name = &m.name;
    let docs = &m.docs;
    let since = m.since;
    let removed_in = match &m.removed_in {
        Some(r) => {
            let r = r.value;
            quote!(::core::option::Option::Some(#r))
        }
        None => quote!(::core::option::Option::None),
    };
    let param_defs = super::params::params_expr(params);
    let annotations = annotations(cx);
    let handler = if m.is_async {
        quote!(#rt::Handler::Async(__call))
    } else {
        quote!(#rt::Handler::Sync(__call))
    };
    let cache = cache(cx);
    let lock = lock(cx);
    let location = location(cx);
    quote! {
        #rt::inventory::submit! {
            #rt::MethodDef {
                name: #name,
                groups: __RPC_GROUPS,
                since: #since,
                removed_in: #removed_in,
                docs: #docs,
                params: #param_defs,
                annotations: #annotations,
                output_schema: __output_schema,
                handler: #handler,
                cache: #cache,
                lock: #lock,
                location: #location,
            }
        }
    }
}

/// `ToolAnnotations` of `#[mcp_tool(...)]`.
fn annotations(cx: &Cx) -> TokenStream {
    let (tool, rt) = (&cx.m.tool, &cx.rt);
    let title = match &tool.title {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let (ro, de, id, ow) = (
        opt_bool(tool.read_only_hint),
        opt_bool(tool.destructive_hint),
        opt_bool(tool.idempotent_hint),
        opt_bool(tool.open_world_hint),
    );
    quote! {
        #rt::ToolAnnotations {
            title: #title,
            read_only_hint: #ro,
            destructive_hint: #de,
            idempotent_hint: #id,
            open_world_hint: #ow,
        }
    }
}

/// `CachePolicy` of `cache(...)`.
fn cache(cx: &Cx) -> TokenStream {
    let rt = &cx.rt;
    match &cx.m.cache {
        Some(c) => {
            let ttl = c.ttl_ms;
            let envs = match &c.envs {
                Some(list) => quote!(::core::option::Option::Some(&[#(#list),*])),
                None => quote!(::core::option::Option::None),
            };
            quote!(::core::option::Option::Some(#rt::CachePolicy { ttl_ms: #ttl, envs: #envs }))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// `LockPolicy` of `lock(...)`.
fn lock(cx: &Cx) -> TokenStream {
    let rt = &cx.rt;
    match &cx.m.lock {
        Some(l) => {
            let (ttl, wait) = (l.ttl_ms, l.wait_ms);
            let param = match &l.param {
                Some(p) => {
                    let p = &p.value;
                    quote!(::core::option::Option::Some(#p))
                }
                None => quote!(::core::option::Option::None),
            };
            quote!(::core::option::Option::Some(#rt::LockPolicy { param: #param, ttl_ms: #ttl, wait_ms: #wait }))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// `SourceLocation`: the file, the line of the function's name and its Rust path.
fn location(cx: &Cx) -> TokenStream {
    let (m, rt) = (cx.m, &cx.rt);
    let ident = &m.ident;
    let line = quote_spanned!(m.ident.span()=> ::core::line!());
    let rust_path = match &m.self_ty {
        Some(t) => quote!(::core::concat!(
            ::core::module_path!(),
            "::",
            ::core::stringify!(#t),
            "::",
            ::core::stringify!(#ident)
        )),
        None => quote!(::core::concat!(
            ::core::module_path!(),
            "::",
            ::core::stringify!(#ident)
        )),
    };
    quote!(#rt::SourceLocation { file: ::core::file!(), line: #line, rust_path: #rust_path })
}
