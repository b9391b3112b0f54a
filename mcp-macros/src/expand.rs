//! Code generation: the registration record, schemas and dispatch function of a method.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Lit, LitStr};

use crate::attr::path_name;
use crate::model::{Method, NameOrigin, ParamKind, Ret};

fn opt_bool(v: Option<bool>) -> TokenStream {
    match v {
        Some(b) => quote!(::core::option::Option::Some(#b)),
        None => quote!(::core::option::Option::None),
    }
}

/// Why `name` is not a valid MCP tool name (`^[a-zA-Z0-9_.-]{1,128}$`), if it is not.
fn invalid_tool_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".to_owned());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Some(format!("{c:?} is not allowed"));
    }
    if name.len() > 128 {
        return Some(format!("it is {} characters long", name.len()));
    }
    None
}

/// Autoref-specialization probes over a parameter type and fallbacks for the result: when a
/// type lacks a trait, the code resolves to an inert fallback and only the `assert_*` checks
/// report it (once, with their own messages) instead of every use repeating it.
fn probes(rt: &TokenStream) -> TokenStream {
    quote! {
        struct __RpcTy<T>(::core::marker::PhantomData<T>);

        trait __RpcTake<T> {
            fn __rpc_take(
                &self,
                params: &mut #rt::Params,
                name: &'static str,
                errs: &mut ::std::vec::Vec<#rt::Violation>,
                default: ::core::option::Option<fn() -> T>,
            ) -> ::core::option::Option<T>;
        }
        impl<T: #rt::serde::de::DeserializeOwned> __RpcTake<T> for __RpcTy<T> {
            fn __rpc_take(
                &self,
                params: &mut #rt::Params,
                name: &'static str,
                errs: &mut ::std::vec::Vec<#rt::Violation>,
                default: ::core::option::Option<fn() -> T>,
            ) -> ::core::option::Option<T> {
                match default {
                    ::core::option::Option::Some(d) => #rt::or_default::<T>(params, name, errs, d),
                    ::core::option::Option::None => #rt::required::<T>(params, name, errs),
                }
            }
        }
        impl<T> __RpcTake<T> for &__RpcTy<T> {
            fn __rpc_take(
                &self,
                _: &mut #rt::Params,
                _: &'static str,
                _: &mut ::std::vec::Vec<#rt::Violation>,
                _: ::core::option::Option<fn() -> T>,
            ) -> ::core::option::Option<T> {
                ::core::option::Option::None
            }
        }

        trait __RpcParamSchema {
            fn __rpc_schema(&self, g: &mut #rt::SchemaGenerator) -> #rt::Schema;
        }
        impl<T: #rt::JsonSchema> __RpcParamSchema for __RpcTy<T> {
            fn __rpc_schema(&self, g: &mut #rt::SchemaGenerator) -> #rt::Schema {
                #rt::param_schema::<T>(g)
            }
        }
        impl<T> __RpcParamSchema for &__RpcTy<T> {
            fn __rpc_schema(&self, _: &mut #rt::SchemaGenerator) -> #rt::Schema {
                ::core::default::Default::default()
            }
        }

        // After `SpecialOutput` (by value) and `JsonOutput` (autoref): autoref-mut.
        trait __RpcNoOutput {
            fn __rpc_output(&mut self) -> ::core::result::Result<#rt::Output, #rt::RpcError>;
        }
        impl<T: ?::core::marker::Sized> __RpcNoOutput for &#rt::Probe<'_, T> {
            fn __rpc_output(&mut self) -> ::core::result::Result<#rt::Output, #rt::RpcError> {
                ::core::result::Result::Err(#rt::RpcError::internal("the result cannot be serialized"))
            }
        }
        trait __RpcNoOutputSchema {
            fn __rpc_output_schema(&mut self, g: &mut #rt::SchemaGenerator) -> ::core::option::Option<#rt::Schema>;
        }
        impl<T: ?::core::marker::Sized> __RpcNoOutputSchema for &#rt::SchemaProbe<T> {
            fn __rpc_output_schema(&mut self, _: &mut #rt::SchemaGenerator) -> ::core::option::Option<#rt::Schema> {
                ::core::option::Option::None
            }
        }
    }
}

/// The `const _: () = { ... };` block registering one method.
pub fn method(m: &Method) -> TokenStream {
    let krate = &m.krate;
    let rt = quote!(#krate::__private);
    let name_lit = LitStr::new(&m.name, m.name_span);
    let ident = &m.ident;

    // The groups are written once, so a bad group path is reported once.
    let groups = &m.groups;
    let groups_const = quote! {
        const __RPC_GROUPS: &[#rt::ApiGroup] = &[#(#groups),*];
    };

    // A bad tool name in an MCP group fails const evaluation, at the name's span. The runtime's
    // `is_valid_tool_name` decides; the macro only words the message.
    let name_check = {
        let problem = invalid_tool_name(&m.name)
            .map(|p| format!(" ({p})"))
            .unwrap_or_default();
        let hint = match m.name_origin {
            NameOrigin::Explicit => "give the method a valid `name = \"...\"`".to_owned(),
            NameOrigin::Function => {
                "give the method a valid `name = \"...\"` (the default is the function's name)"
                    .to_owned()
            }
            NameOrigin::Service => {
                "the name joins the `#[rpc_service]` name, its `concat` and the function's name: \
                 use a valid `concat` (the default is `.`), give the method a valid \
                 `name = \"...\"`"
                    .to_owned()
            }
        };
        let arms = m.groups.iter().enumerate().map(|(i, g)| {
            let msg = format!(
                "`{}` is not a valid MCP tool name{problem}, and group `{}` is published over \
                 MCP: tool names must match ^[a-zA-Z0-9_.-]{{1,128}}$; {hint}, or publish the \
                 method only in JSON-RPC groups (made with `ApiGroup::rpc`)",
                m.name,
                path_name(g)
            );
            let msg = LitStr::new(&msg.replace('{', "{{").replace('}', "}}"), m.name_span);
            quote_spanned! {m.name_span=>
                if #rt::ApiGroup::is_mcp(&__RPC_GROUPS[#i]) { ::core::panic!(#msg) }
            }
        });
        quote_spanned! {m.name_span=>
            const MCP_TOOL_NAME_CHECK: () = if !#rt::is_valid_tool_name(#name_lit) { #(#arms)* };
        }
    };

    let mut defaults = Vec::new();
    let mut schema_fns = Vec::new();
    let mut param_defs = Vec::new();
    let mut takes = Vec::new();
    let mut json_vars = Vec::new();
    let mut ctx_takes = Vec::new();
    let mut call_args = Vec::new();
    let mut asserts = Vec::new();
    let mut checks = Vec::new();
    let early = |e: TokenStream| {
        if m.is_async {
            quote!(#rt::ready(#e))
        } else {
            e
        }
    };

    for (i, p) in m.params.iter().enumerate() {
        let ty = &p.ty;
        let pname = &p.name;
        let doc = &p.doc;
        let var = format_ident!("__p{}", i);
        match &p.kind {
            ParamKind::Context => {
                let err = early(quote!(::core::result::Result::Err(__e)));
                ctx_takes.push(quote_spanned! {ty.span()=>
                    let #var = match #rt::from_context::<#ty>(&__ctx) {
                        ::core::result::Result::Ok(__v) => __v,
                        ::core::result::Result::Err(__e) => return #err,
                    };
                });
                call_args.push(quote!(#var));
                continue;
            }
            ParamKind::ContextRef => {
                call_args.push(quote!(&__ctx));
                continue;
            }
            _ => {}
        }
        asserts.push(quote_spanned! {ty.span()=> #rt::assert_param::<#ty>(); });
        // Through the probes: a type that is not a parameter type is reported by
        // `assert_param` only, not again by every use.
        let probe = quote!((&__RpcTy::<#ty>(::core::marker::PhantomData)));
        let kind = match &p.kind {
            ParamKind::Required => {
                takes.push(quote! {
                    let #var = #probe.__rpc_take(&mut __params, #pname, &mut __errs, ::core::option::Option::None);
                });
                quote!(#rt::ParamKind::Required)
            }
            ParamKind::Optional => {
                takes.push(quote! {
                    let #var = #probe.__rpc_take(&mut __params, #pname, &mut __errs, ::core::option::Option::Some(::core::default::Default::default));
                });
                quote!(#rt::ParamKind::Optional)
            }
            ParamKind::Default(expr) => {
                let dfn = format_ident!("__default_{}", i);
                let djson = format_ident!("__default_json_{}", i);
                // A string literal converts into the parameter's type (`"x"` → `String`).
                let value = match expr {
                    Expr::Lit(l) if matches!(l.lit, Lit::Str(_)) => {
                        quote_spanned!(expr.span()=> ::core::convert::Into::into(#expr))
                    }
                    _ => quote!(#expr),
                };
                defaults.push(quote_spanned! {expr.span()=>
                    fn #dfn() -> #ty { #value }
                    fn #djson() -> #rt::serde_json::Value { #rt::to_json::<#ty>(&#dfn()) }
                });
                takes.push(quote! {
                    let #var = #probe.__rpc_take(&mut __params, #pname, &mut __errs, ::core::option::Option::Some(#dfn));
                });
                quote!(#rt::ParamKind::Default(#djson))
            }
            ParamKind::Context | ParamKind::ContextRef => unreachable!("handled above"),
        };
        let sfn = format_ident!("__schema_{}", i);
        schema_fns.push(quote! {
            fn #sfn(__g: &mut #rt::SchemaGenerator) -> #rt::Schema { #probe.__rpc_schema(__g) }
        });
        let constraints = &p.constraints;
        param_defs.push(quote! {
            #rt::ParamDef { name: #pname, description: #doc, kind: #kind, schema: #sfn, constraints: #constraints }
        });
        if let Some(check) = &p.check {
            checks.push(quote_spanned! {check.span()=> #rt::run_check(#pname, #check(&#var), &mut __errs); });
        }
        json_vars.push(var.clone());
        call_args.push(quote!(#var));
    }

    let service = m.self_ty.as_ref().map(|self_ty| {
        let err = early(quote!(::core::result::Result::Err(__e)));
        (
            quote! {
                let __this = match #rt::service::<#self_ty>(&__ctx) {
                    ::core::result::Result::Ok(__s) => __s,
                    ::core::result::Result::Err(__e) => return #err,
                };
            },
            self_ty,
        )
    });
    let (this_take, call) = match &service {
        Some((take, self_ty)) if m.has_receiver => (
            take.clone(),
            quote!(<#self_ty>::#ident(&*__this, #(#call_args),*)),
        ),
        Some((_, self_ty)) => (quote!(), quote!(<#self_ty>::#ident(#(#call_args),*))),
        None => (quote!(), quote!(#ident(#(#call_args),*))),
    };
    let call = if m.is_async {
        quote!(#call.await)
    } else {
        call
    };

    let output = match &m.ret {
        Ret::Unit | Ret::Plain(_) => quote! { (&#rt::Probe(&__ret)).__rpc_output() },
        Ret::Result(_, err) => {
            // With the user's error type as the turbofish: a missing conversion is reported at
            // that type.
            let into = match err {
                Some(e) => quote_spanned!(e.span()=> __rpc_error::<#e>(__e)),
                None => quote!(__rpc_error(__e)),
            };
            quote! {
                match __ret {
                    ::core::result::Result::Ok(__v) => (&#rt::Probe(&__v)).__rpc_output(),
                    ::core::result::Result::Err(__e) => ::core::result::Result::Err(#into),
                }
            }
        }
    };
    let error_fn = match &m.ret {
        Ret::Result(..) => quote! {
            #[track_caller]
            fn __rpc_error<E: ::core::convert::Into<#rt::RpcError>>(e: E) -> #rt::RpcError {
                ::core::convert::Into::into(e)
            }
        },
        _ => quote!(),
    };
    let out_ty = match &m.ret {
        Ret::Unit => None,
        Ret::Plain(t) | Ret::Result(t, _) => Some(t),
    };
    if let Some(t) = out_ty {
        asserts.push(quote_spanned! {t.span()=> #rt::assert_return::<#t>(); });
    }
    let output_schema = match out_ty {
        None => quote!(::core::option::Option::None),
        Some(t) => quote! {
            #[allow(unused_imports)]
            use #rt::{JsonOutputSchema as _, SpecialOutputSchema as _};
            use __RpcNoOutputSchema as _;
            (&#rt::SchemaProbe::<#t>::NEW).__rpc_output_schema(__g)
        },
    };

    let fail = early(quote!(::core::result::Result::Err(__e)));
    let body = quote! {
        let __ret = #call;
        #[allow(unused_imports)]
        use #rt::{JsonOutput as _, SpecialOutput as _};
        use __RpcNoOutput as _;
        #output
    };
    let missing = early(
        quote!(::core::result::Result::Err(#rt::RpcError::internal("parameter conversion failed"))),
    );
    let unpack = if json_vars.is_empty() {
        quote!()
    } else {
        quote! {
            let (#(::core::option::Option::Some(#json_vars),)*) = (#(#json_vars,)*) else { return #missing; };
        }
    };
    let (ret_ty, handler, run) = if m.is_async {
        (
            quote!(#rt::BoxFuture<'static, ::core::result::Result<#rt::Output, #rt::RpcError>>),
            quote!(#rt::Handler::Async(__call)),
            quote!(::std::boxed::Box::pin(async move { #body })),
        )
    } else {
        (
            quote!(::core::result::Result<#rt::Output, #rt::RpcError>),
            quote!(#rt::Handler::Sync(__call)),
            quote!({ #body }),
        )
    };

    let name = &m.name;
    let docs = &m.docs;
    let since = m.since;
    let removed_in = match m.removed_in {
        Some(r) => quote!(::core::option::Option::Some(#r)),
        None => quote!(::core::option::Option::None),
    };
    let tool = &m.tool;
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
    let cache = match &m.cache {
        Some(c) => {
            let ttl = c.ttl_ms;
            let envs = match &c.envs {
                Some(list) => quote!(::core::option::Option::Some(&[#(#list),*])),
                None => quote!(::core::option::Option::None),
            };
            quote!(::core::option::Option::Some(#rt::CachePolicy { ttl_ms: #ttl, envs: #envs }))
        }
        None => quote!(::core::option::Option::None),
    };
    let lock = match &m.lock {
        Some(l) => {
            let (ttl, wait) = (l.ttl_ms, l.wait_ms);
            let param = match &l.param {
                Some(p) => quote!(::core::option::Option::Some(#p)),
                None => quote!(::core::option::Option::None),
            };
            quote!(::core::option::Option::Some(#rt::LockPolicy { param: #param, ttl_ms: #ttl, wait_ms: #wait }))
        }
        None => quote!(::core::option::Option::None),
    };
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
    let span = Span::call_site();
    let probes = probes(&rt);

    quote_spanned! {span=>
        #[doc(hidden)]
        #[allow(non_snake_case, dead_code, clippy::all)]
        const _: () = {
            #groups_const
            #name_check

            #[allow(dead_code)]
            fn __assert_types() { #(#asserts)* }

            #probes
            #error_fn

            #(#defaults)*
            #(#schema_fns)*

            #[allow(unused_variables, unused_mut)]
            fn __call(__ctx: #rt::RequestContext, mut __params: #rt::Params) -> #ret_ty {
                let mut __errs: ::std::vec::Vec<#rt::Violation> = ::std::vec::Vec::new();
                #(#takes)*
                if let ::core::result::Result::Err(__e) = #rt::finish(#name, &mut __errs) { return #fail; }
                #unpack
                #(#checks)*
                if let ::core::result::Result::Err(__e) = #rt::finish(#name, &mut __errs) { return #fail; }
                #(#ctx_takes)*
                #this_take
                #run
            }

            #[allow(unused_variables)]
            fn __output_schema(__g: &mut #rt::SchemaGenerator) -> ::core::option::Option<#rt::Schema> {
                #output_schema
            }

            #rt::inventory::submit! {
                #rt::MethodDef {
                    name: #name,
                    groups: __RPC_GROUPS,
                    since: #since,
                    removed_in: #removed_in,
                    docs: #docs,
                    params: &[#(#param_defs),*],
                    annotations: #rt::ToolAnnotations {
                        title: #title,
                        read_only_hint: #ro,
                        destructive_hint: #de,
                        idempotent_hint: #id,
                        open_world_hint: #ow,
                    },
                    output_schema: __output_schema,
                    handler: #handler,
                    cache: #cache,
                    lock: #lock,
                    location: #rt::SourceLocation { file: ::core::file!(), line: #line, rust_path: #rust_path },
                }
            }
        };
    }
}
