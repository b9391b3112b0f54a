//! `__call`: the dispatch function the registry calls with the context and the params.

use proc_macro2::TokenStream;
use quote::quote;

use super::Cx;
use super::output::Output;
use super::params::Params;

pub(super) fn call_fn(cx: &Cx, params: &Params, output: &Output) -> TokenStream {
    let (m, rt) = (cx.m, &cx.rt);
    let Params {
        takes,
        json_vars,
        checks,
        ctx_takes,
        ..
    } = params;
    let name = &m.name;
    let fail = cx.early(quote!(::core::result::Result::Err(__e)));
    let missing = cx.early(
        quote!(::core::result::Result::Err(#rt::RpcError::internal("parameter conversion failed"))),
    );
    let unpack = if json_vars.is_empty() {
        quote!()
    } else {
        quote! {
            let (#(::core::option::Option::Some(#json_vars),)*) = (#(#json_vars,)*) else { return #missing; };
        }
    };
    let this_take = this_take(cx);
    let run = run(cx, params, output);
    let ret_ty = if m.is_async {
        quote!(#rt::BoxFuture<'static, ::core::result::Result<#rt::Output, #rt::RpcError>>)
    } else {
        quote!(::core::result::Result<#rt::Output, #rt::RpcError>)
    };
    quote! {
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
    }
}

/// `__this`: the service instance of a method taking `&self`.
fn this_take(cx: &Cx) -> TokenStream {
    let (m, rt) = (cx.m, &cx.rt);
    match &m.self_ty {
        Some(self_ty) if m.has_receiver() => {
            let err = cx.early(quote!(::core::result::Result::Err(__e)));
            quote! {
                let __this = match #rt::service::<#self_ty>(&__ctx) {
                    ::core::result::Result::Ok(__s) => __s,
                    ::core::result::Result::Err(__e) => return #err,
                };
            }
        }
        _ => quote!(),
    }
}

/// The call of the user's function and the conversion of its result (in a boxed future when
/// async).
fn run(cx: &Cx, params: &Params, output: &Output) -> TokenStream {
    let (m, rt) = (cx.m, &cx.rt);
    let ident = &m.ident;
    let call_args = &params.call_args;
    let call = match &m.self_ty {
        Some(self_ty) if m.has_receiver() => {
            quote!(<#self_ty>::#ident(&*__this, #(#call_args),*))
        }
        Some(self_ty) => quote!(<#self_ty>::#ident(#(#call_args),*)),
        None => quote!(#ident(#(#call_args),*)),
    };
    let call = if m.is_async {
        quote!(#call.await)
    } else {
        call
    };
    let convert = &output.convert;
    let body = quote! {
        let __ret = #call;
        #[allow(unused_imports)]
        use #rt::{JsonOutput as _, SpecialOutput as _};
        use __RpcNoOutput as _;
        #convert
    };
    if m.is_async {
        quote!(::std::boxed::Box::pin(async move { #body }))
    } else {
        quote!({ #body })
    }
}
