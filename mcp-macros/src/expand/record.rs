//! The method's groups, and the compile-time checks of its MCP tool name and of a resource's
//! parameters that may be context ones.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::LitStr;

use super::Cx;
use super::params::is_context_const;
use crate::attr::path_name;
use crate::check::{self, invalid_tool_name};
use crate::model::{NameOrigin, ParamKind, Resource, ResourceUri};
use crate::uri;

/// The groups, written once so a bad group path is reported once.
pub(super) fn groups_const(cx: &Cx) -> TokenStream {
    let rt = &cx.rt;
    let groups = &cx.m.groups;
    quote! {
        const __RPC_GROUPS: &[#rt::ApiGroup] = &[#(#groups),*];
    }
}

/// How to fix a bad tool name, by where the name comes from.
fn hint(origin: NameOrigin) -> &'static str {
    match origin {
        NameOrigin::Explicit => "give the method a valid `name = \"...\"`",
        NameOrigin::Function => {
            "give the method a valid `name = \"...\"` (the default is the function's name)"
        }
        NameOrigin::Service => {
            "the name joins the `#[rpc_service]` name, its `concat` and the function's name: \
             use a valid `concat` (the default is `.`), give the method a valid `name = \"...\"`"
        }
    }
}

/// A bad tool name in an MCP group fails const evaluation, at the name's span. The runtime's
/// `is_valid_tool_name` decides; the macro only words the message.
pub(super) fn tool_name_check(cx: &Cx) -> TokenStream {
    let (m, rt) = (cx.m, &cx.rt);
    let name_lit = LitStr::new(&m.name, m.name_span);
    let problem = invalid_tool_name(&m.name)
        .map(|p| format!(" ({p})"))
        .unwrap_or_default();
    let hint = hint(m.name_origin);
    let arms = m.groups.iter().enumerate().map(|(i, g)| {
        let msg = format!(
            "`{}` is not a valid MCP tool name{problem}, and group `{}` is published over \
             MCP: tool names must match ^[a-zA-Z0-9_.-]{{1,128}}$; {hint}, or publish the \
             method only in JSON-RPC groups (made with `ApiGroup::rpc`)",
            m.name,
            path_name(g)
        );
        let msg = LitStr::new(&msg.replace('{', "{{").replace('}', "}}"), m.name_span);
        quote_spanned! {m.name_span=>
            if #rt::ApiGroup::is_mcp(&__RPC_GROUPS[#i]) { ::core::panic!(#msg) }
        }
    });
    quote_spanned! {m.name_span=>
        const MCP_TOOL_NAME_CHECK: () = if !#rt::is_valid_tool_name(#name_lit) { #(#arms)* };
    }
}

/// A parameter named like a context type (`State<T>`) is one or not depending on its type, known
/// only after expansion: a resource checks it in const evaluation, at the parameter. In a URI
/// template it must be a JSON parameter if it has a variable's name, else a context parameter;
/// with a fixed URI, a context parameter.
pub(super) fn resource_param_checks(cx: &Cx, r: &Resource) -> TokenStream {
    let vars = match &r.uri {
        ResourceUri::Template(t) => uri::template_variables(&t.value).unwrap_or_default(),
        _ => Vec::new(),
    };
    let checks =
        cx.m.params
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(p.kind, ParamKind::MaybeContext))
            .map(|(i, p)| {
                let is_ctx = is_context_const(i, p);
                let (fails_if, msg) = match &r.uri {
                    ResourceUri::Template(_) if vars.contains(&p.name.as_str()) => (
                        quote!(#is_ctx),
                        format!(
                            "URI template variable `{0}` has no parameter: parameter `{0}` is a \
                             context parameter (its type implements `FromContext`), not a value \
                             from the URI; rename the variable or the parameter",
                            p.name
                        ),
                    ),
                    ResourceUri::Template(t) => {
                        (quote!(!#is_ctx), check::not_a_variable(&p.name, &t.value))
                    }
                    _ => (quote!(!#is_ctx), check::fixed_uri_param(&p.name)),
                };
                let msg = LitStr::new(&msg.replace('{', "{{").replace('}', "}}"), p.name_span);
                let name = format_ident!("RESOURCE_PARAM_CHECK_{}", i);
                quote_spanned! {p.name_span=>
                    const #name: () = if #fails_if { ::core::panic!(#msg) };
                }
            });
    quote!(#(#checks)*)
}
