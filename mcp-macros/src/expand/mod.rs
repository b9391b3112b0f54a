//! Expansion: the `const _: () = { ... };` block registering one method, assembled from small
//! expanders: the groups and the tool-name check (`record`), the probes (`probes`), each
//! parameter's pieces (`params`), the result (`output`), the dispatch function (`dispatch`) and
//! the `MethodDef` submitted to the registry (`submit`).

mod dispatch;
mod output;
mod params;
mod probes;
mod record;
mod submit;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

use crate::model::Method;

/// What every expander of a method needs.
struct Cx<'a> {
    m: &'a Method,
    /// `#krate::__private`.
    rt: TokenStream,
}

impl Cx<'_> {
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
    let krate = &m.krate;
    let cx = Cx {
        m,
        rt: quote!(#krate::__private),
    };
    let groups_const = record::groups_const(&cx);
    let name_check = record::tool_name_check(&cx);
    let params = params::expand(&cx);
    let output = output::expand(&cx);
    let asserts = params.asserts.iter().chain(&output.assert);
    let probes = probes::probes(&cx.rt);
    let context_probes = if params.has_maybe_context() {
        probes::context_probes(&cx.rt)
    } else {
        quote!()
    };
    let params_const = params::params_const(&cx, &params);
    let error_fn = &output.error_fn;
    let defaults = &params.defaults;
    let schema_fns = &params.schema_fns;
    let call_fn = dispatch::call_fn(&cx, &params, &output);
    let output_schema_fn = output::schema_fn(&cx, &output);
    let submit = submit::method_def(&cx, &params);

    quote_spanned! {Span::call_site()=>
        #[doc(hidden)]
        #[allow(non_snake_case, dead_code, clippy::all)]
        const _: () = {
            #groups_const
            #name_check

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

            #submit
        };
    }
}
