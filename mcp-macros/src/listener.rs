//! `#[rpc_listener(event = "...", priority = N)]`: registers a function as an event listener.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{ItemFn, LitInt, LitStr};

use crate::ctxt::Ctxt;

const EVENTS: &[(&str, &str)] = &[
    ("request", "Request"),
    ("pre_execute", "PreExecute"),
    ("post_execute", "PostExecute"),
    ("response", "Response"),
    ("error", "Error"),
    ("post_response", "PostResponse"),
];

pub fn expand(args: TokenStream, func: ItemFn) -> TokenStream {
    let cx = Ctxt::new();
    let mut event: Option<(String, Span)> = None;
    let mut priority = 0i32;
    let mut krate: syn::Path = syn::parse_quote!(::mcp_runtime);
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("event") {
            let s: LitStr = meta.value()?.parse()?;
            event = Some((s.value(), s.span()));
        } else if meta.path.is_ident("priority") {
            let v = meta.value()?;
            let neg = v.parse::<syn::Token![-]>().is_ok();
            let n: LitInt = v.parse()?;
            let n: i32 = n.base10_parse()?;
            priority = if neg { -n } else { n };
        } else if meta.path.is_ident("crate") {
            let s: LitStr = meta.value()?.parse()?;
            krate = s.parse()?;
        } else {
            return Err(
                meta.error("unknown `rpc_listener` key; expected one of: event, priority, crate")
            );
        }
        Ok(())
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(e);
    }
    let variant = match &event {
        Some((name, span)) => match EVENTS.iter().find(|(n, _)| n == name) {
            Some((_, v)) => Some(syn::Ident::new(v, Span::call_site())),
            None => {
                let names: Vec<&str> = EVENTS.iter().map(|(n, _)| *n).collect();
                cx.syn_error(syn::Error::new(
                    *span,
                    format!(
                        "unknown event `{name}`; expected one of: {}",
                        names.join(", ")
                    ),
                ));
                None
            }
        },
        None => {
            cx.syn_error(syn::Error::new(
                Span::call_site(),
                "missing `event = \"...\"`: request, pre_execute, post_execute, response, error or post_response",
            ));
            None
        }
    };
    if !func.sig.generics.params.is_empty() {
        cx.error_spanned_by(&func.sig.generics, "a listener cannot be generic");
    }
    if func.sig.inputs.len() != 1 {
        cx.error_spanned_by(
            &func.sig.inputs,
            "a listener takes one parameter: `event: &mut Event<'_>` (mcp_runtime::core::Event)",
        );
    }
    let Some(variant) = variant.filter(|_| !cx.has_errors()) else {
        let errors = cx.into_compile_errors();
        return quote!(#func #errors);
    };
    let ident = &func.sig.ident;
    let rt = quote!(#krate::__private);
    let call = if func.sig.asyncness.is_some() {
        quote!(::std::boxed::Box::pin(#ident(__ev)))
    } else {
        // Called inside the future, so a panic is caught where the future is polled.
        quote!(::std::boxed::Box::pin(async move { #ident(__ev) }))
    };
    quote! {
        #func
        #[doc(hidden)]
        const _: () = {
            fn __listener<'a, 'b>(
                __ev: &'a mut #rt::Event<'b>,
            ) -> #rt::BoxFuture<'a, ::core::result::Result<(), #rt::RpcError>> {
                #call
            }
            #rt::inventory::submit! {
                #rt::ListenerDef {
                    kind: #rt::EventKind::#variant,
                    priority: #priority,
                    handler: __listener,
                    name: ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#ident)),
                }
            }
        };
    }
}
