//! The method's groups, and the compile-time check of its MCP tool name.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::LitStr;

use super::Cx;
use crate::attr::path_name;
use crate::model::NameOrigin;

/// The groups, written once so a bad group path is reported once.
pub(super) fn groups_const(cx: &Cx) -> TokenStream {
    let rt = &cx.rt;
    let groups = &cx.m.groups;
    quote! {
        const __RPC_GROUPS: &[#rt::ApiGroup] = &[#(#groups),*];
    }
}

/// Why `name` is not a valid MCP tool name (`^[a-zA-Z0-9_.-]{1,128}$`), if it is not.
fn invalid_tool_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".to_owned());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Some(format!("{c:?} is not allowed"));
    }
    if name.len() > 128 {
        return Some(format!("it is {} characters long", name.len()));
    }
    None
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
