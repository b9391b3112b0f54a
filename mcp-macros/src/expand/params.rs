//! The pieces of each parameter: its type assertion, default and schema functions, its entry in
//! `MethodDef::params`, and how the dispatch function takes and checks it.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Lit};

use super::Cx;
use crate::model::{Param, ParamKind};

/// Every parameter's pieces, in declaration order.
#[derive(Default)]
pub(super) struct Params {
    /// `assert_param::<T>()` of the JSON parameters.
    pub asserts: Vec<TokenStream>,
    /// `__default_N` and `__default_json_N`.
    pub defaults: Vec<TokenStream>,
    /// `__schema_N`.
    pub schema_fns: Vec<TokenStream>,
    /// The `ParamDef`s of the JSON parameters, each with the const saying whether it is a
    /// context parameter after all (for a `MaybeContext` one).
    pub param_defs: Vec<(Option<Ident>, TokenStream)>,
    /// `const __RPC_CTX_N: bool` of the `MaybeContext` parameters.
    pub maybe_consts: Vec<TokenStream>,
    /// `let __pN = ...` of the JSON parameters, from the params.
    pub takes: Vec<TokenStream>,
    /// The variables of the JSON parameters (`Option`s until unpacked).
    pub json_vars: Vec<Ident>,
    /// The custom checks of the JSON parameters.
    pub checks: Vec<TokenStream>,
    /// `let __pN = ...` of the context parameters, from the context.
    pub ctx_takes: Vec<TokenStream>,
    /// The arguments of the call, in order.
    pub call_args: Vec<TokenStream>,
    /// The `NeededState` functions of the context parameters (`MethodDef::states`).
    pub states: Vec<TokenStream>,
}

pub(super) fn expand(cx: &Cx) -> Params {
    let mut out = Params::default();
    for (i, p) in cx.m.params.iter().enumerate() {
        let var = format_ident!("__p{}", i);
        match &p.kind {
            ParamKind::Context => context(cx, p, &var, &mut out),
            ParamKind::ContextRef => {
                // Listed in `states` (needing none), so the record says it takes a context.
                let rt = &cx.rt;
                out.states
                    .push(quote!(#rt::needed_state::<#rt::RequestContext> as #rt::NeededState));
                out.call_args.push(quote!(&__ctx));
            }
            ParamKind::MaybeContext => maybe_context(cx, i, p, var, &mut out),
            _ => json(cx, i, p, var, &mut out),
        }
    }
    out
}

/// A context parameter: taken from the context with `FromContext`.
fn context(cx: &Cx, p: &Param, var: &Ident, out: &mut Params) {
    let (rt, ty) = (&cx.rt, &p.ty);
    let err = cx.early(quote!(::core::result::Result::Err(__e)));
    out.states
        .push(quote_spanned! {ty.span()=> #rt::needed_state::<#ty> as #rt::NeededState });
    out.ctx_takes.push(quote_spanned! {ty.span()=>
        let #var = match #rt::from_context::<#ty>(&__ctx) {
            ::core::result::Result::Ok(__v) => __v,
            ::core::result::Result::Err(__e) => return #err,
        };
    });
    out.call_args.push(quote!(#var));
}

/// A JSON parameter: taken from the params (through the probes: a type that is not a parameter
/// type is reported by `assert_param` only, not again by every use).
fn json(cx: &Cx, i: usize, p: &Param, var: Ident, out: &mut Params) {
    let (rt, ty, pname) = (&cx.rt, &p.ty, &p.name);
    out.asserts
        .push(quote_spanned! {ty.span()=> #rt::assert_param::<#ty>(); });
    let probe = quote!((&__RpcTy::<#ty>(::core::marker::PhantomData)));
    let default = match &p.kind {
        ParamKind::Required => quote!(::core::option::Option::None),
        ParamKind::Optional => {
            quote!(::core::option::Option::Some(
                ::core::default::Default::default
            ))
        }
        ParamKind::Default(_) => {
            let dfn = format_ident!("__default_{}", i);
            quote!(::core::option::Option::Some(#dfn))
        }
        ParamKind::Context | ParamKind::ContextRef | ParamKind::MaybeContext => {
            unreachable!("a JSON parameter")
        }
    };
    out.takes.push(quote! {
        let #var = #probe.__rpc_take(&mut __params, #pname, &mut __errs, #default);
    });
    let kind = kind(cx, i, p, out);
    let sfn = format_ident!("__schema_{}", i);
    out.schema_fns.push(quote! {
        fn #sfn(__g: &mut #rt::SchemaGenerator) -> #rt::Schema { #probe.__rpc_schema(__g) }
    });
    let (doc, constraints) = (&p.doc, &p.constraints);
    out.param_defs.push((
        None,
        quote! {
            #rt::ParamDef { name: #pname, description: #doc, kind: #kind, schema: #sfn, constraints: #constraints }
        },
    ));
    if let Some(check) = &p.check {
        out.checks.push(
            quote_spanned! {check.span()=> #rt::run_check(#pname, #check(&#var), &mut __errs); },
        );
    }
    out.json_vars.push(var.clone());
    out.call_args.push(quote!(#var));
}

/// The `ParamKind` of a JSON parameter, with its default functions.
fn kind(cx: &Cx, i: usize, p: &Param, out: &mut Params) -> TokenStream {
    let (rt, ty) = (&cx.rt, &p.ty);
    match &p.kind {
        ParamKind::Required => quote!(#rt::ParamKind::Required),
        ParamKind::Optional => quote!(#rt::ParamKind::Optional),
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
            out.defaults.push(quote_spanned! {expr.span()=>
                fn #dfn() -> #ty { #value }
                fn #djson() -> #rt::serde_json::Value { #rt::to_json::<#ty>(&#dfn()) }
            });
            quote!(#rt::ParamKind::Default(#djson))
        }
        ParamKind::Context | ParamKind::ContextRef | ParamKind::MaybeContext => {
            unreachable!("a JSON parameter")
        }
    }
}

/// A parameter named like a context type: `const __RPC_CTX_N` (from the type, through the
/// probes) says whether it is one; the code for both cases is generated and the constant picks.
/// As a JSON parameter it is required, and listed in `MethodDef::params` only then.
fn maybe_context(cx: &Cx, i: usize, p: &Param, var: Ident, out: &mut Params) {
    let (rt, ty, pname) = (&cx.rt, &p.ty, &p.name);
    let is_ctx = is_context_const(i, p);
    out.maybe_consts.push(quote_spanned! {ty.span()=>
        const #is_ctx: bool = __RpcTy::<#ty>::__RPC_IS_CONTEXT || __RpcTy::<#ty>::__RPC_IS_STATE;
    });
    let probe = quote!((&__RpcTy::<#ty>(::core::marker::PhantomData)));
    // A `State<T>` whose `T` cannot be shared: said first, and alone.
    out.asserts
        .push(quote_spanned! {ty.span()=> #probe.__rpc_assert_shared(); });
    // Either a context type, or a JSON parameter type (reported as for any JSON parameter).
    out.asserts.push(quote_spanned! {ty.span()=>
        #rt::assert_param::<<#rt::ContextOr<{ #is_ctx }> as #rt::SelectParam<#ty>>::Param>();
    });
    out.takes.push(quote! {
        let #var = if #is_ctx {
            ::core::option::Option::None
        } else {
            #probe.__rpc_take(&mut __params, #pname, &mut __errs, ::core::option::Option::None)
        };
    });
    let err = cx.early(quote!(::core::result::Result::Err(__e)));
    let missing = cx.early(
        quote!(::core::result::Result::Err(#rt::RpcError::internal("parameter conversion failed"))),
    );
    out.ctx_takes.push(quote_spanned! {ty.span()=>
        let #var: #ty = if #is_ctx {
            match #probe.__rpc_from_context(&__ctx) {
                ::core::option::Option::Some(::core::result::Result::Ok(__v)) => __v,
                ::core::option::Option::Some(::core::result::Result::Err(__e)) => return #err,
                ::core::option::Option::None => return #missing,
            }
        } else {
            match #var {
                ::core::option::Option::Some(__v) => __v,
                ::core::option::Option::None => return #missing,
            }
        };
    });
    let state_fn = format_ident!("__state_{}", i);
    out.schema_fns.push(quote! {
        fn #state_fn() -> ::core::option::Option<(::core::any::TypeId, &'static str)> {
            #probe.__rpc_needed_state()
        }
    });
    out.states.push(quote!(#state_fn as #rt::NeededState));
    let sfn = format_ident!("__schema_{}", i);
    out.schema_fns.push(quote! {
        fn #sfn(__g: &mut #rt::SchemaGenerator) -> #rt::Schema { #probe.__rpc_schema(__g) }
    });
    let doc = &p.doc;
    out.param_defs.push((
        Some(is_ctx),
        quote! {
            #rt::ParamDef { name: #pname, description: #doc, kind: #rt::ParamKind::Required, schema: #sfn, constraints: "" }
        },
    ));
    out.call_args.push(quote!(#var));
}

/// `__RPC_CTX_N`: whether the `N`th parameter, named like a context type, is one.
pub(super) fn is_context_const(i: usize, p: &Param) -> Ident {
    format_ident!("__RPC_CTX_{}", i, span = p.ty.span())
}

impl Params {
    /// Whether a parameter is a context one or not depending on its type.
    pub fn has_maybe_context(&self) -> bool {
        !self.maybe_consts.is_empty()
    }
}

/// `MethodDef::params`: the `ParamDef`s, or, when some parameters may be context ones,
/// `__RPC_PARAMS`, the const array of those that are not (see [`params_const`]).
pub(super) fn params_expr(params: &Params) -> TokenStream {
    if params.has_maybe_context() {
        quote!(&__RPC_PARAMS)
    } else {
        let defs = params.param_defs.iter().map(|(_, d)| d);
        quote!(&[#(#defs),*])
    }
}

/// The `__RPC_CTX_N` constants and `__RPC_PARAMS`, the `ParamDef`s of the parameters that are
/// JSON ones, selected at compile time; nothing when no parameter may be a context one.
pub(super) fn params_const(cx: &Cx, params: &Params) -> TokenStream {
    if !params.has_maybe_context() {
        return quote!();
    }
    let rt = &cx.rt;
    let consts = &params.maybe_consts;
    let entries = params.param_defs.iter().map(|(is_ctx, d)| match is_ctx {
        Some(c) => quote!((!#c, #d)),
        None => quote!((true, #d)),
    });
    let counts = params.param_defs.iter().map(|(is_ctx, _)| match is_ctx {
        Some(c) => quote!((!#c as usize)),
        None => quote!(1usize),
    });
    quote! {
        #(#consts)*
        const __RPC_PARAMS: [#rt::ParamDef; 0usize #(+ #counts)*] = #rt::json_params([#(#entries),*]);
    }
}
