//! `#[derive(JsonSchema)]` of the prelude: schemars' derive, without the user's crate depending
//! on `schemars`.
//!
//! schemars' derive names `schemars::...` unless the type carries
//! `#[schemars(crate = "...")]`, and a derive cannot add an attribute to the item it is on. So
//! this derive re-emits a private shadow copy of the item (same name, generics, where-clause,
//! and every `doc`/`serde`/`schemars`/`validate`/`garde` attribute, so the schema, its name and
//! its id are the ones schemars would give the item itself) inside a function body, derives
//! schemars' `JsonSchema` on the shadow through `mcp_runtime::__private::schemars`, and
//! implements `JsonSchema` for the user's type by delegating every method to the shadow.
//!
//! The shadow lives in a function body so that, there, the item's name means the shadow (a
//! recursive type refers to itself), while the impl, outside that body, names the user's type.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Attribute, Data, DeriveInput, Fields, Path, Visibility, parse_quote};

use crate::attr::RPC_ATTR;

/// The attributes schemars reads: the only ones the shadow keeps (another derive's helper
/// attribute, such as `#[default]` or `#[error]`, would not resolve on it).
const KEPT: [&str; 5] = ["doc", "serde", "schemars", "validate", "garde"];

fn kept(attrs: &[Attribute]) -> Vec<Attribute> {
    attrs
        .iter()
        .filter(|a| KEPT.iter().any(|k| a.path().is_ident(k)))
        .cloned()
        .collect()
}

/// The `crate = "path"` of a `#[rpc(...)]` on the type (the convention of `#[derive(RpcError)]`).
/// Other keys belong to `#[derive(RpcError)]`, which reports their problems.
fn krate(attrs: &[Attribute]) -> Option<Path> {
    let mut out = None;
    for a in attrs.iter().filter(|a| a.path().is_ident(RPC_ATTR)) {
        let _ = a.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let s: syn::LitStr = meta.value()?.parse()?;
                out = syn::parse_str::<Path>(&s.value()).ok();
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    out
}

/// Whether the container has a bare `#[serde(default)]` (or `#[schemars(default)]`): schemars
/// then calls `Self::default()`, which the shadow answers with the user's `Default`.
fn container_default(attrs: &[Attribute]) -> bool {
    let mut found = false;
    for a in attrs
        .iter()
        .filter(|a| a.path().is_ident("serde") || a.path().is_ident("schemars"))
    {
        let _ = a.parse_nested_meta(|meta| {
            if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in meta.input);
            } else if meta.path.is_ident("default") {
                found = true;
            }
            Ok(())
        });
    }
    found
}

fn strip_fields(fields: &mut Fields) {
    for f in fields.iter_mut() {
        f.attrs = kept(&f.attrs);
        f.vis = Visibility::Inherited;
    }
}

pub fn expand(input: &DeriveInput) -> TokenStream {
    let rt = krate(&input.attrs).unwrap_or_else(|| parse_quote!(::mcp_runtime));
    let schemars_path = quote!(#rt::__private::schemars)
        .to_string()
        .replace(' ', "");
    let schemars_lit = syn::LitStr::new(&schemars_path, Span::call_site());
    let ident = &input.ident;

    let mut shadow = input.clone();
    shadow.attrs = kept(&input.attrs);
    shadow.vis = Visibility::Inherited;
    match &mut shadow.data {
        Data::Struct(s) => strip_fields(&mut s.fields),
        Data::Enum(e) => {
            for v in e.variants.iter_mut() {
                v.attrs = kept(&v.attrs);
                strip_fields(&mut v.fields);
            }
        }
        Data::Union(u) => {
            for f in u.fields.named.iter_mut() {
                f.attrs = kept(&f.attrs);
                f.vis = Visibility::Inherited;
            }
        }
    }

    // Every type parameter is bounded by `JsonSchema`, as schemars bounds those its fields use.
    let mut bounded = input.generics.clone();
    let type_params: Vec<_> = bounded.type_params().map(|t| t.ident.clone()).collect();
    {
        let wc = bounded.make_where_clause();
        for t in &type_params {
            wc.predicates
                .push(parse_quote!(#t: #rt::__private::schemars::JsonSchema));
        }
    }
    let (impl_g, ty_g, where_c) = bounded.split_for_impl();
    let turbofish = ty_g.as_turbofish();

    // `Self::default()` of a container-level `#[serde(default)]`: the user's, field by field.
    let default_impl = match &input.data {
        Data::Struct(s) if container_default(&input.attrs) => {
            let body = match &s.fields {
                Fields::Named(n) => {
                    let names: Vec<_> = n.named.iter().map(|f| &f.ident).collect();
                    quote!(Self { #(#names: __o.#names),* })
                }
                Fields::Unnamed(u) => {
                    let idx = (0..u.unnamed.len()).map(syn::Index::from);
                    quote!(Self(#(__o.#idx),*))
                }
                Fields::Unit => quote!(Self),
            };
            let (sg, st, sw) = input.generics.split_for_impl();
            let mut w = sw.cloned().unwrap_or_else(|| parse_quote!(where));
            w.predicates
                .push(parse_quote!(__McpSchemaOuter #st: ::core::default::Default));
            quote! {
                impl #sg ::core::default::Default for #ident #st #w {
                    fn default() -> Self {
                        let __o: __McpSchemaOuter #st = ::core::default::Default::default();
                        #body
                    }
                }
            }
        }
        _ => TokenStream::new(),
    };
    let outer_alias = if default_impl.is_empty() {
        TokenStream::new()
    } else {
        let (_, st, _) = input.generics.split_for_impl();
        let params = &input.generics.params;
        quote!(#[allow(type_alias_bounds)] type __McpSchemaOuter<#params> = #ident #st;)
    };

    let s = quote!(#rt::__private::schemars);
    quote! {
        const _: () = {
            #outer_alias

            #[allow(dead_code, deprecated, non_snake_case, clippy::all)]
            fn __mcp_schema_shadow #impl_g () -> #rt::__private::SchemaFns #where_c {
                #[derive(#s::JsonSchema)]
                #[schemars(crate = #schemars_lit)]
                #[allow(dead_code, deprecated, clippy::all)]
                #shadow

                #default_impl

                #rt::__private::SchemaFns::of::<#ident #ty_g>()
            }

            #[automatically_derived]
            impl #impl_g #s::JsonSchema for #ident #ty_g #where_c {
                fn inline_schema() -> bool {
                    (__mcp_schema_shadow #turbofish ().inline_schema)()
                }
                fn schema_name() -> ::std::borrow::Cow<'static, str> {
                    (__mcp_schema_shadow #turbofish ().schema_name)()
                }
                fn schema_id() -> ::std::borrow::Cow<'static, str> {
                    (__mcp_schema_shadow #turbofish ().schema_id)()
                }
                fn json_schema(generator: &mut #s::SchemaGenerator) -> #s::Schema {
                    (__mcp_schema_shadow #turbofish ().json_schema)(generator)
                }
                fn _schemars_private_non_optional_json_schema(
                    generator: &mut #s::SchemaGenerator,
                ) -> #s::Schema {
                    (__mcp_schema_shadow #turbofish ().non_optional_json_schema)(generator)
                }
                fn _schemars_private_is_option() -> bool {
                    (__mcp_schema_shadow #turbofish ().is_option)()
                }
            }
        };
    }
}
