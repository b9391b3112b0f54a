//! `#[complete(with = f)]`: a wrapper function per completed argument, and the
//! `CompletionDef`s of the record.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::Cx;

/// The wrappers `__complete_N` and the `&[CompletionDef { ... }]` expression.
pub(super) fn expand(cx: &Cx) -> (TokenStream, TokenStream) {
    let rt = &cx.rt;
    let (fns, defs): (Vec<_>, Vec<_>) = cx
        .m
        .params
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, p, p.complete.as_ref()?.with.as_ref()?)))
        .map(|(i, p, with)| {
            let wrapper = format_ident!("__complete_{}", i);
            // At the user's path: a function that is not a completion function is reported
            // there, with `Completer`'s message.
            let call = quote_spanned!(with.span()=> #rt::complete(#with, __req));
            let f = quote! {
                fn #wrapper(
                    __req: #rt::CompletionRequest,
                ) -> #rt::BoxFuture<'static, ::core::result::Result<#rt::Completion, #rt::RpcError>> {
                    #call
                }
            };
            let argument = &p.name;
            let def = quote!(#rt::CompletionDef { argument: #argument, complete: #wrapper });
            (f, def)
        })
        .unzip();
    (quote!(#(#fns)*), quote!(&[#(#defs),*]))
}
