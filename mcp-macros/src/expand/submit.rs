//! The records: a method's `MethodDef`, and the `ResourceDef` or `PromptDef` around it.

use proc_macro2::{Literal, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned as _;

use super::Cx;
use super::params::Params;
use crate::attr::{AppArgs, AppPermission, IconArgs, Role};
use crate::model::{Kind, Prompt, Resource};

/// The `MethodDef { ... }` expression.
pub(super) fn method_def(cx: &Cx, params: &Params) -> TokenStream {
    let (m, rt) = (cx.m, &cx.rt);
    let name = &m.name;
    let docs = &m.docs;
    let since = m.since;
    let removed_in = match &m.removed_in {
        Some(r) => {
            let r = r.value;
            quote!(::core::option::Option::Some(#r))
        }
        None => quote!(::core::option::Option::None),
    };
    let param_defs = super::params::params_expr(params);
    let (annotations, output_schema) = match m.kind {
        Kind::Method => (annotations(cx), quote!(__output_schema)),
        Kind::Resource | Kind::Prompt => (
            quote!(#rt::ToolAnnotations::NONE),
            quote!(|_| ::core::option::Option::None),
        ),
    };
    let handler = if m.is_async {
        quote!(#rt::Handler::Async(__call))
    } else {
        quote!(#rt::Handler::Sync(__call))
    };
    let cache = cache(cx);
    let lock = lock(cx);
    let rate_limit = rate_limit(cx);
    let task = match cx.m.tool.task {
        crate::attr::TaskSupport::Forbidden => quote!(#rt::TaskSupport::Forbidden),
        crate::attr::TaskSupport::Optional => quote!(#rt::TaskSupport::Optional),
        crate::attr::TaskSupport::Required => quote!(#rt::TaskSupport::Required),
    };
    let retry = cx.m.tool.retry;
    let transform = match &cx.m.transform {
        // Spanned at the path: a function of another type is reported where it is named.
        Some(f) => quote_spanned!(f.span()=> ::core::option::Option::Some({
            let f: fn(&mut #rt::Schema) = #f;
            f
        })),
        None => quote!(::core::option::Option::None),
    };
    let location = location(cx);
    let mut states = params.states.clone();
    if let Some(self_ty) = m.self_ty.as_ref().filter(|_| m.has_receiver()) {
        states.push(quote!(#rt::needed_state::<#rt::State<#self_ty>> as #rt::NeededState));
    }
    let scopes = m.scopes.iter().flat_map(|s| s.value.iter());
    let app = tool_app(cx);
    quote! {
        #rt::MethodDef {
            name: #name,
            groups: __RPC_GROUPS,
            since: #since,
            removed_in: #removed_in,
            docs: #docs,
            params: #param_defs,
            annotations: #annotations,
            output_schema: #output_schema,
            handler: #handler,
            cache: #cache,
            lock: #lock,
            rate_limit: #rate_limit,
            task: #task,
            retry: #retry,
            transform: #transform,
            location: #location,
            states: &[#(#states),*],
            scopes: &[#(#scopes),*],
            app: #app,
        }
    }
}

/// `ToolApp` of `#[mcp_tool(app = "ui://...", visibility = [...])]`.
fn tool_app(cx: &Cx) -> TokenStream {
    let (tool, rt) = (&cx.m.tool, &cx.rt);
    let Some(uri) = &tool.app else {
        return quote!(::core::option::Option::None);
    };
    let uri = &uri.value;
    let shown = |who: &str| {
        tool.visibility
            .as_ref()
            .is_none_or(|v| v.value.iter().any(|l| l.value() == who))
    };
    let (model, app) = (shown("model"), shown("app"));
    quote!(::core::option::Option::Some(#rt::ToolApp {
        resource_uri: #uri,
        model: #model,
        app: #app,
    }))
}

/// `AppUi` of `#[mcp_resource(app(...))]`.
fn app_ui(cx: &Cx, app: &AppArgs) -> TokenStream {
    let rt = &cx.rt;
    let (connect, resource, frame, base) = (
        &app.connect_domains,
        &app.resource_domains,
        &app.frame_domains,
        &app.base_uri_domains,
    );
    let permissions = app.permissions.iter().map(|(p, _)| match p {
        AppPermission::Camera => quote!(#rt::AppPermission::Camera),
        AppPermission::Microphone => quote!(#rt::AppPermission::Microphone),
        AppPermission::Geolocation => quote!(#rt::AppPermission::Geolocation),
        AppPermission::ClipboardWrite => quote!(#rt::AppPermission::ClipboardWrite),
    });
    let domain = opt(app.domain.as_ref().map(|d| &d.value));
    let prefers_border = opt(app.prefers_border);
    quote!(::core::option::Option::Some(#rt::AppUi {
        connect_domains: &[#(#connect),*],
        resource_domains: &[#(#resource),*],
        frame_domains: &[#(#frame),*],
        base_uri_domains: &[#(#base),*],
        permissions: &[#(#permissions),*],
        domain: #domain,
        prefers_border: #prefers_border,
    }))
}

/// The `ResourceDef { ... }` expression, its method being `__RPC_METHOD`.
pub(super) fn resource_def(cx: &Cx, r: &Resource, completions: &TokenStream) -> TokenStream {
    let rt = &cx.rt;
    let (name, uri, is_template) = (&r.name, r.uri.text(), r.uri.is_template());
    // An app's page has one MIME type (the check refuses any other).
    let mime_type = match (&r.mime_type, &r.app) {
        (None, Some(_)) => quote!(::core::option::Option::Some(#rt::APP_MIME_TYPE)),
        (m, _) => opt(m.as_ref()),
    };
    let app = match &r.app {
        Some(a) => app_ui(cx, a),
        None => quote!(::core::option::Option::None),
    };
    let size = opt(r.size.as_ref().map(|s| s.value));
    let icons = icons(cx, &r.icons);
    let annotations = if r.audience.is_empty() && r.priority.is_none() && r.last_modified.is_none()
    {
        quote!(#rt::Annotations::NONE)
    } else {
        let audience = r.audience.iter().map(|a| match a {
            Role::User => quote!(#rt::Role::User),
            Role::Assistant => quote!(#rt::Role::Assistant),
        });
        let priority = opt(r.priority.as_ref().map(|(p, _)| Literal::f64_suffixed(*p)));
        let last_modified = opt(r.last_modified.as_ref());
        quote! {
            #rt::Annotations {
                audience: &[#(#audience),*],
                priority: #priority,
                last_modified: #last_modified,
            }
        }
    };
    quote! {
        #rt::ResourceDef {
            method: &__RPC_METHOD,
            name: #name,
            uri: #uri,
            is_template: #is_template,
            mime_type: #mime_type,
            size: #size,
            annotations: #annotations,
            icons: #icons,
            completions: #completions,
            app: #app,
        }
    }
}

/// The `PromptDef { ... }` expression, its method being `__RPC_METHOD`.
pub(super) fn prompt_def(cx: &Cx, p: &Prompt, completions: &TokenStream) -> TokenStream {
    let rt = &cx.rt;
    let name = &p.name;
    let icons = icons(cx, &p.icons);
    quote! {
        #rt::PromptDef {
            method: &__RPC_METHOD,
            name: #name,
            icons: #icons,
            completions: #completions,
        }
    }
}

/// `&[Icon { ... }, ...]`.
fn icons(cx: &Cx, icons: &[IconArgs]) -> TokenStream {
    let rt = &cx.rt;
    let icons = icons.iter().map(|i| {
        let (src, sizes) = (&i.src, &i.sizes);
        let (mime_type, theme) = (opt(i.mime_type.as_ref()), opt(i.theme.as_ref()));
        quote! {
            #rt::Icon { src: #src, mime_type: #mime_type, sizes: &[#(#sizes),*], theme: #theme }
        }
    });
    quote!(&[#(#icons),*])
}

/// `Some(v)` or `None`.
fn opt(v: Option<impl ToTokens>) -> TokenStream {
    match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// `ToolAnnotations` of `#[mcp_tool(...)]`.
fn annotations(cx: &Cx) -> TokenStream {
    let (tool, rt) = (&cx.m.tool, &cx.rt);
    let title = opt(tool.title.as_ref());
    let (ro, de, id, ow) = (
        opt(tool.read_only_hint),
        opt(tool.destructive_hint),
        opt(tool.idempotent_hint),
        opt(tool.open_world_hint),
    );
    quote! {
        #rt::ToolAnnotations {
            title: #title,
            read_only_hint: #ro,
            destructive_hint: #de,
            idempotent_hint: #id,
            open_world_hint: #ow,
        }
    }
}

/// `CachePolicy` of `cache(...)`.
fn cache(cx: &Cx) -> TokenStream {
    let rt = &cx.rt;
    match &cx.m.cache {
        Some(c) => {
            let ttl = c.ttl_ms;
            let envs = opt(c.envs.as_ref().map(|list| quote!(&[#(#list),*])));
            quote!(::core::option::Option::Some(#rt::CachePolicy { ttl_ms: #ttl, envs: #envs }))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// `LockPolicy` of `lock(...)`.
fn lock(cx: &Cx) -> TokenStream {
    let rt = &cx.rt;
    match &cx.m.lock {
        Some(l) => {
            let (ttl, wait) = (l.ttl_ms, l.wait_ms);
            let param = opt(l.param.as_ref().map(|p| &p.value));
            quote!(::core::option::Option::Some(#rt::LockPolicy { param: #param, ttl_ms: #ttl, wait_ms: #wait }))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// `RateLimit` of `rate_limit(...)` (const fns: the record stays a static).
fn rate_limit(cx: &Cx) -> TokenStream {
    let rt = &cx.rt;
    match &cx.m.rate_limit {
        Some(r) => {
            let (count, period) = (r.count, r.period_ms);
            let mut limit =
                quote!(#rt::RateLimit::new(#count, ::core::time::Duration::from_millis(#period)));
            if let Some(b) = r.burst {
                limit = quote!(#limit.burst(#b));
            }
            if r.per_method {
                limit = quote!(#limit.per_method());
            }
            quote!(::core::option::Option::Some(#limit))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// `SourceLocation`: the file, the line of the function's name and its Rust path.
fn location(cx: &Cx) -> TokenStream {
    let (m, rt) = (cx.m, &cx.rt);
    let ident = &m.ident;
    let line = quote_spanned!(m.ident.span()=> ::core::line!());
    let rust_path = match &m.self_ty {
        Some(t) => quote!(::core::concat!(
            ::core::module_path!(),
            "::",
            ::core::stringify!(#t),
            "::",
            ::core::stringify!(#ident)
        )),
        None => quote!(::core::concat!(
            ::core::module_path!(),
            "::",
            ::core::stringify!(#ident)
        )),
    };
    quote!(#rt::SourceLocation { file: ::core::file!(), line: #line, rust_path: #rust_path })
}
