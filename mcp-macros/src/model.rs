//! The model of a method (and of a service), built from its signature and parsed attributes.
//!
//! Building never fails and reports nothing itself beyond attribute parsing: what the user
//! wrote is kept as written (with its spans), and the rules about it are in `check`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{
    Attribute, Expr, FnArg, Ident, ItemImpl, LitStr, Pat, Path, ReturnType, Signature, Type,
};

use crate::attr::{
    self, AppArgs, CacheArgs, CompleteArgs, IconArgs, McpArgs, McpToolArgs, Role, RpcMethodArgs,
    ServiceArgs, Spanned,
};
use crate::ctxt::Ctxt;

/// What `#[rpc_service]` gives its methods.
pub struct Service {
    pub self_ty: Type,
    pub name: String,
    pub concat: String,
    /// `groups = [...]` as written (possibly empty).
    pub groups: Option<Spanned<Vec<Path>>>,
    /// `groups` was written on the service, possibly with a bad value.
    pub groups_written: bool,
    /// `version = N` as written (possibly 0).
    pub version: Option<Spanned<u32>>,
    /// `version` was written on the service, possibly with a bad value.
    pub version_written: bool,
    pub krate: Option<Path>,
    /// The `Trait for` of a trait impl.
    pub trait_for: Option<TokenStream>,
    pub generics: syn::Generics,
}

impl Service {
    pub fn build(imp: &ItemImpl, args: ServiceArgs) -> Service {
        let type_name = match &*imp.self_ty {
            Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        let (groups_written, version_written) = (args.has(attr::GROUPS), args.has(attr::VERSION));
        Service {
            self_ty: (*imp.self_ty).clone(),
            name: args.name.map(|n| n.value).or(type_name).unwrap_or_default(),
            concat: args
                .concat
                .map(|c| c.value)
                .unwrap_or_else(|| ".".to_owned()),
            groups_written,
            groups: args.groups,
            version_written,
            version: args.version,
            krate: args.krate,
            trait_for: imp
                .trait_
                .as_ref()
                .map(|(_, path, for_token)| quote!(#path #for_token)),
            generics: imp.generics.clone(),
        }
    }

    /// The first version of its methods, when it is given and valid.
    fn valid_version(&self) -> Option<u32> {
        self.version.as_ref().map(|v| v.value).filter(|v| *v > 0)
    }
}

/// What a function is published as: the method record is the same, the rules and the record
/// around it differ.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `#[rpc_method]`: a JSON-RPC method (and MCP tool).
    Method,
    /// `#[mcp_resource]`.
    Resource,
    /// `#[mcp_prompt]`.
    Prompt,
}

impl Kind {
    /// "an RPC method", for messages.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Method => "an RPC method",
            Kind::Resource => "an MCP resource",
            Kind::Prompt => "an MCP prompt",
        }
    }

    /// The attribute: `rpc_method`.
    pub fn attr(self) -> &'static str {
        match self {
            Kind::Method => attr::RPC_METHOD_ATTR,
            Kind::Resource => attr::MCP_RESOURCE_ATTR,
            Kind::Prompt => attr::MCP_PROMPT_ATTR,
        }
    }
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
    /// An owned type named like a context type (`State<T>`, `RequestContext`), without
    /// `#[param(context)]` and without keys of a JSON parameter: the compiler decides, not the
    /// name. A context parameter if its type implements `FromContext`, else a required JSON
    /// parameter (a user's `State` DTO).
    MaybeContext,
}

/// The shape of a parameter's type, as far as the rules care.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TypeShape {
    Owned,
    /// `&T` (only `&RequestContext` may be borrowed).
    Borrowed,
    /// `impl Trait`.
    ImplTrait,
}

pub struct LockModel {
    pub param: Option<Spanned<String>>,
    pub ttl_ms: u64,
    pub wait_ms: u64,
}

pub struct Param {
    /// The pattern as written.
    pub pat: Pat,
    /// Its name, when the pattern is a plain name.
    pub ident: Option<Ident>,
    /// The name in the request.
    pub name: String,
    /// The span of `rename = "..."`, else of the name.
    pub name_span: Span,
    pub ty: Type,
    pub shape: TypeShape,
    pub kind: ParamKind,
    /// `default = ...` as written (also on a context parameter, where it is an error).
    pub default: Option<Expr>,
    pub doc: String,
    /// The constraints as a JSON object's text (`{"minLength":1}`), empty when none.
    pub constraints: String,
    /// The `pattern = "..."` regular expressions.
    pub patterns: Vec<Spanned<String>>,
    pub check: Option<Path>,
    /// `header = "Name"` (SEP-2243 `x-mcp-header`).
    pub header: Option<Spanned<String>>,
    /// `#[complete(with = f)]`.
    pub complete: Option<CompleteArgs>,
}

impl Param {
    /// Surely a JSON parameter.
    pub fn is_json(&self) -> bool {
        !matches!(
            self.kind,
            ParamKind::Context | ParamKind::ContextRef | ParamKind::MaybeContext
        )
    }

    /// Surely a context parameter.
    pub fn is_context(&self) -> bool {
        matches!(self.kind, ParamKind::Context | ParamKind::ContextRef)
    }

    /// A plain name and, for a JSON parameter, an owned type: the parameter can be generated.
    pub fn is_well_formed(&self) -> bool {
        self.ident.is_some() && (!self.is_json() || self.shape == TypeShape::Owned)
    }
}

pub enum Ret {
    Unit,
    Plain(Type),
    /// `Result<T, E>`: `E` converts into `RpcError` with `From` (`None` for an alias
    /// `Result<T>`).
    Result(Type, Option<Box<Type>>),
}

/// Where the groups of a method come from.
pub enum GroupsOrigin {
    /// `groups = [...]` on the method, with the span of the list.
    Method(Span),
    /// The service's `groups`.
    Service,
    /// Written with a bad value (on the method or its service), reported already.
    Invalid,
    /// Not written anywhere.
    Missing,
}

/// Where the first version of a method comes from.
pub enum SinceOrigin {
    /// `version = N` on the method (possibly 0).
    Method(Spanned<u32>),
    /// The service's `version = N`.
    Service,
    /// Neither: the default, 1.
    Default,
    /// Written with a bad value (on the method or its service): unknown.
    Invalid,
}

pub struct Method {
    pub kind: Kind,
    pub krate: Path,
    pub ident: Ident,
    /// The signature, without the attributes the macros consume.
    pub sig: Signature,
    /// The `rpc_method` arguments, or the whole attribute when it has none: the span of errors
    /// about the attribute as a whole.
    pub attr_tokens: TokenStream,
    pub name: String,
    pub name_span: Span,
    pub name_origin: NameOrigin,
    pub groups: Vec<Path>,
    pub groups_origin: GroupsOrigin,
    pub since: u32,
    pub since_origin: SinceOrigin,
    pub removed_in: Option<Spanned<u32>>,
    pub docs: String,
    pub params: Vec<Param>,
    pub ret: Ret,
    pub is_async: bool,
    /// The service type of a method in an `#[rpc_service]`.
    pub self_ty: Option<Type>,
    /// Whether it is in an `#[rpc_service]` (even one with errors).
    pub in_service: bool,
    /// `self` as written.
    pub receiver: Option<syn::Receiver>,
    pub tool: McpToolArgs,
    pub cache: Option<CacheArgs>,
    pub lock: Option<LockModel>,
    pub rate_limit: Option<crate::attr::RateLimitArgs>,
    /// `transform = path`.
    pub transform: Option<Path>,
    /// `scopes = [...]`.
    pub scopes: Option<Spanned<Vec<LitStr>>>,
}

impl Method {
    pub fn has_receiver(&self) -> bool {
        self.receiver.is_some()
    }

    /// The JSON parameters that can be generated.
    pub fn json_params(&self) -> impl Iterator<Item = &Param> {
        self.params
            .iter()
            .filter(|p| p.is_json() && p.is_well_formed())
    }

    /// Whether a JSON parameter, or a parameter that may be one (`MaybeContext`), is named
    /// `name` in the request.
    pub fn may_take(&self, name: &str) -> bool {
        self.json_params().any(|p| p.name == name)
            || self
                .params
                .iter()
                .any(|p| matches!(p.kind, ParamKind::MaybeContext) && p.name == name)
    }
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

/// Builds the model, stripping the attributes it consumes (`#[mcp_tool]` of a method,
/// `#[param]`, `#[complete]`, the parameters' doc comments) from the signature and `attrs`.
pub fn build(
    cx: &Ctxt,
    kind: Kind,
    sig: &mut Signature,
    attrs: &mut Vec<Attribute>,
    args: RpcMethodArgs,
    service: Option<&Service>,
    attr_tokens: TokenStream,
) -> Method {
    // On a resource or prompt, `#[mcp_tool]` is left in place: expanded on its own, it says it
    // needs `#[rpc_method]`.
    let tool = match kind {
        Kind::Method => attr::take_mcp_tool(cx, attrs),
        Kind::Resource | Kind::Prompt => None,
    };
    let docs = attr::doc_text(attrs);
    let mut receiver = None;
    let mut params = Vec::new();
    for input in sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(r) => receiver = Some(r.clone()),
            FnArg::Typed(pt) => params.push(param(cx, pt)),
        }
    }
    let (name, name_span, name_origin) = name(sig, &args, service);
    let (groups, groups_origin) = groups(&args, service);
    let (since, since_origin) = since(&args, service);
    let krate = args
        .krate
        .or_else(|| service.and_then(|s| s.krate.clone()))
        .unwrap_or_else(|| syn::parse_quote!(::mcp_runtime));
    Method {
        kind,
        krate,
        ident: sig.ident.clone(),
        attr_tokens,
        name,
        name_span,
        name_origin,
        groups,
        groups_origin,
        since,
        since_origin,
        removed_in: args.removed_in,
        docs,
        params,
        ret: ret(&sig.output),
        is_async: sig.asyncness.is_some(),
        self_ty: service.map(|s| s.self_ty.clone()),
        in_service: service.is_some(),
        receiver,
        tool: tool.unwrap_or_default(),
        cache: args.cache,
        rate_limit: args.rate_limit,
        transform: args.transform,
        scopes: args.scopes,
        lock: args.lock.map(|l| LockModel {
            param: l.param,
            ttl_ms: l.ttl_ms,
            wait_ms: l.wait_ms,
        }),
        sig: sig.clone(),
    }
}

fn param(cx: &Ctxt, pt: &mut syn::PatType) -> Param {
    let (pargs, doc) = attr::take_param(cx, &mut pt.attrs);
    let ident = match &*pt.pat {
        Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => Some(pi.ident.clone()),
        _ => None,
    };
    let ty = (*pt.ty).clone();
    let shape = match &ty {
        Type::Reference(_) => TypeShape::Borrowed,
        Type::ImplTrait(_) => TypeShape::ImplTrait,
        _ => TypeShape::Owned,
    };
    let kind = if pargs.context {
        ParamKind::Context
    } else if let Type::Reference(r) = &ty
        && is_named(&r.elem, &["RequestContext"])
        && r.mutability.is_none()
    {
        ParamKind::ContextRef
    } else if shape == TypeShape::Owned
        && is_named(&ty, &["RequestContext", "State"])
        && !pargs.is_json()
    {
        ParamKind::MaybeContext
    } else if let Some(d) = pargs.default.clone() {
        ParamKind::Default(d)
    } else if is_named(&ty, &["Option"]) {
        ParamKind::Optional
    } else {
        ParamKind::Required
    };
    let (name, name_span) = match (&pargs.rename, &ident) {
        (Some(r), _) => (r.value.clone(), r.span),
        (None, Some(i)) => (i.to_string().trim_start_matches("r#").to_owned(), i.span()),
        (None, None) => (String::new(), Span::call_site()),
    };
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
    Param {
        pat: (*pt.pat).clone(),
        ident,
        name,
        name_span,
        ty,
        shape,
        kind,
        default: pargs.default,
        doc,
        constraints,
        patterns: pargs.patterns,
        check: pargs.check,
        header: pargs.header,
        complete: pargs.complete,
    }
}

fn ret(output: &ReturnType) -> Ret {
    match output {
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
    }
}

fn name(
    sig: &Signature,
    args: &RpcMethodArgs,
    service: Option<&Service>,
) -> (String, Span, NameOrigin) {
    let (fn_name, span) = fn_name(sig);
    match (&args.name, service) {
        (Some(n), _) => (n.value.clone(), n.span, NameOrigin::Explicit),
        (None, Some(s)) => (
            format!("{}{}{}", s.name, s.concat, fn_name),
            span,
            NameOrigin::Service,
        ),
        (None, None) => (fn_name, span, NameOrigin::Function),
    }
}

fn groups(args: &RpcMethodArgs, service: Option<&Service>) -> (Vec<Path>, GroupsOrigin) {
    match (&args.groups, service.and_then(|s| s.groups.as_ref())) {
        (Some(g), _) => (g.value.clone(), GroupsOrigin::Method(g.span)),
        (None, Some(g)) => (g.value.clone(), GroupsOrigin::Service),
        (None, None) if args.has(attr::GROUPS) || service.is_some_and(|s| s.groups_written) => {
            (Vec::new(), GroupsOrigin::Invalid)
        }
        (None, None) => (Vec::new(), GroupsOrigin::Missing),
    }
}

fn since(args: &RpcMethodArgs, service: Option<&Service>) -> (u32, SinceOrigin) {
    match (&args.version, service) {
        // 0 is reported by `check`; the method is generated as if it were 1.
        (Some(v), _) => (v.value.max(1), SinceOrigin::Method(v.clone())),
        (None, _) if args.has(attr::VERSION) => (1, SinceOrigin::Invalid),
        (None, Some(s)) if s.version_written => match s.valid_version() {
            Some(v) => (v, SinceOrigin::Service),
            None => (1, SinceOrigin::Invalid),
        },
        (None, _) => (1, SinceOrigin::Default),
    }
}

/// The URI of a resource: fixed, or a template whose variables are its JSON parameters.
pub enum ResourceUri {
    Fixed(Spanned<String>),
    Template(Spanned<String>),
    /// Both were written (reported by `check`): the template.
    Both(Spanned<String>),
    /// Neither was written (reported by `check`).
    Missing,
}

impl ResourceUri {
    /// The URI or template as written (`""` when missing).
    pub fn text(&self) -> &str {
        match self {
            ResourceUri::Fixed(u) | ResourceUri::Template(u) | ResourceUri::Both(u) => &u.value,
            ResourceUri::Missing => "",
        }
    }

    pub fn is_template(&self) -> bool {
        !matches!(self, ResourceUri::Fixed(_))
    }
}

/// `#[mcp_resource]`: a method (named `resource:{uri}`) and what the resource adds.
pub struct Resource {
    pub method: Method,
    pub name: String,
    pub uri: ResourceUri,
    pub mime_type: Option<String>,
    pub size: Option<Spanned<u64>>,
    pub audience: Vec<Role>,
    /// The value and the expression as written.
    pub priority: Option<(f64, Expr)>,
    pub last_modified: Option<String>,
    pub icons: Vec<IconArgs>,
    /// `app(...)`: an MCP App's page.
    pub app: Option<AppArgs>,
}

/// `#[mcp_prompt]`: a method (named `prompt:{name}`) whose JSON parameters are the arguments.
pub struct Prompt {
    pub method: Method,
    pub name: String,
    pub name_span: Span,
    pub name_origin: NameOrigin,
    pub icons: Vec<IconArgs>,
}

/// The function's name without `r#`, and its span.
fn fn_name(sig: &Signature) -> (String, Span) {
    let name = sig.ident.to_string();
    (name.trim_start_matches("r#").to_owned(), sig.ident.span())
}

impl Resource {
    pub fn build(
        cx: &Ctxt,
        sig: &mut Signature,
        attrs: &mut Vec<Attribute>,
        args: McpArgs,
        attr_tokens: TokenStream,
    ) -> Resource {
        let mut method = build(
            cx,
            Kind::Resource,
            sig,
            attrs,
            args.method,
            None,
            attr_tokens,
        );
        let uri = match (args.uri, args.uri_template) {
            (Some(_), Some(template)) => ResourceUri::Both(template),
            (Some(u), None) => ResourceUri::Fixed(u),
            (None, Some(t)) => ResourceUri::Template(t),
            (None, None) => ResourceUri::Missing,
        };
        method.name = format!("resource:{}", uri.text());
        Resource {
            method,
            name: args.name.map_or_else(|| fn_name(sig).0, |n| n.value),
            uri,
            mime_type: args.mime_type,
            size: args.size,
            audience: args.audience,
            priority: args.priority,
            last_modified: args.last_modified,
            icons: args.icons,
            app: args.app,
        }
    }
}

impl Prompt {
    pub fn build(
        cx: &Ctxt,
        sig: &mut Signature,
        attrs: &mut Vec<Attribute>,
        args: McpArgs,
        attr_tokens: TokenStream,
    ) -> Prompt {
        let mut method = build(cx, Kind::Prompt, sig, attrs, args.method, None, attr_tokens);
        let (name, name_span, name_origin) = match args.name {
            Some(n) => (n.value, n.span, NameOrigin::Explicit),
            None => {
                let (n, span) = fn_name(sig);
                (n, span, NameOrigin::Function)
            }
        };
        method.name = format!("prompt:{name}");
        Prompt {
            method,
            name,
            name_span,
            name_origin,
            icons: args.icons,
        }
    }
}
