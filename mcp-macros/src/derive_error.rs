//! `#[derive(RpcError)]`: a `From<YourError> for RpcError` with codes per variant.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Data, DeriveInput, Expr, Path, Token};

use crate::attr::{self, CODE, CRATE, RPC_ATTR, RPC_ERROR, parse_keys_seen};
use crate::ctxt::Ctxt;

struct RpcAttr {
    code: Option<Expr>,
    krate: Option<Path>,
}

/// Parses the `#[rpc(...)]` attributes of the type (`top`) or of a variant.
fn parse(cx: &Ctxt, attrs: &[syn::Attribute], top: bool) -> RpcAttr {
    let mut out = RpcAttr {
        code: None,
        krate: None,
    };
    let mut seen = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident(RPC_ATTR)) {
        let tokens = match &a.meta {
            syn::Meta::List(l) => l.tokens.clone(),
            other => {
                cx.error_spanned_by(other, "expected `#[rpc(code = -32000)]`");
                continue;
            }
        };
        parse_keys_seen(cx, tokens, &RPC_ERROR, &mut seen, |key, meta| {
            match key {
                CODE => {
                    if !meta.input.peek(Token![=]) {
                        return Err(syn::Error::new_spanned(
                            &meta.path,
                            "`code` needs a value: `#[rpc(code = -32000)]` (an `i32` JSON-RPC \
                             error code)",
                        ));
                    }
                    out.code = Some(meta.value()?.parse()?);
                }
                CRATE => {
                    if !top {
                        return Err(syn::Error::new_spanned(
                            &meta.path,
                            "`crate` goes on the type's `#[rpc(...)]`, not on a variant",
                        ));
                    }
                    out.krate = Some(attr::krate(meta)?);
                }
                _ => unreachable!("a key of RPC_ERROR"),
            }
            Ok(())
        });
    }
    out
}

pub fn expand(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let top = parse(&cx, &input.attrs, true);
    // A problem with the type itself means no impl can be written; a bad key still gets one
    // (with the codes that parsed), so uses of the conversion are not reported again.
    let mut impl_possible = true;
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "`#[derive(RpcError)]` does not support generic types: derive it on a concrete error \
             type, or implement `From<YourError<T>> for RpcError` by hand",
        );
        impl_possible = false;
    }
    let default_code = top
        .code
        .clone()
        .map(|c| quote!(#c))
        .unwrap_or_else(|| quote!(-32603));
    let ident = &input.ident;
    let code =
        match &input.data {
            Data::Enum(e) => {
                let arms: Vec<_> = e
                    .variants
                    .iter()
                    .map(|v| {
                        let va = parse(&cx, &v.attrs, false);
                        let vi = &v.ident;
                        let c = va
                            .code
                            .map(|c| quote!(#c))
                            .unwrap_or_else(|| default_code.clone());
                        quote!(#ident::#vi { .. } => #c,)
                    })
                    .collect();
                quote!(match &e { #(#arms)* })
            }
            Data::Struct(s) => {
                for f in &s.fields {
                    if f.attrs.iter().any(|a| a.path().is_ident(RPC_ATTR)) {
                        cx.error_spanned_by(
                        f.attrs.iter().find(|a| a.path().is_ident(RPC_ATTR)).to_token_stream(),
                        "`#[rpc(...)]` goes on the type or on an enum's variants, not on a field",
                    );
                    }
                }
                default_code
            }
            Data::Union(u) => {
                cx.error_spanned_by(
                    u.union_token,
                    "`#[derive(RpcError)]` does not support unions",
                );
                impl_possible = false;
                quote!(0)
            }
        };
    let errors = match cx.check() {
        Ok(()) => TokenStream::new(),
        Err(e) => e.to_compile_error(),
    };
    if !impl_possible {
        return errors;
    }
    let krate = top
        .krate
        .unwrap_or_else(|| syn::parse_quote!(::mcp_runtime));
    quote! {
        #errors
        impl ::core::convert::From<#ident> for #krate::RpcError {
            #[track_caller]
            fn from(e: #ident) -> Self {
                let code: i32 = #code;
                #krate::__private::error_from(code, e)
            }
        }
    }
}
