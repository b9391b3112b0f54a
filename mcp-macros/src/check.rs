//! The rules a model must follow, one function per rule; each reports at the span of the
//! user's token. They run after the model is built and before anything is expanded.

use quote::quote;
use syn::Signature;

use crate::attr::Spanned;
use crate::ctxt::Ctxt;
use crate::model::{
    GroupsOrigin, Kind, Method, NameOrigin, Param, Prompt, Resource, ResourceUri, Service,
    SinceOrigin, TypeShape,
};
use crate::uri;

/// Checks a method of a function or of an `#[rpc_service]`, or the method behind a resource or
/// prompt.
pub fn method(cx: &Ctxt, m: &Method) {
    let noun = m.kind.noun();
    not_const(cx, &m.sig, noun);
    not_unsafe(cx, &m.sig, noun);
    no_abi(cx, &m.sig, noun);
    not_generic(cx, &m.sig, noun);
    not_variadic(cx, &m.sig, noun);
    receiver(cx, m);
    for (i, p) in m.params.iter().enumerate() {
        param_plain_name(cx, p, noun);
        param_owned(cx, p, noun);
        param_not_impl_trait(cx, p, noun);
        context_without_default(cx, p);
        context_without_constraints(cx, p);
        patterns_are_regexes(cx, p);
        param_name_unique(cx, p, &m.params[..i]);
        param_header_unique(cx, p, &m.params[..i]);
        complete_on_mcp_argument(cx, p, m.kind);
    }
    name_not_empty(cx, m);
    name_not_reserved(cx, m);
    groups_not_empty(cx, m);
    groups_given(cx, m);
    version_not_zero(cx, m);
    removed_after_since(cx, m);
    lock_names_a_param(cx, m);
    scopes_valid(cx, m.scopes.as_ref());
    tool_app(cx, m);
}

/// The MIME type of an MCP App's page (SEP-1865).
const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The most CSP origins an app may list, all lists together: each is a host the app's page
/// may reach, which a host shows its user and enforces; a page needing more belongs behind
/// one origin of its own.
const MAX_APP_ORIGINS: usize = 64;

/// `app` of `#[mcp_resource]`: a fixed `ui://` URI, the app's MIME type, origins only in its
/// CSP lists, each permission once; and `ui://` is for apps only.
fn app_page(cx: &Ctxt, r: &Resource) {
    let Some(app) = &r.app else {
        let uri = match &r.uri {
            ResourceUri::Fixed(u) | ResourceUri::Template(u) => u,
            _ => return,
        };
        if uri.value.starts_with("ui://") {
            cx.syn_error(syn::Error::new(
                uri.span,
                "`ui://` resources are MCP Apps: add `app` (or `app(connect_domains = [...], \
                 ...)`) to serve an HTML page to hosts, or use another scheme",
            ));
        }
        return;
    };
    let span = app.span.unwrap_or_else(proc_macro2::Span::call_site);
    match &r.uri {
        ResourceUri::Fixed(u) if !u.value.starts_with("ui://") => cx.syn_error(syn::Error::new(
            u.span,
            format!(
                "an MCP App's URI has the `ui://` scheme, not `{}`: `uri = \"ui://{}/...\"`",
                u.value.split(':').next().unwrap_or_default(),
                "my-server"
            ),
        )),
        ResourceUri::Template(t) => cx.syn_error(syn::Error::new(
            t.span,
            "an MCP App is one page with a fixed `uri = \"ui://...\"`: a host reads it before \
             any call, so it cannot have template variables (the tool's result brings the data)",
        )),
        _ => {}
    }
    if let Some(m) = r.mime_type.as_deref().filter(|m| *m != APP_MIME_TYPE) {
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "an MCP App's MIME type is `{APP_MIME_TYPE}`, not `{m}`: leave `mime_type` out"
            ),
        ));
    }
    let mut count = 0;
    for (key, lit) in app.origins() {
        count += 1;
        if let Some(problem) = uri::origin_problem(&lit.value()) {
            cx.syn_error(syn::Error::new(
                lit.span(),
                format!("`{key}` lists origins only (`https://api.example.com`): {problem}"),
            ));
        }
        if count == MAX_APP_ORIGINS + 1 {
            cx.syn_error(syn::Error::new(
                lit.span(),
                format!("an app lists at most {MAX_APP_ORIGINS} CSP origins in all"),
            ));
        }
    }
    for (i, (p, span)) in app.permissions.iter().enumerate() {
        if app.permissions[..i].iter().any(|(q, _)| q == p) {
            cx.syn_error(syn::Error::new(*span, "this permission is listed twice"));
        }
    }
    if let Some(d) = &app.domain
        && (d.value.is_empty() || d.value.contains(char::is_whitespace))
    {
        cx.syn_error(syn::Error::new(
            d.span,
            "`domain` is a host name in the host's format, without spaces",
        ));
    }
}

/// `app` and `visibility` of `#[mcp_tool]`: a `ui://` URI, and who may call it, each once.
fn tool_app(cx: &Ctxt, m: &Method) {
    let tool = &m.tool;
    if let Some(uri) = &tool.app
        && !uri.value.starts_with("ui://")
    {
        cx.syn_error(syn::Error::new(
            uri.span,
            format!(
                "`app` names an MCP App's `ui://` resource (`app = \"ui://my-server/view\"`), \
                 not `{}`",
                uri.value
            ),
        ));
    }
    let Some(visibility) = &tool.visibility else {
        return;
    };
    if tool.app.is_none() {
        cx.syn_error(syn::Error::new(
            visibility.span,
            "`visibility` says who may call a tool linked to an MCP App: it needs \
             `app = \"ui://...\"`",
        ));
    }
    if visibility.value.is_empty() {
        cx.syn_error(syn::Error::new(
            visibility.span,
            "`visibility = []` hides the tool from everyone: list \"model\", \"app\" or both",
        ));
    }
    for (i, lit) in visibility.value.iter().enumerate() {
        let v = lit.value();
        if v != "model" && v != "app" {
            cx.syn_error(syn::Error::new(
                lit.span(),
                format!("unknown visibility `{v}`: expected \"model\" or \"app\""),
            ));
        } else if visibility.value[..i].iter().any(|l| l.value() == v) {
            cx.syn_error(syn::Error::new(
                lit.span(),
                format!("`{v}` is listed twice"),
            ));
        }
    }
}

/// `scopes = [...]`: at least one, each an RFC 6750 scope token (what a `WWW-Authenticate`
/// challenge can quote), none twice.
pub fn scopes_valid(cx: &Ctxt, scopes: Option<&Spanned<Vec<syn::LitStr>>>) {
    let Some(scopes) = scopes else {
        return;
    };
    if scopes.value.is_empty() {
        cx.syn_error(syn::Error::new(
            scopes.span,
            "`scopes = []` requires nothing: name at least one scope, or leave `scopes` out",
        ));
    }
    for (i, lit) in scopes.value.iter().enumerate() {
        let s = lit.value();
        let token = |b: u8| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b);
        if s.is_empty() || !s.bytes().all(token) {
            cx.syn_error(syn::Error::new(
                lit.span(),
                format!(
                    "invalid scope `{s}`: a scope is a non-empty OAuth scope token (printable \
                     ASCII without spaces, `\"` or `\\`), such as `orders:write`"
                ),
            ));
        } else if scopes.value[..i].iter().any(|before| before.value() == s) {
            cx.syn_error(syn::Error::new(
                lit.span(),
                format!("scope `{s}` is listed twice"),
            ));
        }
    }
}

/// Checks a resource: its method, its URI (or template) and the template's variables against
/// the parameters, and its annotations.
pub fn resource(cx: &Ctxt, r: &Resource) {
    method(cx, &r.method);
    match &r.uri {
        ResourceUri::Missing => cx.error_spanned_by(
            &r.method.attr_tokens,
            "missing `uri = \"...\"` or `uri_template = \"...\"`: a resource has a fixed URI, \
             or a URI template whose variables are the function's parameters",
        ),
        ResourceUri::Both(template) => cx.syn_error(syn::Error::new(
            template.span,
            "give `uri` or `uri_template`, not both: `uri` is a fixed URI, `uri_template` a URI \
             template whose variables are the function's parameters",
        )),
        ResourceUri::Fixed(uri) => {
            uri_is_absolute(cx, uri);
            fixed_uri_without_params(cx, &r.method);
        }
        ResourceUri::Template(t) => template_matches_params(cx, t, &r.method),
    }
    size_only_fixed(cx, r);
    priority_in_range(cx, r);
    app_page(cx, r);
}

/// Checks a prompt: its method and its name.
pub fn prompt(cx: &Ctxt, p: &Prompt) {
    method(cx, &p.method);
    prompt_name_valid(cx, p);
}

/// Checks an `#[rpc_service]` impl and its arguments (its methods are checked one by one).
pub fn service(cx: &Ctxt, s: &Service) {
    service_not_trait_impl(cx, s);
    service_not_generic(cx, s);
    service_groups_not_empty(cx, s);
    service_version_not_zero(cx, s);
}

// ---------------------------------------------------------------------------------------------
// The function's signature.

fn not_const(cx: &Ctxt, sig: &Signature, noun: &str) {
    if let Some(c) = &sig.constness {
        cx.error_spanned_by(c, format!("{noun} cannot be a `const fn`"));
    }
}

fn not_unsafe(cx: &Ctxt, sig: &Signature, noun: &str) {
    if let Some(u) = &sig.unsafety {
        cx.error_spanned_by(u, format!("{noun} cannot be `unsafe`"));
    }
}

fn no_abi(cx: &Ctxt, sig: &Signature, noun: &str) {
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, format!("{noun} cannot have an `extern` ABI"));
    }
}

fn not_generic(cx: &Ctxt, sig: &Signature, noun: &str) {
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            format!("{noun} cannot be generic: its JSON Schemas are built for concrete types"),
        );
    }
}

fn not_variadic(cx: &Ctxt, sig: &Signature, noun: &str) {
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, format!("{noun} cannot be variadic"));
    }
}

/// `self` only in a service, and there only `&self`; never on a resource or prompt.
fn receiver(cx: &Ctxt, m: &Method) {
    let Some(r) = &m.receiver else { return };
    if m.kind != Kind::Method {
        cx.error_spanned_by(
            r,
            format!(
                "`#[{}]` goes on a free function: {} cannot take `self` (take the state it \
                 needs as a `State<T>` parameter)",
                m.kind.attr(),
                m.kind.noun()
            ),
        );
    } else if !m.in_service {
        cx.error_spanned_by(
            r,
            "`self` is only allowed in methods of an impl marked `#[rpc_service]`; \
             add `#[rpc_service]` to the impl block, or make this a free function",
        );
    } else if r.reference.is_none() || r.mutability.is_some() {
        cx.error_spanned_by(
            r,
            "an `#[rpc_service]` method takes `&self` (the instance is shared between calls; \
             use interior mutability for state)",
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Parameters. Once a parameter is reported as not well-formed (a pattern, a borrowed or `impl
// Trait` type), the rules after it skip it.

fn param_plain_name(cx: &Ctxt, p: &Param, noun: &str) {
    if p.ident.is_none() {
        cx.error_spanned_by(
            &p.pat,
            format!(
                "{noun} parameter must be a plain name, as in `query: String`: the name is the \
                 parameter's name in the request (destructure it in the body instead)"
            ),
        );
    }
}

fn param_owned(cx: &Ctxt, p: &Param, noun: &str) {
    if p.ident.is_some() && p.is_json() && p.shape == TypeShape::Borrowed {
        cx.error_spanned_by(
            &p.ty,
            format!(
                "{noun} parameter must be an owned type (`String`, not `&str`): it is \
                 deserialized from the request (only `&RequestContext` can be borrowed)"
            ),
        );
    }
}

fn param_not_impl_trait(cx: &Ctxt, p: &Param, noun: &str) {
    if p.ident.is_some() && p.is_json() && p.shape == TypeShape::ImplTrait {
        cx.error_spanned_by(
            &p.ty,
            format!(
                "{noun} parameter cannot be `impl Trait`: its JSON Schema is built for a \
                 concrete type"
            ),
        );
    }
}

/// `#[complete]` only on a JSON parameter of a resource or prompt.
fn complete_on_mcp_argument(cx: &Ctxt, p: &Param, kind: Kind) {
    let Some(c) = &p.complete else { return };
    if kind == Kind::Method {
        cx.error_spanned_by(
            &c.attr,
            "`#[complete]` only goes on parameters of `#[mcp_resource]` and `#[mcp_prompt]`: \
             MCP completes prompt arguments and URI template variables, not tool arguments",
        );
    } else if p.is_well_formed() && !p.is_json() {
        cx.error_spanned_by(
            &c.attr,
            "`#[complete]` goes on an argument, not on a context parameter: context parameters \
             are not given by the client, so there is nothing to complete",
        );
    }
}

fn context_without_default(cx: &Ctxt, p: &Param) {
    if p.is_well_formed()
        && p.is_context()
        && let Some(d) = &p.default
    {
        cx.error_spanned_by(d, "a context parameter cannot have a default");
    }
}

fn context_without_constraints(cx: &Ctxt, p: &Param) {
    if p.is_well_formed() && p.is_context() && (!p.constraints.is_empty() || p.check.is_some()) {
        cx.error_spanned_by(
            &p.ty,
            "a context parameter cannot have constraints or checks",
        );
    }
}

/// `pattern = "..."` is a regular expression, at the pattern literal's span.
fn patterns_are_regexes(cx: &Ctxt, p: &Param) {
    for pattern in &p.patterns {
        if let Err(problem) = regex_problem(&pattern.value) {
            cx.syn_error(syn::Error::new(
                pattern.span,
                format!("`pattern` is not a valid regular expression: {problem}"),
            ));
        }
    }
}

/// Parses a pattern with `regex-syntax`. Look-around and backreferences are accepted: schemas
/// use ECMA 262 regular expressions, which have them, and the validator supports them
/// (`regex-syntax` stops there, so what follows them is not checked).
fn regex_problem(pattern: &str) -> Result<(), String> {
    use regex_syntax::ast::ErrorKind;
    match regex_syntax::ast::parse::Parser::new().parse(pattern) {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::UnsupportedLookAround | ErrorKind::UnsupportedBackreference
            ) =>
        {
            Ok(())
        }
        Err(e) => {
            let span = e.span();
            let at = &pattern[span.start.offset..span.end.offset.max(span.start.offset)];
            let at = if at.is_empty() {
                format!("at offset {}", span.start.offset)
            } else {
                format!("at `{at}` (offset {})", span.start.offset)
            };
            Err(format!("{}, {at}", e.kind()))
        }
    }
}

/// Two mirrored parameters of a method cannot share a header (names ignore case).
fn param_header_unique(cx: &Ctxt, p: &Param, before: &[Param]) {
    let Some(h) = &p.header else {
        return;
    };
    if let Some(prev) = before.iter().find(|q| {
        q.header
            .as_ref()
            .is_some_and(|g| g.value.eq_ignore_ascii_case(&h.value))
    }) {
        cx.syn_error(syn::Error::new(
            h.span,
            format!(
                "`header = \"{}\"`: parameter `{}` already uses header `{}` (header names ignore case); give each parameter its own",
                h.value,
                prev.name,
                prev.header.as_ref().map_or("", |g| g.value.as_str())
            ),
        ));
    }
}

fn param_name_unique(cx: &Ctxt, p: &Param, before: &[Param]) {
    if !(p.is_json() && p.is_well_formed()) {
        return;
    }
    let Some(prev) = before
        .iter()
        .find(|q| q.is_json() && q.is_well_formed() && q.name == p.name)
    else {
        return;
    };
    let (prev_ident, ident) = (&prev.ident, &p.ident);
    cx.syn_error(syn::Error::new(
        p.name_span,
        format!(
            "duplicate parameter name `{}`: parameters `{}` and `{}` would both be `{}` in the \
             request; give one another name with `#[param(rename = \"...\")]`",
            p.name,
            quote!(#prev_ident),
            quote!(#ident),
            p.name
        ),
    ));
}

// ---------------------------------------------------------------------------------------------
// The method's arguments.

fn name_not_empty(cx: &Ctxt, m: &Method) {
    if m.name.is_empty() {
        cx.syn_error(syn::Error::new(
            m.name_span,
            "a method name cannot be empty",
        ));
    }
}

/// JSON-RPC 2.0 reserves method names that begin with `rpc.` for rpc-internal methods and
/// extensions (the server answers `rpc.discover` itself).
fn name_not_reserved(cx: &Ctxt, m: &Method) {
    if m.kind == Kind::Method && m.name.starts_with("rpc.") {
        cx.syn_error(syn::Error::new(
            m.name_span,
            format!(
                "method name `{}` is reserved: JSON-RPC 2.0 keeps names that begin with `rpc.` \
                 for rpc-internal methods (the server answers `rpc.discover` itself); choose \
                 another name",
                m.name
            ),
        ));
    }
}

const EMPTY_GROUPS: &str =
    "`groups` cannot be empty: name at least one API group, e.g. `groups = [MCP]`";

fn groups_not_empty(cx: &Ctxt, m: &Method) {
    if let GroupsOrigin::Method(span) = m.groups_origin
        && m.groups.is_empty()
    {
        cx.syn_error(syn::Error::new(span, EMPTY_GROUPS));
    }
}

fn groups_given(cx: &Ctxt, m: &Method) {
    if !matches!(m.groups_origin, GroupsOrigin::Missing) {
        return;
    }
    let msg = match m.kind {
        Kind::Method if m.in_service => "missing `groups = [...]`: every RPC method belongs to \
             at least one API group; give it here or on the `#[rpc_service(groups = [...])]` \
             for all its methods"
            .to_owned(),
        kind => format!(
            "missing `groups = [...]`: every {} belongs to at least one API group, e.g. \
             `#[{}({}groups = [MCP])]` with `const MCP: ApiGroup = ApiGroup::mcp(\"mcp\");`",
            kind.noun().trim_start_matches("an "),
            kind.attr(),
            if kind == Kind::Resource {
                "uri = \"...\", "
            } else {
                ""
            }
        ),
    };
    cx.error_spanned_by(&m.attr_tokens, msg);
}

const VERSION_ZERO: &str = "versions start at 1: `version = 1` is the first version";

fn version_not_zero(cx: &Ctxt, m: &Method) {
    if let SinceOrigin::Method(v) = &m.since_origin
        && v.value == 0
    {
        cx.syn_error(syn::Error::new(v.span, VERSION_ZERO));
    }
}

/// `removed_in` comes after the first version.
fn removed_after_since(cx: &Ctxt, m: &Method) {
    let Some(r) = &m.removed_in else { return };
    let from = match &m.since_origin {
        SinceOrigin::Method(v) if v.value > 0 => format!("`version = {}`", m.since),
        SinceOrigin::Service => format!("the service's `version = {}`", m.since),
        SinceOrigin::Default => format!("the default first version, {}", m.since),
        // The first version is unknown (its value is bad), but it is at least 1.
        SinceOrigin::Method(_) | SinceOrigin::Invalid => {
            if r.value <= 1 {
                cx.syn_error(syn::Error::new(
                    r.span,
                    format!(
                        "`removed_in = {}` must be greater than the first version, which is at \
                         least 1",
                        r.value
                    ),
                ));
            }
            return;
        }
    };
    if r.value <= m.since {
        cx.syn_error(syn::Error::new(
            r.span,
            format!(
                "`removed_in = {}` must be greater than the first version ({from}): a method \
                 exists from `version` up to, not including, `removed_in`",
                r.value
            ),
        ));
    }
}

fn lock_names_a_param(cx: &Ctxt, m: &Method) {
    let Some(p) = m.lock.as_ref().and_then(|l| l.param.as_ref()) else {
        return;
    };
    // A parameter that may be a context one may be named too: if it is not a JSON parameter
    // after all, the lock finds no value and the call fails.
    if m.may_take(&p.value) {
        return;
    }
    let names: Vec<&str> = m.json_params().map(|q| q.name.as_str()).collect();
    cx.syn_error(syn::Error::new(
        p.span,
        format!(
            "`lock(param = \"{}\")` names no parameter of this method; its parameters: {}",
            p.value,
            names.join(", ")
        ),
    ));
}

// ---------------------------------------------------------------------------------------------
// Resources and prompts.

fn uri_is_absolute(cx: &Ctxt, uri: &Spanned<String>) {
    if let Some(problem) = uri::uri_problem(&uri.value) {
        cx.syn_error(syn::Error::new(
            uri.span,
            format!("`uri` is not an absolute URI: {problem}"),
        ));
    }
}

/// A fixed URI gives no values: every parameter must come from the context.
fn fixed_uri_without_params(cx: &Ctxt, m: &Method) {
    for p in m.json_params() {
        cx.syn_error(syn::Error::new(p.name_span, fixed_uri_param(&p.name)));
    }
}

/// A valid template, whose variables are the JSON parameters (by their names in the request).
/// A parameter that may be a context one (a `State<T>`) is checked at compile time by the
/// expansion, once its type says what it is.
fn template_matches_params(cx: &Ctxt, t: &Spanned<String>, m: &Method) {
    let vars = match uri::template_variables(&t.value) {
        Ok(vars) => vars,
        Err(problem) => {
            cx.syn_error(syn::Error::new(
                t.span,
                format!("`uri_template` is not a valid URI template: {problem}"),
            ));
            return;
        }
    };
    for var in vars.iter().filter(|v| !m.may_take(v)) {
        cx.syn_error(syn::Error::new(t.span, variable_without_param(var)));
    }
    for p in m.json_params().filter(|p| !vars.contains(&p.name.as_str())) {
        cx.syn_error(syn::Error::new(
            p.name_span,
            not_a_variable(&p.name, &t.value),
        ));
    }
}

pub fn fixed_uri_param(name: &str) -> String {
    format!(
        "a resource with a fixed `uri` has no parameters, and `{name}` would never be given: use \
         `uri_template = \"...{{{name}}}...\"` to take it from the URI, or make it a context \
         parameter"
    )
}

fn variable_without_param(var: &str) -> String {
    format!(
        "URI template variable `{var}` has no parameter: add `{var}: String` (or any type it \
         parses into) to the function, or rename a parameter with \
         `#[param(rename = \"{var}\")]`"
    )
}

pub fn not_a_variable(name: &str, template: &str) -> String {
    format!(
        "parameter `{name}` is not a variable of the URI template `{template}`: a resource's \
         parameters are its template's variables; add `{{{name}}}` to the template, or make it \
         a context parameter"
    )
}

fn size_only_fixed(cx: &Ctxt, r: &Resource) {
    if let (Some(size), true) = (&r.size, r.uri.is_template()) {
        cx.syn_error(syn::Error::new(
            size.span,
            "`size` goes with a fixed `uri`: the resources of a URI template each have their own \
             size",
        ));
    }
}

fn priority_in_range(cx: &Ctxt, r: &Resource) {
    if let Some((value, expr)) = &r.priority
        && !(0.0..=1.0).contains(value)
    {
        cx.error_spanned_by(
            expr,
            format!("`priority` is from 0 (least important) to 1 (most important), not {value}"),
        );
    }
}

/// Why `name` is not a valid MCP tool (or prompt) name (`^[a-zA-Z0-9_.-]{1,128}$`), if it is
/// not.
pub fn invalid_tool_name(name: &str) -> Option<String> {
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

fn prompt_name_valid(cx: &Ctxt, p: &Prompt) {
    let Some(problem) = invalid_tool_name(&p.name) else {
        return;
    };
    let hint = match p.name_origin {
        NameOrigin::Function => {
            "give the prompt a valid `name = \"...\"` (the default is the function's name)"
        }
        NameOrigin::Explicit | NameOrigin::Service => "give the prompt a valid `name = \"...\"`",
    };
    cx.syn_error(syn::Error::new(
        p.name_span,
        format!(
            "`{}` is not a valid MCP prompt name ({problem}): prompt names must match \
             ^[a-zA-Z0-9_.-]{{1,128}}$; {hint}",
            p.name
        ),
    ));
}

// ---------------------------------------------------------------------------------------------
// The service.

fn service_not_trait_impl(cx: &Ctxt, s: &Service) {
    if let Some(trait_for) = &s.trait_for {
        let ty = &s.self_ty;
        cx.error_spanned_by(
            trait_for,
            format!(
                "`#[rpc_service]` goes on an inherent impl, not a trait impl: put the RPC methods \
                 in `impl {} {{ ... }}` (they may call the trait's methods)",
                quote!(#ty)
            ),
        );
    }
}

fn service_not_generic(cx: &Ctxt, s: &Service) {
    if !s.generics.params.is_empty() {
        cx.error_spanned_by(&s.generics, "an `#[rpc_service]` impl cannot be generic");
    }
}

fn service_groups_not_empty(cx: &Ctxt, s: &Service) {
    if let Some(g) = &s.groups
        && g.value.is_empty()
    {
        cx.syn_error(syn::Error::new(g.span, EMPTY_GROUPS));
    }
}

fn service_version_not_zero(cx: &Ctxt, s: &Service) {
    if let Some(v) = &s.version
        && v.value == 0
    {
        cx.syn_error(syn::Error::new(v.span, VERSION_ZERO));
    }
}

#[cfg(test)]
mod tests {
    use super::regex_problem;

    #[test]
    fn regexes() {
        assert!(regex_problem(r"^[a-z0-9_-]{3,16}$").is_ok());
        assert!(regex_problem(r"\S").is_ok());
        assert!(regex_problem(r"^(?=.*\d)\w+$").is_ok(), "look-ahead");
        assert!(regex_problem(r"(a)\1").is_ok(), "backreference");
        assert_eq!(
            regex_problem("(abc").unwrap_err(),
            "unclosed group, at `(` (offset 0)"
        );
        assert!(regex_problem("[a-").is_err());
        assert!(regex_problem("a{2,1}").is_err());
        assert!(regex_problem("*a").is_err());
        assert!(regex_problem(r"\").is_err());
    }
}
