//! Expansion: the `const _: () = { ... };` block registering one method, resource or prompt,
//! assembled from small expanders: the groups and the tool-name check (`record`), the probes
//! (`probes`), each parameter's pieces (`params`), the result (`output`), the dispatch function
//! (`dispatch`), the completion functions (`complete`) and the records (`submit`).
//!
//! A method's `MethodDef` is submitted to the registry. A resource's or prompt's is a `static`
//! its `ResourceDef` or `PromptDef` points to, and only that record is submitted: it is not a
//! method of its groups.

mod complete;
mod dispatch;
mod output;
mod params;
mod probes;
mod record;
mod submit;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

use crate::model::{Method, Prompt, Resource};

/// What every expander of a method needs.
struct Cx<'a> {
    m: &'a Method,
    /// `#krate::__private`.
    rt: TokenStream,
}

impl<'a> Cx<'a> {
    fn new(m: &'a Method) -> Self {
        let krate = &m.krate;
        Cx {
            m,
            rt: quote!(#krate::__private),
        }
    }

    /// An early return value of the dispatch function: boxed in a ready future when async.
    fn early(&self, e: TokenStream) -> TokenStream {
        if self.m.is_async {
            let rt = &self.rt;
            quote!(#rt::ready(#e))
        } else {
            e
        }
    }
}

/// The `const _: () = { ... };` block registering one method.
pub fn method(m: &Method) -> TokenStream {
    let cx = Cx::new(m);
    let name_check = record::tool_name_check(&cx);
    let (call, params) = call(&cx);
    let def = submit::method_def(&cx, &params);
    let rt = &cx.rt;
    block(quote! {
        #name_check
        #call
        #rt::inventory::submit! { #def }
    })
}

/// The `const _: () = { ... };` block registering one resource.
pub fn resource(r: &Resource) -> TokenStream {
    let cx = Cx::new(&r.method);
    let (call, params) = call(&cx);
    let param_checks = record::resource_param_checks(&cx, r);
    let def = submit::method_def(&cx, &params);
    let (complete_fns, completions) = complete::expand(&cx);
    let record = submit::resource_def(&cx, r, &completions);
    mcp_block(&cx, quote!(#call #param_checks), def, complete_fns, record)
}

/// The `const _: () = { ... };` block registering one prompt.
pub fn prompt(p: &Prompt) -> TokenStream {
    let cx = Cx::new(&p.method);
    let (call, params) = call(&cx);
    let def = submit::method_def(&cx, &params);
    let (complete_fns, completions) = complete::expand(&cx);
    let record = submit::prompt_def(&cx, p, &completions);
    mcp_block(&cx, call, def, complete_fns, record)
}

/// A resource's or prompt's block: its method as `static __RPC_METHOD`, and its record.
fn mcp_block(
    cx: &Cx,
    call: TokenStream,
    def: TokenStream,
    complete_fns: TokenStream,
    record: TokenStream,
) -> TokenStream {
    let rt = &cx.rt;
    block(quote! {
        #call
        #complete_fns
        static __RPC_METHOD: #rt::MethodDef = #def;
        #rt::inventory::submit! { #record }
    })
}

fn block(body: TokenStream) -> TokenStream {
    quote_spanned! {Span::call_site()=>
        #[doc(hidden)]
        #[allow(non_snake_case, dead_code, clippy::all)]
        const _: () = { #body };
    }
}

/// Everything a `MethodDef` points to: the groups, the type assertions, the probes, the
/// parameters' functions, the dispatch function and the output schema function.
fn call(cx: &Cx) -> (TokenStream, params::Params) {
    let groups_const = record::groups_const(cx);
    let params = params::expand(cx);
    let output = output::expand(cx);
    let asserts = params.asserts.iter().chain(&output.assert);
    let probes = probes::probes(&cx.rt);
    let context_probes = if params.has_maybe_context() {
        probes::context_probes(&cx.rt)
    } else {
        quote!()
    };
    let params_const = params::params_const(cx, &params);
    let error_fn = &output.error_fn;
    let defaults = &params.defaults;
    let schema_fns = &params.schema_fns;
    let call_fn = dispatch::call_fn(cx, &params, &output);
    let output_schema_fn = output::schema_fn(cx, &output);
    let tokens = quote! {
        #groups_const

        #[allow(dead_code)]
        fn __assert_types() { #(#asserts)* }

        #probes
        #context_probes
        #error_fn

        #(#defaults)*
        #(#schema_fns)*
        #params_const

        #call_fn

        #output_schema_fn
    };
    (tokens, params)
}
