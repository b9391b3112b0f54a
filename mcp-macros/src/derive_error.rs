//! `#[derive(RpcError)]`: a `From<YourError> for RpcError` with codes per variant.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Expr, Path};

use crate::ctxt::Ctxt;

struct RpcAttr {
    code: Option<Expr>,
    krate: Option<Path>,
}

fn parse(cx: &Ctxt, attrs: &[syn::Attribute]) -> RpcAttr {
    let mut out = RpcAttr {
        code: None,
        krate: None,
    };
    for a in attrs.iter().filter(|a| a.path().is_ident("rpc")) {
        let r = a.parse_nested_meta(|meta| {
            if meta.path.is_ident("code") {
                out.code = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("crate") {
                let s: syn::LitStr = meta.value()?.parse()?;
                out.krate = Some(s.parse()?);
            } else {
                return Err(meta.error("unknown `rpc` key; expected one of: code, crate"));
            }
            Ok(())
        });
        if let Err(e) = r {
            cx.syn_error(e);
        }
    }
    out
}

pub fn expand(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let top = parse(&cx, &input.attrs);
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "`#[derive(RpcError)]` does not support generic types",
        );
    }
    let default_code = top
        .code
        .clone()
        .map(|c| quote!(#c))
        .unwrap_or_else(|| quote!(-32603));
    let ident = &input.ident;
    let code = match &input.data {
        Data::Enum(e) => {
            let arms = e.variants.iter().map(|v| {
                let va = parse(&cx, &v.attrs);
                let vi = &v.ident;
                let c = va
                    .code
                    .map(|c| quote!(#c))
                    .unwrap_or_else(|| default_code.clone());
                quote!(#ident::#vi { .. } => #c,)
            });
            quote!(match &e { #(#arms)* })
        }
        Data::Struct(_) => default_code,
        Data::Union(u) => {
            cx.error_spanned_by(
                u.union_token,
                "`#[derive(RpcError)]` does not support unions",
            );
            quote!(0)
        }
    };
    if cx.has_errors() {
        return cx.into_compile_errors();
    }
    let krate = top
        .krate
        .unwrap_or_else(|| syn::parse_quote!(::mcp_runtime));
    quote! {
        impl ::core::convert::From<#ident> for #krate::RpcError {
            #[track_caller]
            fn from(e: #ident) -> Self {
                let code: i32 = #code;
                #krate::__private::error_from(code, e)
            }
        }
    }
}
