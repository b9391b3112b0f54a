//! The result: its conversion into `Output`, its error conversion and its schema.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use super::Cx;
use crate::model::{Kind, Ret};

pub(super) struct Output {
    /// The expression turning `__ret` into `Result<Output, RpcError>`.
    pub convert: TokenStream,
    /// `__rpc_error` of a `Result` return type.
    pub error_fn: TokenStream,
    /// `assert_return::<T>()` of the result type (`assert_resource_return`,
    /// `assert_prompt_return` for a resource or prompt).
    pub assert: Option<TokenStream>,
    /// The result type, if not `()`.
    pub ty: Option<Type>,
}

pub(super) fn expand(cx: &Cx) -> Output {
    let rt = &cx.rt;
    let ty = match &cx.m.ret {
        Ret::Unit => None,
        Ret::Plain(t) | Ret::Result(t, _) => Some(t.clone()),
    };
    let assert = match (cx.m.kind, &ty) {
        (Kind::Method, None) => None,
        (Kind::Method, Some(t)) => Some(quote_spanned! {t.span()=> #rt::assert_return::<#t>(); }),
        // A resource or prompt must return something: `()` is asserted too, at the name.
        (kind, t) => {
            let assert = if kind == Kind::Resource {
                quote!(assert_resource_return)
            } else {
                quote!(assert_prompt_return)
            };
            let t = match t {
                Some(t) => quote_spanned!(t.span()=> #t),
                None => quote_spanned!(cx.m.ident.span()=> ()),
            };
            Some(quote_spanned! {t.span()=> #rt::#assert::<#t>(); })
        }
    };
    Output {
        convert: convert(cx),
        error_fn: error_fn(cx),
        assert,
        ty,
    }
}

fn convert(cx: &Cx) -> TokenStream {
    let rt = &cx.rt;
    match &cx.m.ret {
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
    }
}

fn error_fn(cx: &Cx) -> TokenStream {
    let rt = &cx.rt;
    match &cx.m.ret {
        Ret::Result(..) => quote! {
            #[track_caller]
            fn __rpc_error<E: ::core::convert::Into<#rt::RpcError>>(e: E) -> #rt::RpcError {
                ::core::convert::Into::into(e)
            }
        },
        _ => quote!(),
    }
}

/// `__output_schema`: the result's schema, `None` for `()` and untyped JSON. A resource or
/// prompt has none (its `MethodDef` says `|_| None`).
pub(super) fn schema_fn(cx: &Cx, out: &Output) -> TokenStream {
    let rt = &cx.rt;
    if cx.m.kind != Kind::Method {
        return quote!();
    }
    let body = match &out.ty {
        None => quote!(::core::option::Option::None),
        Some(t) => quote! {
            #[allow(unused_imports)]
            use #rt::{JsonOutputSchema as _, SpecialOutputSchema as _};
            use __RpcNoOutputSchema as _;
            (&#rt::SchemaProbe::<#t>::NEW).__rpc_output_schema(__g)
        },
    };
    quote! {
        #[allow(unused_variables)]
        fn __output_schema(__g: &mut #rt::SchemaGenerator) -> ::core::option::Option<#rt::Schema> {
            #body
        }
    }
}
