//! `#[rpc_listener(event = "...", priority = N)]`: registers a function as an event listener.
//! Parsed by the shared attribute parser (`attr::parse_listener`), then checked and expanded.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Ident, ItemFn, Path};

use crate::attr::{self, ListenerArgs, Spanned};
use crate::ctxt::Ctxt;

/// The events, as written in `event = "..."` and as `EventKind` variants.
const EVENTS: &[(&str, &str)] = &[
    ("request", "Request"),
    ("pre_execute", "PreExecute"),
    ("post_execute", "PostExecute"),
    ("response", "Response"),
    ("error", "Error"),
    ("post_response", "PostResponse"),
];

/// The checked model of a listener.
struct Listener {
    variant: Ident,
    priority: i32,
    krate: Path,
}

pub fn expand(args: TokenStream, func: ItemFn) -> TokenStream {
    let cx = Ctxt::new();
    let parsed = attr::parse_listener(&cx, args.clone());
    let listener = build(&cx, parsed, &args);
    check_signature(&cx, &func);
    match (listener, cx.check()) {
        (Some(l), Ok(())) => {
            let reg = register(&l, &func);
            quote!(#func #reg)
        }
        (_, Err(e)) => {
            let errors = e.to_compile_error();
            quote!(#func #errors)
        }
        // `build` gives `None` only after reporting an error.
        (None, Ok(())) => unreachable!("a listener without a model and without errors"),
    }
}

fn build(cx: &Ctxt, args: ListenerArgs, tokens: &TokenStream) -> Option<Listener> {
    let variant = match &args.event {
        Some(event) => event_variant(cx, event),
        // Written with a bad value: reported already.
        None if args.seen.contains(&attr::EVENT) => None,
        None => {
            let msg = "missing `event = \"...\"`: request, pre_execute, post_execute, response, \
                       error or post_response";
            if tokens.is_empty() {
                cx.syn_error(syn::Error::new(Span::call_site(), msg));
            } else {
                cx.error_spanned_by(tokens, msg);
            }
            None
        }
    };
    Some(Listener {
        variant: variant?,
        priority: args.priority,
        krate: args
            .krate
            .unwrap_or_else(|| syn::parse_quote!(::mcp_runtime)),
    })
}

fn event_variant(cx: &Ctxt, event: &Spanned<String>) -> Option<Ident> {
    if let Some((_, v)) = EVENTS.iter().find(|(n, _)| *n == event.value) {
        return Some(Ident::new(v, Span::call_site()));
    }
    let names: Vec<&str> = EVENTS.iter().map(|(n, _)| *n).collect();
    cx.syn_error(syn::Error::new(
        event.span,
        format!(
            "unknown event `{}`; expected one of: {}",
            event.value,
            names.join(", ")
        ),
    ));
    None
}

fn check_signature(cx: &Ctxt, func: &ItemFn) {
    if !func.sig.generics.params.is_empty() {
        cx.error_spanned_by(&func.sig.generics, "a listener cannot be generic");
    }
    if func.sig.inputs.len() != 1 {
        let msg =
            "a listener takes one parameter: `event: &mut Event<'_>` (mcp_runtime::core::Event)";
        if func.sig.inputs.is_empty() {
            cx.syn_error(syn::Error::new(func.sig.paren_token.span.join(), msg));
        } else {
            cx.error_spanned_by(&func.sig.inputs, msg);
        }
    }
}

fn register(l: &Listener, func: &ItemFn) -> TokenStream {
    let ident = &func.sig.ident;
    let krate = &l.krate;
    let (variant, priority) = (&l.variant, l.priority);
    let rt = quote!(#krate::__private);
    // A plain `fn` is called as it is (the pipeline catches its panics): a call whose
    // listeners are all plain runs without a future of its own.
    let (listener, handler) = if func.sig.asyncness.is_some() {
        (
            quote! {
                fn __listener<'a, 'b>(
                    __ev: &'a mut #rt::Event<'b>,
                ) -> #rt::BoxFuture<'a, ::core::result::Result<(), #rt::RpcError>> {
                    ::std::boxed::Box::pin(#ident(__ev))
                }
            },
            quote!(#rt::ListenerFn::Async(__listener)),
        )
    } else {
        (
            quote! {
                fn __listener<'a, 'b>(
                    __ev: &'a mut #rt::Event<'b>,
                ) -> ::core::result::Result<(), #rt::RpcError> {
                    #ident(__ev)
                }
            },
            quote!(#rt::ListenerFn::Sync(__listener)),
        )
    };
    quote! {
        #[doc(hidden)]
        const _: () = {
            #listener
            #rt::inventory::submit! {
                #rt::ListenerDef {
                    kind: #rt::EventKind::#variant,
                    priority: #priority,
                    handler: #handler,
                    name: ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#ident)),
                }
            }
        };
    }
}
