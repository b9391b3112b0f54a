//! One checked model of a method, built from its signature and attributes.

use proc_macro2::{Span, TokenStream};
use syn::{Attribute, Expr, FnArg, Ident, Pat, Path, ReturnType, Signature, Type};

use crate::attr::{self, McpToolArgs, RpcMethodArgs};
use crate::ctxt::Ctxt;

/// What `#[rpc_service]` gives its methods.
pub struct Service {
    pub self_ty: Type,
    pub name: String,
    pub concat: String,
    pub groups: Option<Vec<Path>>,
    /// `groups` was written on the service, possibly with a bad value.
    pub groups_written: bool,
    pub version: Option<u32>,
    /// `version` was written on the service, possibly with a bad value.
    pub version_written: bool,
    pub krate: Option<Path>,
}

/// Where a method's name comes from (for the hint of an invalid tool name).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum NameOrigin {
    /// `name = "..."`.
    Explicit,
    /// The function's name.
    Function,
    /// `{service}{concat}{function}` of an `#[rpc_service]`.
    Service,
}

pub enum ParamKind {
    Required,
    Optional,
    Default(Expr),
    /// Filled from the context through `FromContext`.
    Context,
    /// `&RequestContext`.
    ContextRef,
}

pub struct LockModel {
    pub param: Option<String>,
    pub ttl_ms: u64,
    pub wait_ms: u64,
}

pub struct Param {
    pub ident: Ident,
    pub name: String,
    pub ty: Type,
    pub kind: ParamKind,
    pub doc: String,
    /// The constraints as a JSON object's text (`{"minLength":1}`), empty when none.
    pub constraints: String,
    pub check: Option<Path>,
}

impl Param {
    pub fn is_json(&self) -> bool {
        !matches!(self.kind, ParamKind::Context | ParamKind::ContextRef)
    }
}

pub enum Ret {
    Unit,
    Plain(Type),
    /// `Result<T, E>`: `E` converts into `RpcError` with `From` (`None` for an alias
    /// `Result<T>`).
    Result(Type, Option<Box<Type>>),
}

pub struct Method {
    pub krate: Path,
    pub ident: Ident,
    pub name: String,
    pub name_span: Span,
    pub name_origin: NameOrigin,
    pub groups: Vec<Path>,
    pub since: u32,
    pub removed_in: Option<u32>,
    pub docs: String,
    pub params: Vec<Param>,
    pub ret: Ret,
    pub is_async: bool,
    pub self_ty: Option<Type>,
    pub has_receiver: bool,
    pub tool: McpToolArgs,
    pub cache: Option<attr::CacheArgs>,
    pub lock: Option<LockModel>,
}

/// The text of `#[doc = "..."]` attributes, one leading space stripped per line.
pub fn doc_text(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for a in attrs {
        if !a.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &a.meta
            && let Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            let v = s.value();
            for line in v.split('\n') {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    lines.join("\n").trim().to_owned()
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

fn is_named(ty: &Type, names: &[&str]) -> bool {
    last_segment(ty).is_some_and(|s| names.iter().any(|n| s.ident == n))
}

fn generics(seg: &syn::PathSegment) -> Vec<&Type> {
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether an attribute's last path segment is `name` (`mcp_tool`, `mcp_runtime::mcp_tool`).
pub fn attr_is(a: &Attribute, name: &str) -> bool {
    a.path().segments.last().is_some_and(|s| s.ident == name)
}

/// Builds the model, stripping the attributes it consumes from the signature and `attrs`.
pub fn build(
    cx: &Ctxt,
    sig: &mut Signature,
    attrs: &mut Vec<Attribute>,
    args: RpcMethodArgs,
    service: Option<&Service>,
    attr_tokens: TokenStream,
) -> Option<Method> {
    // #[mcp_tool(...)] attributes are consumed here.
    let mut tool = None;
    let mut kept = Vec::with_capacity(attrs.len());
    for a in attrs.drain(..) {
        if attr_is(&a, "mcp_tool") {
            if tool.is_some() {
                cx.error_spanned_by(&a, "duplicate `#[mcp_tool]` attribute");
                continue;
            }
            let tokens = match &a.meta {
                syn::Meta::List(l) => l.tokens.clone(),
                _ => proc_macro2::TokenStream::new(),
            };
            tool = Some(attr::parse_mcp_tool(cx, tokens));
        } else {
            kept.push(a);
        }
    }
    *attrs = kept;
    let docs = doc_text(attrs);

    if let Some(c) = &sig.constness {
        cx.error_spanned_by(c, "an RPC method cannot be a `const fn`");
    }
    if let Some(u) = &sig.unsafety {
        cx.error_spanned_by(u, "an RPC method cannot be `unsafe`");
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "an RPC method cannot have an `extern` ABI");
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            "an RPC method cannot be generic: its JSON Schemas are built for concrete types",
        );
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, "an RPC method cannot be variadic");
    }

    let mut params: Vec<Param> = Vec::new();
    let mut has_receiver = false;
    for input in sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(r) => {
                if service.is_none() {
                    cx.error_spanned_by(
                        &*r,
                        "`self` is only allowed in methods of an impl marked `#[rpc_service]`; \
                         add `#[rpc_service]` to the impl block, or make this a free function",
                    );
                } else if r.reference.is_none() || r.mutability.is_some() {
                    cx.error_spanned_by(
                        &*r,
                        "an `#[rpc_service]` method takes `&self` (the instance is shared between calls; \
                         use interior mutability for state)",
                    );
                }
                has_receiver = true;
            }
            FnArg::Typed(pt) => {
                let mut doc_attrs = Vec::new();
                let mut pargs = attr::ParamArgs::default();
                let mut seen_param = false;
                pt.attrs.retain(|a| {
                    if a.path().is_ident("doc") {
                        doc_attrs.push(a.clone());
                        false
                    } else if a.path().is_ident("param") {
                        if seen_param {
                            cx.error_spanned_by(
                                a,
                                "duplicate `#[param]` attribute: put every key in one",
                            );
                        }
                        seen_param = true;
                        pargs = attr::parse_param(cx, a);
                        false
                    } else {
                        true
                    }
                });
                let ident = match &*pt.pat {
                    Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
                        pi.ident.clone()
                    }
                    other => {
                        cx.error_spanned_by(
                            other,
                            "an RPC method parameter must be a plain name, as in `query: String`: \
                             the name is the parameter's name in the request (destructure it in \
                             the body instead)",
                        );
                        continue;
                    }
                };
                let ty = (*pt.ty).clone();
                let kind = if pargs.context {
                    ParamKind::Context
                } else if let Type::Reference(r) = &ty {
                    if is_named(&r.elem, &["RequestContext"]) && r.mutability.is_none() {
                        ParamKind::ContextRef
                    } else {
                        cx.error_spanned_by(
                            &ty,
                            "an RPC method parameter must be an owned type (`String`, not `&str`): \
                             it is deserialized from the request (only `&RequestContext` can be \
                             borrowed)",
                        );
                        continue;
                    }
                } else if let Type::ImplTrait(_) = &ty {
                    cx.error_spanned_by(
                        &ty,
                        "an RPC method parameter cannot be `impl Trait`: its JSON Schema is built \
                         for a concrete type",
                    );
                    continue;
                } else if is_named(&ty, &["RequestContext", "State"]) {
                    ParamKind::Context
                } else if let Some(d) = pargs.default.clone() {
                    ParamKind::Default(d)
                } else if is_named(&ty, &["Option"]) {
                    ParamKind::Optional
                } else {
                    ParamKind::Required
                };
                if matches!(kind, ParamKind::Context | ParamKind::ContextRef)
                    && let Some(d) = &pargs.default
                {
                    cx.error_spanned_by(d, "a context parameter cannot have a default");
                }
                let ident_name = ident.to_string();
                let name = pargs
                    .rename
                    .as_ref()
                    .map(|r| r.value.clone())
                    .unwrap_or_else(|| ident_name.trim_start_matches("r#").to_owned());
                let constraints = if pargs.keywords.is_empty() {
                    String::new()
                } else {
                    let body: Vec<String> = pargs
                        .keywords
                        .iter()
                        .map(|(k, v)| format!("{}:{v}", attr::json_string(k)))
                        .collect();
                    format!("{{{}}}", body.join(","))
                };
                if matches!(kind, ParamKind::Context | ParamKind::ContextRef)
                    && (!pargs.keywords.is_empty() || pargs.check.is_some())
                {
                    cx.error_spanned_by(
                        &ty,
                        "a context parameter cannot have constraints or checks",
                    );
                }
                let p = Param {
                    ident,
                    name,
                    ty,
                    kind,
                    doc: doc_text(&doc_attrs),
                    constraints,
                    check: pargs.check.clone(),
                };
                if p.is_json()
                    && let Some(prev) = params.iter().find(|q| q.is_json() && q.name == p.name)
                {
                    let span = pargs
                        .rename
                        .as_ref()
                        .map(|r| r.span)
                        .unwrap_or_else(|| p.ident.span());
                    cx.syn_error(syn::Error::new(
                        span,
                        format!(
                            "duplicate parameter name `{}`: parameters `{}` and `{}` would both be \
                             `{}` in the request; give one another name with \
                             `#[param(rename = \"...\")]`",
                            p.name, prev.ident, p.ident, p.name
                        ),
                    ));
                }
                params.push(p);
            }
        }
    }

    let ret = match &sig.output {
        ReturnType::Default => Ret::Unit,
        ReturnType::Type(_, ty) => match &**ty {
            Type::Tuple(t) if t.elems.is_empty() => Ret::Unit,
            ty => match last_segment(ty) {
                Some(seg) if seg.ident == "Result" => match generics(seg).as_slice() {
                    [ok] => Ret::Result((*ok).clone(), None),
                    [ok, err] => Ret::Result((*ok).clone(), Some(Box::new((*err).clone()))),
                    _ => Ret::Plain(ty.clone()),
                },
                _ => Ret::Plain(ty.clone()),
            },
        },
    };

    let fn_name = sig.ident.to_string();
    let fn_name = fn_name.trim_start_matches("r#");
    let (name, name_span, name_origin) = match (&args.name, service) {
        (Some(n), _) => (n.value.clone(), n.span, NameOrigin::Explicit),
        (None, Some(s)) => (
            format!("{}{}{}", s.name, s.concat, fn_name),
            sig.ident.span(),
            NameOrigin::Service,
        ),
        (None, None) => (fn_name.to_owned(), sig.ident.span(), NameOrigin::Function),
    };
    if name.is_empty() {
        cx.syn_error(syn::Error::new(name_span, "a method name cannot be empty"));
    }

    let groups_written = args.has("groups") || service.is_some_and(|s| s.groups_written);
    let groups = match (&args.groups, service.and_then(|s| s.groups.as_ref())) {
        (Some(g), _) => {
            if g.value.is_empty() {
                cx.syn_error(syn::Error::new(
                    g.span,
                    "`groups` cannot be empty: name at least one API group, e.g. `groups = [MCP]`",
                ));
            }
            g.value.clone()
        }
        (None, Some(g)) => g.clone(),
        // A bad `groups = ...` was reported already.
        (None, None) if groups_written => Vec::new(),
        (None, None) => {
            let msg = if service.is_some() {
                "missing `groups = [...]`: every RPC method belongs to at least one API group; \
                 give it here or on the `#[rpc_service(groups = [...])]` for all its methods"
            } else {
                "missing `groups = [...]`: every RPC method belongs to at least one API group, \
                 e.g. `#[rpc_method(groups = [MCP])]` with `const MCP: ApiGroup = ApiGroup::mcp(\"mcp\");`"
            };
            cx.syn_error(syn::Error::new_spanned(&attr_tokens, msg));
            Vec::new()
        }
    };
    let version_ok = !args.has("version") || args.version.is_some();
    let since = match &args.version {
        Some(v) if v.value == 0 => {
            cx.syn_error(syn::Error::new(
                v.span,
                "versions start at 1: `version = 1` is the first version",
            ));
            1
        }
        Some(v) => v.value,
        None => service.and_then(|s| s.version).unwrap_or(1),
    };
    let version_ok = version_ok
        && args.version.as_ref().is_none_or(|v| v.value > 0)
        && (args.version.is_some()
            || service.is_none_or(|s| !s.version_written || s.version.is_some()));
    if let Some(r) = &args.removed_in
        && !version_ok
        && r.value <= 1
    {
        // The first version is unknown (its value is bad), but it is at least 1.
        cx.syn_error(syn::Error::new(
            r.span,
            format!(
                "`removed_in = {}` must be greater than the first version, which is at least 1",
                r.value
            ),
        ));
    }
    if let Some(r) = &args.removed_in
        && r.value <= since
        && version_ok
    {
        let from = if args.version.is_some() {
            format!("`version = {since}`")
        } else if service.is_some_and(|s| s.version.is_some()) {
            format!("the service's `version = {since}`")
        } else {
            format!("the default first version, {since}")
        };
        cx.syn_error(syn::Error::new(
            r.span,
            format!(
                "`removed_in = {}` must be greater than the first version ({from}): a method \
                 exists from `version` up to, not including, `removed_in`",
                r.value
            ),
        ));
    }
    let lock = args.lock.map(|l| {
        if let Some(p) = &l.param
            && !params.iter().any(|q| q.is_json() && q.name == p.value)
        {
            let names: Vec<&str> = params
                .iter()
                .filter(|q| q.is_json())
                .map(|q| q.name.as_str())
                .collect();
            cx.syn_error(syn::Error::new(
                p.span,
                format!(
                    "`lock(param = \"{}\")` names no parameter of this method; its parameters: {}",
                    p.value,
                    names.join(", ")
                ),
            ));
        }
        LockModel {
            param: l.param.map(|p| p.value),
            ttl_ms: l.ttl_ms,
            wait_ms: l.wait_ms,
        }
    });
    let krate = args
        .krate
        .or_else(|| service.and_then(|s| s.krate.clone()))
        .unwrap_or_else(|| syn::parse_quote!(::mcp_runtime));

    Some(Method {
        krate,
        ident: sig.ident.clone(),
        name,
        name_span,
        name_origin,
        groups,
        since,
        removed_in: args.removed_in.map(|r| r.value),
        docs,
        params,
        ret,
        is_async: sig.asyncness.is_some(),
        self_ty: service.map(|s| s.self_ty.clone()),
        has_receiver,
        tool: tool.unwrap_or_default(),
        cache: args.cache,
        lock,
    })
}
