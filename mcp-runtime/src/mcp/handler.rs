//! The MCP message handler, shared by Streamable HTTP and stdio: lifecycle, discovery,
//! `tools/list` from precomputed pages and `tools/call` through the core pipeline.

use crate::scope_views::ScopeViews;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value, json};

pub use crate::edge::write::AnswerBody;

use super::meta::{Meta, NONE as NO_META};
use super::pages::ListPages;
use super::protocol::{
    Era, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, META_SERVER_INFO, Method, TaskForm,
};
use super::session::{EventStreams, SessionStore};
use super::tools::{ListOptions, ToolPages};
use crate::catalog::{Catalog, MethodInfo};
use crate::context::{CallExtras, Face};
use crate::core::telemetry::{Operation, Outcome};
use crate::core::{CallRequest, Core};
use crate::edge::read::{self, Dialect, Incoming};
use crate::error::{RpcError, codes};
use crate::limits::Limits;
use crate::output::Output;
use crate::wire::{self, Id};

/// How `tools/call` answers arguments that fail the tool's `inputSchema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InvalidArguments {
    /// A JSON-RPC error -32602 (the reference behaviour; the method is not called).
    #[default]
    JsonRpcError,
    /// A tool result with `isError: true` (SEP-1303, MCP 2025-11-25+).
    ToolError,
}

/// MCP options of a server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpOptions {
    /// How invalid arguments are answered.
    pub invalid_arguments: InvalidArguments,
    /// tools/list page size, `$schema` and `ttlMs`.
    pub list: ListOptions,
    /// `instructions` in the initialize and discover results.
    pub instructions: Option<String>,
    /// The SSE `retry` field (ms) sent on resumable streams.
    pub retry_ms: u64,
    /// The keys that sign 2026-07-28 `requestState`s ([`super::input`]): random per process
    /// by default; instances behind one address must share them.
    pub request_state_keys: super::input::RequestStateKeys,
    /// Whether a 2026-07-28 call without a `requestState` may bring answers before it is asked
    /// (`ServerBuilder::mcp_answers_in_advance`); off by default: they are ignored.
    pub answers_in_advance: bool,
}

impl Default for McpOptions {
    fn default() -> Self {
        Self {
            invalid_arguments: InvalidArguments::default(),
            list: ListOptions {
                page_size: 50,
                schema_dialect: true,
                ttl_ms: 300_000,
                inline_defs: false,
                nullable: crate::schema::Nullable::AnyOf,
            },
            instructions: None,
            retry_ms: 1000,
            request_state_keys: super::input::RequestStateKeys::random(),
            answers_in_advance: false,
        }
    }
}

/// A request or notification, owned: what the MCP face answers.
#[derive(Debug, Default)]
pub struct Message {
    /// The id (string or number), `None` for notifications.
    pub id: Option<Value>,
    /// The method.
    pub method: String,
    /// The params, without `_meta`.
    pub params: Option<Value>,
    /// The params' `_meta`, read apart (boxed: a message is moved through every future that
    /// answers it, and most requests have none).
    meta: Option<Box<Meta>>,
}

impl Message {
    /// Reads one MCP message from its JSON bytes with the edge's reader (in-process use:
    /// tests, benches); a notification, a response or an invalid message is an error.
    pub fn read(bytes: &[u8]) -> Result<Message, RpcError> {
        match read::read(bytes, Dialect::MCP, 1) {
            Ok(read::Body::Single(Ok(Incoming::Call(call)))) if call.id.is_some() => {
                Message::from_call(call, Limits::default().depth).map_err(|(_, e)| e)
            }
            Ok(read::Body::Single(Err(inv))) => Err(inv.error),
            Ok(_) => Err(RpcError::invalid_request("not a single request")),
            Err(e) => Err(e.error()),
        }
    }

    /// A message built in process: `params._meta`, if any, is taken out into the message's
    /// `_meta` view, as when a message is read.
    pub fn new(id: Option<Value>, method: &str, mut params: Option<Value>) -> Message {
        let meta = match &mut params {
            Some(Value::Object(p)) => p.remove("_meta").map(Meta::from_value),
            _ => None,
        };
        Message {
            id,
            method: method.to_owned(),
            params,
            meta: meta.map(Box::new),
        }
    }

    /// An owned message from a call the edge read; the error carries the id when readable.
    pub(crate) fn from_call(
        call: read::Call<'_>,
        depth: usize,
    ) -> Result<Message, (Option<Value>, RpcError)> {
        let id = read::id_value(call.id);
        match super::meta::params(call.params, depth) {
            Ok((params, meta)) => Ok(Message {
                id,
                method: call.method.into_owned(),
                params,
                meta: meta.map(Box::new),
            }),
            Err(e) => Err((id, e)),
        }
    }

    /// A request made here (a task's call run again), without `_meta`.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn call(method: &str, params: Option<Value>) -> Message {
        Message {
            id: Some(Value::from(0)),
            method: method.to_owned(),
            params,
            meta: None,
        }
    }

    /// The params' `_meta` (empty when there was none).
    pub(crate) fn meta(&self) -> &Meta {
        self.meta.as_deref().unwrap_or(&NO_META)
    }

    /// The `_meta` revision of the params.
    pub fn meta_version(&self) -> Option<&str> {
        self.meta().version()
    }
    /// The revision an `initialize` asks for (`params.protocolVersion`).
    pub fn requested_version(&self) -> Option<&str> {
        self.params.as_ref()?.get("protocolVersion")?.as_str()
    }

    /// `params.name` (tools/call).
    pub fn param_name(&self) -> Option<&str> {
        self.params.as_ref()?.get("name")?.as_str()
    }

    /// `params._meta.progressToken`, if sent.
    pub(crate) fn progress_token(&self) -> Option<&Value> {
        self.meta().progress_token.as_ref()
    }
}

/// The answer to one request: an HTTP status (200 on the handshake era) and the JSON body.
#[derive(Debug)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// The JSON-RPC response.
    pub body: AnswerBody,
    /// When a rate-limited caller may try again (the transport's `Retry-After`).
    pub retry_after: Option<std::time::Duration>,
    /// How it ended, for the metrics and the request's span.
    pub(crate) outcome: Outcome,
}

/// The notifier of a call whose request carried its language (SEP-2792): each notification it
/// sends names the language in `params._meta`, as its answer does.
struct Named {
    inner: Arc<dyn crate::context::Notifier>,
    lang: Arc<str>,
}

impl crate::context::Notifier for Named {
    fn notify(&self, message: Vec<u8>) {
        let message = super::language::stamp(&message, &self.lang).unwrap_or(message);
        self.inner.notify(message);
    }

    fn close_stream(&self) -> bool {
        self.inner.close_stream()
    }
}

/// Names `lang` in a list page's answer (SEP-2792) without reading the page: a handshake-era
/// page has no `_meta`, so one opens the result (the page stays shared); a 2026-07-28 page ends
/// with its `_meta` stamp and the result's and response's closing (`}}}`), and the member goes
/// before the stamp's brace (the page is copied, but for those three bytes).
fn name_page(answer: &mut Answer, era: Era, page: &Bytes, lang: &str) {
    let member = format!(
        "\"{}\":{}",
        super::language::CONTENT_LANGUAGE,
        Value::from(lang)
    );
    let (head, _) = answer.body.parts();
    let mut head = head.to_vec();
    if era.typed_results() {
        debug_assert!(page.ends_with(b"}}}"), "a modern page ends with its stamp");
        let at = page.len().saturating_sub(3);
        head.extend_from_slice(&page[..at]);
        head.push(b',');
        head.extend_from_slice(member.as_bytes());
        answer.body = AnswerBody::shared(head, page.slice(at..));
    } else {
        head.extend_from_slice(b"\"_meta\":{");
        head.extend_from_slice(member.as_bytes());
        head.extend_from_slice(b"},");
        answer.body = AnswerBody::shared(head, page.clone());
    }
}

/// One MCP endpoint: a catalog served as tools.
pub struct McpEndpoint {
    pub(crate) core: Core,
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) opts: McpOptions,
    /// List pages per language.
    pages: std::collections::BTreeMap<String, Lists>,
    /// The lists each set of granted scopes sees, when methods require scopes.
    views: Option<ScopeViews<Arc<Lists>>>,
    pub(crate) translations: Arc<crate::i18n::Translations>,
    serves: Serves,
    /// Set when a method of the group has an invalid tool name: every request fails.
    pub(crate) poison: Option<String>,
    server_info: String,
    /// This endpoint's server card (SEP-2127), per language.
    pub(crate) cards: super::card::Cards,
    discover_members: String,
    meta_member: String,
    pub(crate) sessions: Option<Arc<dyn SessionStore>>,
    pub(crate) streams: EventStreams,
    /// Per language: the shared name and its `Content-Language` value, built once.
    languages: Vec<(Arc<str>, axum::http::HeaderValue)>,
    /// The server's bounds.
    pub(crate) limits: Arc<Limits>,
    /// Requests sent to clients on call streams, waiting for their answers.
    pub(crate) waiters: Arc<super::input::Waiters>,
    /// The session calls running on SSE streams, for `notifications/cancelled`.
    pub(crate) running: super::cancel::Running,
    /// The tools with parameters mirrored in headers (SEP-2243), by name; empty when none has.
    pub(crate) mirrored: std::collections::HashMap<&'static str, Vec<crate::catalog::Mirrored>>,
}

/// The precomputed pages of every list in one language.
#[derive(Debug)]
struct Lists {
    tools: ToolPages,
    /// The handshake era's tools of a group with task tools (`execution.taskSupport`, a
    /// 2025-11-25 field the 2026-07-28 `Tool` does not have).
    tools_handshake: Option<ToolPages>,
    resources: ListPages,
    templates: ListPages,
    prompts: ListPages,
    skills: ListPages,
}

impl Lists {
    /// Every list of `catalog` in `lang`, of the entries whose scopes `visible` admits.
    fn build(
        catalog: &Catalog,
        translations: &crate::i18n::Translations,
        lang: &str,
        opts: &McpOptions,
        meta_member: &str,
        serves: Serves,
        visible: &dyn Fn(&[&str]) -> bool,
    ) -> Self {
        let [resources, templates, prompts] =
            super::items::list_items(catalog, translations, lang, visible);
        let list = |key, items: &[Vec<u8>]| {
            ListPages::build(
                key,
                items,
                opts.list.page_size,
                opts.list.ttl_ms,
                meta_member,
            )
        };
        let tools = |execution| {
            super::tools::tool_pages(
                catalog,
                translations,
                lang,
                &opts.list,
                meta_member,
                execution,
                visible,
            )
        };
        Lists {
            tools: tools(false),
            tools_handshake: serves.tasks.then(|| tools(true)),
            resources: list("resources", &resources),
            templates: list("resourceTemplates", &templates),
            prompts: list("prompts", &prompts),
            skills: list("skills", &super::items::skills(catalog, lang, visible)),
        }
    }
}

/// What the endpoint can send at all (its capabilities).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Offered {
    pub prompts: bool,
    pub resources: bool,
    pub tasks: bool,
}

/// What a catalog serves besides tools, decided once: a capability is declared (and its
/// methods answered) only when the group has something for it.
#[derive(Debug, Clone, Copy)]
struct Serves {
    resources: bool,
    prompts: bool,
    completions: bool,
    /// A tool may run as a task (2026-07-28: the tasks extension).
    tasks: bool,
    /// Tasks have owners to list them for (2025-11-25 `tasks/list`): a stateful or protected
    /// group.
    task_list: bool,
    /// The group has MCP Apps (the `io.modelcontextprotocol/ui` extension).
    apps: bool,
    /// The group has skills (the `io.modelcontextprotocol/skills` extension).
    skills: bool,
}

impl Serves {
    fn of(catalog: &Catalog) -> Self {
        // A skill's files are resources: SEP-2640 has the extension need the capability.
        let skills = !catalog.skills().is_empty();
        let resources =
            !catalog.resources().is_empty() || !catalog.resource_templates().is_empty() || skills;
        let prompts = !catalog.prompts().is_empty();
        Serves {
            resources,
            prompts,
            // Completion refers to prompt arguments and template variables.
            completions: prompts || !catalog.resource_templates().is_empty(),
            tasks: catalog
                .methods()
                .iter()
                .any(|m| m.def.task != crate::record::TaskSupport::Forbidden),
            task_list: false,
            apps: catalog.resources().iter().any(|r| r.def.app.is_some()),
            skills,
        }
    }

    /// The `capabilities` object; `live`: the connection has a stream for change
    /// notifications (a 2026-07-28 listen stream, a session's `GET` stream, stdio).
    /// `tasks`: the 2025-11-25 `tasks` capability may be declared (that revision has tasks).
    fn capabilities(self, live: bool, modern: bool, tasks: bool) -> String {
        let mut c = format!("{{\"tools\":{{\"listChanged\":{live}}}");
        if self.resources {
            c.push_str(&format!(
                ",\"resources\":{{\"subscribe\":{live},\"listChanged\":{live}}}"
            ));
        }
        if self.prompts {
            c.push_str(&format!(",\"prompts\":{{\"listChanged\":{live}}}"));
        }
        if self.completions {
            c.push_str(",\"completions\":{}");
        }
        if self.tasks && !modern && tasks {
            // 2025-11-25 tasks (no `list`: tasks are not bound to a caller's identity, so
            // nobody may enumerate them; their ids are unguessable).
            c.push_str(if self.task_list {
                ",\"tasks\":{\"list\":{},\"cancel\":{},\"requests\":{\"tools\":{\"call\":{}}}}"
            } else {
                ",\"tasks\":{\"cancel\":{},\"requests\":{\"tools\":{\"call\":{}}}}"
            });
        }
        // Every method, resource and prompt may log through its context.
        c.push_str(",\"logging\":{}");
        let mut extensions = Vec::new();
        if self.tasks && modern {
            // 2026-07-28: tasks are an extension.
            extensions.push(format!("\"{}\":{{}}", super::protocol::TASKS_EXTENSION));
        }
        if self.apps {
            extensions.push(super::extensions::ui_capability());
        }
        if self.skills {
            extensions.push(super::extensions::skills_capability());
        }
        if !extensions.is_empty() {
            c.push_str(&format!(",\"extensions\":{{{}}}", extensions.join(",")));
        }
        c.push('}');
        c
    }

    /// Whether `method` belongs to a capability the catalog has (tools and the lifecycle
    /// always do).
    fn has(self, method: &str) -> bool {
        match method {
            "resources/list" | "resources/templates/list" | "resources/read" => self.resources,
            "prompts/list" | "prompts/get" => self.prompts,
            "completion/complete" => self.completions,
            _ => true,
        }
    }
}

/// The level of a `logging/setLevel`, or its -32602.
pub fn set_level_param(msg: &Message) -> Result<super::LogLevel, RpcError> {
    let level = msg
        .params
        .as_ref()
        .and_then(|p| p.get("level"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            RpcError::invalid_params("Invalid request parameters: `level` must be a string")
        })?;
    level
        .parse()
        .map_err(|e: crate::log_level::UnknownLevel| RpcError::invalid_params(e.to_string()))
}

/// A JSON-RPC error response.
pub(crate) fn error_body(
    id: Option<&Value>,
    code: i32,
    message: &str,
    data: Option<&Value>,
) -> Vec<u8> {
    wire::error_body(Id::from(id), code, message, data)
}

impl McpEndpoint {
    /// Copies the endpoint's resumable streams to `shared` (sessions shared between
    /// instances: any of them can resume a stream).
    pub(crate) fn with_shared_streams(
        mut self,
        shared: Option<Arc<dyn super::session::SharedStreams>>,
    ) -> Self {
        self.streams = EventStreams::of(&self.limits).with_shared(shared);
        self
    }

    // Crate-internal: called once per (group, version) by the server builder.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        core: Core,
        catalog: Arc<Catalog>,
        opts: McpOptions,
        server_name: &str,
        server_version: &str,
        sessions: Option<Arc<dyn SessionStore>>,
        translations: Arc<crate::i18n::Translations>,
        debug: bool,
        limits: Arc<Limits>,
    ) -> Self {
        let server_info = json!({ "name": server_name, "version": server_version }).to_string();
        let meta_member = format!("\"_meta\":{{\"{META_SERVER_INFO}\":{server_info}}}");
        // Built once per language: a translated list costs what an untranslated one does.
        let mut serves = Serves::of(&catalog);
        serves.task_list = serves.tasks && (sessions.is_some() || catalog.group().is_protected());
        // Precomputed: a tool without mirrored parameters costs nothing per call.
        let mirrored = catalog
            .methods()
            .iter()
            .filter_map(|m| {
                let mirrors: Vec<_> = m.mirrored().into_iter().filter_map(Result::ok).collect();
                (!mirrors.is_empty()).then_some((m.def.name, mirrors))
            })
            .collect();
        let everything = |_: &[&str]| true;
        let pages = translations
            .languages()
            .iter()
            .map(|l| {
                let lists = Lists::build(
                    &catalog,
                    &translations,
                    l,
                    &opts,
                    &meta_member,
                    serves,
                    &everything,
                );
                (l.clone(), lists)
            })
            .collect();
        let views = ScopeViews::of(&catalog);
        let bad = super::tools::bad_tool_names(&catalog);
        let poison = (!bad.is_empty()).then(|| {
            if debug {
                format!(
                    "MCP group `{}` has methods with invalid tool names: {}",
                    catalog.group().name(),
                    bad.join("; ")
                )
            } else {
                "Internal Server Error".to_owned()
            }
        });
        if !bad.is_empty() {
            tracing::error!(group = catalog.group().name(), problems = ?bad, "MCP endpoint disabled: invalid tool names");
        }
        let capabilities = serves.capabilities(true, true, false);
        let mut discover = format!(
            "\"supportedVersions\":{},\"capabilities\":{}",
            json!(Era::stateless_versions()),
            capabilities
        );
        if let Some(i) = &opts.instructions {
            discover.push_str(&format!(",\"instructions\":{}", json!(i)));
        }
        discover.push_str(&format!(
            ",\"ttlMs\":{},\"cacheScope\":\"public\"",
            opts.list.ttl_ms
        ));
        let cards = super::card::Cards::new(
            &translations,
            catalog.group().name(),
            catalog.version(),
            server_name,
            server_version,
            opts.instructions.as_deref(),
        );
        Self {
            core,
            catalog,
            opts,
            pages,
            views,
            serves,
            poison,
            server_info,
            cards,
            discover_members: discover,
            meta_member,
            sessions,
            languages: translations
                .languages()
                .iter()
                .filter_map(|l| {
                    let v = axum::http::HeaderValue::from_str(l).ok()?;
                    Some((Arc::from(l.as_str()), v))
                })
                .collect(),
            translations,
            streams: EventStreams::of(&limits),
            limits,
            waiters: Arc::default(),
            running: super::cancel::Running::default(),
            mirrored,
        }
    }

    /// The negotiated language's shared name and `Content-Language` value (precomputed, so
    /// a request allocates neither); `None` for a language the endpoint does not know.
    pub(crate) fn language_header(
        &self,
        lang: &str,
    ) -> Option<&(Arc<str>, axum::http::HeaderValue)> {
        self.languages.iter().find(|(l, _)| &**l == lang)
    }

    /// The language `msg`'s carrier (SEP-2792) selects, as the endpoint shares its name;
    /// `None` when the message carries none, or one that is not an `Accept-Language` value
    /// (counted as absent, as the SEP asks). Negotiated as the header is, by the same bound.
    pub(crate) fn carried_language(&self, msg: &Message) -> Option<Arc<str>> {
        let carrier = msg.meta().language_carrier()?;
        let picked = self
            .translations
            .pick_limited(Some(carrier), self.limits.language_ranges);
        Some(match self.language_header(picked) {
            Some((shared, _)) => shared.clone(),
            None => Arc::from(picked),
        })
    }

    /// Makes the language `msg` carries the call's, and the notifications it sends (progress,
    /// logs) name it; returns it for [`Self::name_language`].
    pub(crate) fn take_language(&self, msg: &Message, extras: &mut CallExtras) -> Option<Arc<str>> {
        let lang = self.carried_language(msg)?;
        extras.language = Some(lang.clone());
        if let Some(inner) = extras.notifier.take() {
            extras.notifier = Some(Arc::new(Named {
                inner,
                lang: lang.clone(),
            }));
        }
        Some(lang)
    }

    /// Names the language the request asked for (SEP-2792) in `answer`'s `_meta` (nothing
    /// when it asked for none, or the answer has nowhere to say it).
    ///
    /// Where the writer's shape tells where the member goes, the answer is not read: a list
    /// page (an answer with a shared part) was named by [`name_page`], and a 2026-07-28 result
    /// ends with this endpoint's `_meta` stamp ([`Self::close_result`]), which takes it. Any
    /// other answer is scanned once ([`super::language::stamp`]).
    pub(crate) fn name_language(&self, answer: &mut Answer, carried: Option<Arc<str>>) {
        let Some(lang) = carried else {
            return;
        };
        let (head, shared) = answer.body.parts();
        if !shared.is_empty() {
            return;
        }
        // `,<stamp>}}`: the stamp's closing brace is the third byte from the end.
        let stamp = self.meta_member.as_bytes();
        let tail = stamp.len() + 3;
        if head.len() > tail
            && head.ends_with(b"}}")
            && head[head.len() - tail] == b','
            && &head[head.len() - tail + 1..head.len() - 2] == stamp
        {
            let at = head.len() - 3;
            let member = format!(
                ",\"{}\":{}",
                super::language::CONTENT_LANGUAGE,
                Value::from(&*lang)
            );
            let mut out = Vec::with_capacity(head.len() + member.len());
            out.extend_from_slice(&head[..at]);
            out.extend_from_slice(member.as_bytes());
            out.extend_from_slice(&head[at..]);
            answer.body = out.into();
        } else if let Some(stamped) = super::language::stamp(head, &lang) {
            answer.body = stamped.into();
        }
    }

    /// The catalog served.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The MCP options it was built with.
    pub fn options(&self) -> &McpOptions {
        &self.opts
    }

    /// Whether the endpoint keeps sessions (handshake era).
    pub fn is_stateful(&self) -> bool {
        self.sessions.is_some()
    }

    pub(crate) fn ok(&self, id: Option<&Value>, era: Era, members: &[u8]) -> Answer {
        let mut out = self.open_result(id, era, members.len(), !members.is_empty());
        out.extend_from_slice(members);
        self.close_result(out, era)
    }

    /// A result's opening (`{"jsonrpc":"2.0","id":..,"result":{`, plus `resultType` on the
    /// modern era), in a buffer sized for `len` bytes of members and the closing: each answer
    /// is written into one buffer, never copied.
    fn open_result(&self, id: Option<&Value>, era: Era, len: usize, members: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + self.meta_member.len() + 96);
        wire::open_result(&mut out, Id::from(id));
        out.push(b'{');
        if era.typed_results() {
            out.extend_from_slice(b"\"resultType\":\"complete\"");
            if members {
                out.push(b',');
            }
        }
        out
    }

    /// Ends a result begun by [`Self::open_result`] (the modern `_meta` stamp, then `}}`).
    pub(crate) fn close_result(&self, mut out: Vec<u8>, era: Era) -> Answer {
        if era.typed_results() {
            out.push(b',');
            out.extend_from_slice(self.meta_member.as_bytes());
        }
        out.extend_from_slice(b"}}");
        Answer {
            status: 200,
            body: out.into(),
            retry_after: None,
            outcome: Outcome::Ok,
        }
    }

    /// A result whose members and closing are precomputed (a tools/list page): only the
    /// opening is written, the rest is shared.
    fn ok_shared(&self, id: Option<&Value>, era: Era, rest: &Bytes) -> Answer {
        let mut head = Vec::with_capacity(64);
        wire::open_result(&mut head, Id::from(id));
        head.extend_from_slice(if era.typed_results() {
            b"{\"resultType\":\"complete\","
        } else {
            b"{"
        });
        Answer {
            status: 200,
            body: AnswerBody::shared(head, rest.clone()),
            retry_after: None,
            outcome: Outcome::Ok,
        }
    }

    /// An error answer with the era's status.
    pub fn error(
        &self,
        id: Option<&Value>,
        era: Era,
        code: i32,
        message: &str,
        data: Option<&Value>,
    ) -> Answer {
        let status = era.status(code);
        let retry_after = (code == codes::RATE_LIMITED)
            .then(|| data?.get("retryAfterMs")?.as_u64())
            .flatten()
            .map(std::time::Duration::from_millis);
        Answer {
            status,
            body: error_body(id, code, message, data).into(),
            retry_after,
            outcome: Outcome::Code(code),
        }
    }

    /// -32403 with HTTP 403 on both eras (the MCP authorization spec's insufficient scope).
    pub(crate) fn forbidden(&self, id: Option<&Value>, e: &RpcError) -> Answer {
        let wire = e.to_wire(self.core.env());
        Answer {
            status: 403,
            body: error_body(id, e.code(), e.message(), wire.get("data")).into(),
            retry_after: None,
            outcome: Outcome::Code(e.code()),
        }
    }

    /// The answer to a request for a tool, resource or prompt whose scopes the caller lacks,
    /// and those scopes (for the transport's `WWW-Authenticate` challenge); `None` when the
    /// request names nothing scoped (always, in a catalog without scopes).
    pub(crate) fn scope_refusal(
        &self,
        msg: &Message,
        identity: Option<&crate::Identity>,
    ) -> Option<(Answer, &'static [&'static str])> {
        self.views.as_ref()?;
        let params = msg.params.as_ref()?;
        let string = |key| params.get(key).and_then(Value::as_str);
        let id = msg.id.as_ref();
        let def = match msg.method.as_str() {
            "tools/call" => self.catalog.get(string("name")?)?.def,
            "prompts/get" => self.catalog.prompt(string("name")?)?.call.def,
            "resources/read" => match self.catalog.skill_file(string("uri")?) {
                Some((skill, _)) => return self.skill_refusal(id, skill, identity),
                None => self.catalog.resolve(string("uri")?)?.0.call.def,
            },
            "skills/get" => {
                let skill = self.catalog.skill(string("uri")?)?;
                return self.skill_refusal(id, skill, identity);
            }
            _ => return None,
        };
        if crate::catalog::admits(def.scopes, identity) {
            return None;
        }
        let e = RpcError::insufficient_scope(def.name, def.scopes);
        Some((self.forbidden(id, &e), def.scopes))
    }

    /// [`Self::scope_refusal`] of a skill (its entry and its files are scoped alike); `None`
    /// when `identity` has its scopes. Checked where skills are answered too, for the
    /// transports that do not ask first.
    pub(crate) fn skill_refusal(
        &self,
        id: Option<&Value>,
        skill: &crate::skill::SkillInfo,
        identity: Option<&crate::Identity>,
    ) -> Option<(Answer, &'static [&'static str])> {
        let scopes = skill.def.scopes;
        if crate::catalog::admits(scopes, identity) {
            return None;
        }
        let e = RpcError::insufficient_scope(skill.uri(), scopes);
        Some((self.forbidden(id, &e), scopes))
    }

    fn method_not_found(&self, id: Option<&Value>, era: Era, method: &str) -> Answer {
        self.error(
            id,
            era,
            codes::METHOD_NOT_FOUND,
            "Method not found",
            Some(&Value::String(crate::error::shown(method).into_owned())),
        )
    }

    /// Checks the modern envelope's required `_meta` keys and revision.
    pub fn check_modern_meta(&self, msg: &Message) -> Result<(), Answer> {
        self.check_modern_keys(msg)?;
        self.check_modern_version(msg)
    }

    /// Checks that the modern envelope has its required `_meta` keys (-32602).
    pub fn check_modern_keys(&self, msg: &Message) -> Result<(), Answer> {
        let id = msg.id.as_ref();
        let keys = [
            (META_PROTOCOL_VERSION, msg.meta().protocol_version.is_some()),
            (
                META_CLIENT_CAPABILITIES,
                msg.meta().client_capabilities.is_some(),
            ),
        ];
        // The list is built only when something is missing (not on every request).
        if keys.iter().any(|(_, present)| !present) {
            let missing: Vec<&str> = keys
                .into_iter()
                .filter_map(|(k, present)| (!present).then_some(k))
                .collect();
            let message = format!(
                "params._meta is missing the required envelope key(s): {}",
                missing.join(", ")
            );
            let era = Era::latest_stateless();
            return Err(self.error(id, era, codes::INVALID_PARAMS, &message, None));
        }
        Ok(())
    }

    /// Checks that the envelope's revision is a modern one we serve (-32022).
    pub fn check_modern_version(&self, msg: &Message) -> Result<(), Answer> {
        let id = msg.id.as_ref();
        let requested = msg.meta_version().unwrap_or_default();
        if Era::stateless_of(requested).is_none() {
            let data = json!({ "supported": Era::stateless_versions(), "requested": requested });
            return Err(self.error(
                id,
                Era::latest_stateless(),
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                Some(&data),
            ));
        }
        Ok(())
    }

    /// Whether a request runs user code that may send notifications (progress, logs), so a
    /// transport may answer it on a stream.
    pub fn is_call(method: &str) -> bool {
        Method::of(method) == Method::Call
    }

    /// Answers one request in `era`.
    /// The message is consumed: `tools/call` moves its arguments into the pipeline, uncopied.
    /// The language the message carries (SEP-2792) is the call's, and its answer names it.
    pub async fn handle(&self, mut msg: Message, era: Era, mut extras: CallExtras) -> Answer {
        let carried = self.take_language(&msg, &mut extras);
        let mut answer = self.handle_traced(&mut msg, era, &mut extras).await.0;
        self.name_language(&mut answer, carried);
        answer
    }

    /// [`Self::handle`], with the error of a `tools/call` whose method failed internally
    /// (-32603: a panic, a time limit), as a wire error object: a task ends `failed` on it.
    ///
    /// The message and extras are borrowed, and what the call keeps is taken out of them:
    /// every layer an async function adds holds its arguments twice (argument and local), so
    /// passing them by value put their 370 bytes into each layer's future, and the transport
    /// boxes and copies the whole.
    pub(crate) async fn handle_traced(
        &self,
        msg: &mut Message,
        era: Era,
        extras: &mut CallExtras,
    ) -> (Answer, Option<Value>) {
        // Neither spans exported nor metrics kept: nothing to make or read.
        if !crate::core::telemetry::traces_on() && !self.core.telemetry().is_on() {
            return self.answer(msg, era, extras).await;
        }
        let req = super::trace::Request {
            method: &msg.method,
            id: msg.id.as_ref(),
            params: msg.params.as_ref(),
            meta: msg.meta(),
        };
        let span = super::trace::request_span(&self.catalog, req, era, extras);
        // Boxed: the span, the clock and the labels would otherwise weigh on every request's
        // future, measured or not.
        Box::pin(self.measured(msg, era, extras, span)).await
    }

    /// [`Self::answer`] in its span, measured.
    async fn measured(
        &self,
        msg: &mut Message,
        era: Era,
        extras: &mut CallExtras,
        span: tracing::Span,
    ) -> (Answer, Option<Value>) {
        let op = self.operation(msg, era, extras);
        let started = std::time::Instant::now();
        let answered = {
            use tracing::Instrument as _;
            self.answer(msg, era, extras).instrument(span.clone()).await
        };
        let op = Operation {
            outcome: answered.0.outcome,
            ..op
        };
        super::trace::record_outcome(&span, op.outcome);
        self.core
            .telemetry()
            .operation(&op, started.elapsed().as_secs_f64());
        answered
    }

    /// What the metrics say of a request (every label one of the server's).
    fn operation(&self, msg: &Message, era: Era, extras: &CallExtras) -> Operation {
        let method = crate::core::telemetry::mcp_method_label(&msg.method);
        let named = || msg.param_name();
        let (tool, prompt) = match method {
            "tools/call" => (
                named()
                    .and_then(|n| self.catalog.get(n))
                    .map(|i| i.def.name),
                None,
            ),
            "prompts/get" => (
                None,
                named()
                    .and_then(|n| self.catalog.prompt(n))
                    .map(|p| p.def.name),
            ),
            _ => (None, None),
        };
        Operation {
            method,
            tool,
            prompt,
            version: era.version(),
            transport: super::trace::transport_of(extras),
            outcome: Outcome::Ok,
        }
    }

    /// [`Self::handle_traced`], unmeasured.
    async fn answer(
        &self,
        msg: &mut Message,
        era: Era,
        extras: &mut CallExtras,
    ) -> (Answer, Option<Value>) {
        if era.stateless() {
            // 2026-07-28: logs only when this request asks for them (`_meta` level).
            match msg.meta().log_level() {
                Ok(level) => extras.log_level = level,
                Err(m) => {
                    let a = self.error(msg.id.as_ref(), era, codes::INVALID_PARAMS, &m, None);
                    return (a, None);
                }
            }
            // A call may ask its client: multi-round-trip results (SEP-2322), unless its
            // input is already set (a task's).
            if Self::is_call(&msg.method)
                && extras.input.is_none()
                && self.may_ask(msg)
                && let Some(Value::Object(params)) = msg.params.as_mut()
            {
                // The field, not `meta()`: `params` borrows the message mutably.
                let caps = msg.meta.as_deref().unwrap_or(&NO_META).capabilities();
                match super::input::Round::open(
                    &self.opts.request_state_keys,
                    &self.limits,
                    &msg.method,
                    params,
                    caps,
                    self.opts.answers_in_advance,
                ) {
                    Ok(round) => extras.input = Some(Arc::new(round)),
                    Err(e) => {
                        let a = self.error(msg.id.as_ref(), era, e.code(), e.message(), None);
                        return (a, None);
                    }
                }
            }
        }
        if msg.method == "tools/call" {
            return self.tools_call(msg, era, extras).await;
        }
        // Boxed: the other methods' futures together weigh three times a tool call's, and
        // every future this one is part of (up to the handler's, which axum boxes per
        // request) would carry them and be copied whole.
        let (msg, extras) = (std::mem::take(msg), std::mem::take(extras));
        (Box::pin(self.handle_other(msg, era, extras)).await, None)
    }

    async fn handle_other(&self, msg: Message, era: Era, mut extras: CallExtras) -> Answer {
        if !self.serves.has(&msg.method) {
            return self.method_not_found(msg.id.as_ref(), era, &msg.method);
        }
        match msg.method.as_str() {
            "resources/read" | "prompts/get" => {
                if let Some(t) = msg.progress_token() {
                    if !self.progress_token_ok(t) {
                        return self.error(
                            msg.id.as_ref(),
                            era,
                            codes::INVALID_PARAMS,
                            "Invalid request parameters: `_meta.progressToken` is not a string or an integer of a bounded size",
                            None,
                        );
                    }
                    extras.progress_token = Some(t.clone());
                }
                let Message {
                    id, params, method, ..
                } = msg;
                return if method == "resources/read" {
                    self.resources_read(id.as_ref(), params, era, extras).await
                } else {
                    self.prompts_get(id.as_ref(), params, era, extras).await
                };
            }
            "completion/complete" => {
                let Message { id, params, .. } = msg;
                let who = extras.identity.as_deref();
                return self.complete(id.as_ref(), params, era, who).await;
            }
            _ => {}
        }
        let id = msg.id.as_ref();
        let serves_tasks = self.serves.tasks;
        match (era.method(&msg.method), msg.method.as_str()) {
            (Some(Method::Initialize), _) => {
                let requested = msg.requested_version();
                // stdio gives every request a notifier: its connection is a live stream.
                let live = self.sessions.is_some() || extras.notifier.is_some();
                self.ok(
                    id,
                    era,
                    self.initialize_members(Era::negotiate(requested), live)
                        .as_bytes(),
                )
            }
            (Some(Method::Ping), _) => self.ok(id, era, b""),
            (Some(m), _) if m.is_task() && serves_tasks => match era.tasks() {
                TaskForm::Extension => self.task_request(&msg, era, &extras).await,
                _ => self.handshake_task_request(&msg, era, &extras).await,
            },
            (Some(Method::Discover), _) => self.ok(id, era, self.discover_members.as_bytes()),
            // The level is kept by the transport's session (none here: nothing is sent).
            (Some(Method::SetLevel), _) => match set_level_param(&msg) {
                Ok(_) => self.ok(id, era, b""),
                Err(e) => self.error(id, era, e.code(), e.message(), None),
            },
            (Some(Method::Other), "tools/list") if era.tasks() == TaskForm::Experimental => self
                .list(&msg, era, &extras, |l| {
                    l.tools_handshake.as_ref().unwrap_or(&l.tools)
                }),
            (Some(Method::Other), "tools/list") => self.list(&msg, era, &extras, |l| &l.tools),
            (Some(Method::Other), "resources/list") => {
                self.list(&msg, era, &extras, |l| &l.resources)
            }
            (Some(Method::Other), "resources/templates/list") => {
                self.list(&msg, era, &extras, |l| &l.templates)
            }
            (Some(Method::Other), "prompts/list") => self.list(&msg, era, &extras, |l| &l.prompts),
            (Some(Method::Other), "skills/list") if self.serves.skills => {
                self.list(&msg, era, &extras, |l| &l.skills)
            }
            (Some(Method::Other), "skills/get") if self.serves.skills => {
                self.skills_get(id, msg.params.as_ref(), era, &extras)
            }
            (_, m) => self.method_not_found(id, era, m),
        }
    }

    /// What a change stream can carry on this endpoint.
    /// Whether 2025-11-25 `tasks/list` is offered.
    pub(crate) fn serves_task_list(&self) -> bool {
        self.serves.task_list
    }

    pub(crate) fn offered(&self) -> Offered {
        Offered {
            prompts: self.serves.prompts,
            resources: self.serves.resources,
            tasks: self.serves.tasks,
        }
    }

    /// The members of an initialize result for `version`; `live`: the connection can carry
    /// change notifications (a stateful endpoint's `GET` stream, stdio).
    pub fn initialize_members(&self, era: Era, live: bool) -> String {
        let mut s = format!(
            "\"protocolVersion\":\"{}\",\"capabilities\":{},\"serverInfo\":{}",
            era.version(),
            self.serves
                .capabilities(live, false, era.tasks() == TaskForm::Experimental),
            self.server_info
        );
        if let Some(i) = &self.opts.instructions {
            s.push_str(&format!(",\"instructions\":{}", json!(i)));
        }
        s
    }

    /// The language to answer in: the transport's negotiated one, else the default.
    pub fn language<'a>(&'a self, negotiated: Option<&'a str>) -> &'a str {
        negotiated
            .filter(|l| self.pages.contains_key(*l))
            .unwrap_or(self.translations.default_lang())
    }

    fn list(
        &self,
        msg: &Message,
        era: Era,
        extras: &CallExtras,
        which: impl Fn(&Lists) -> &ListPages,
    ) -> Answer {
        let id = msg.id.as_ref();
        let cursor = match msg.params.as_ref().and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.as_str()),
            Some(other) => {
                let m = format!("Invalid value for pagination parameter \"cursor\": {other}");
                return self.error(id, era, codes::INVALID_PARAMS, &m, None);
            }
        };
        let lang = self.language(extras.language.as_deref());
        let scoped;
        let pages = match &self.views {
            None => match self.pages.get(lang) {
                Some(pages) => pages,
                None => {
                    return self.error(
                        id,
                        era,
                        codes::INTERNAL_ERROR,
                        "no list for the language",
                        None,
                    );
                }
            },
            Some(views) => {
                scoped = self.view_lists(views, lang, extras.identity.as_deref());
                &*scoped
            }
        };
        match which(pages).page(cursor) {
            Ok(page) => {
                let rest = if era.typed_results() {
                    &page.modern
                } else {
                    &page.legacy
                };
                let mut answer = self.ok_shared(id, era, rest);
                if msg.meta().language_carrier().is_some() {
                    name_page(&mut answer, era, rest, lang);
                }
                answer
            }
            Err(e) => self.error(id, era, e.code(), e.message(), None),
        }
    }

    /// Whether the method a call names could ask its client: only one taking a context can
    /// (a tool without one never pays for opening a round: its arguments are not digested).
    fn may_ask(&self, msg: &Message) -> bool {
        if msg.method != "tools/call" {
            return true;
        }
        let name = msg
            .params
            .as_ref()
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str);
        name.and_then(|n| self.catalog.get(n))
            .is_none_or(|info| info.def.takes_context())
    }

    /// The lists `identity` sees in `lang`: kept per view once built.
    fn view_lists(
        &self,
        views: &ScopeViews<Arc<Lists>>,
        lang: &str,
        identity: Option<&crate::Identity>,
    ) -> Arc<Lists> {
        let view = views.view(identity);
        if let Some(lists) = view.and_then(|v| views.kept(v, lang)) {
            return lists;
        }
        let visible = |scopes: &[&str]| crate::catalog::admits(scopes, identity);
        let lists = Arc::new(Lists::build(
            &self.catalog,
            &self.translations,
            lang,
            &self.opts,
            &self.meta_member,
            self.serves,
            &visible,
        ));
        if let Some(v) = view {
            views.keep(v, lang, &lists);
        }
        lists
    }

    /// What answers a call that failed after asking its client: an `input_required` result
    /// (2026-07-28) or the protocol error the asking met (-32021, malformed input responses);
    /// `None` when the call's own error stands.
    pub(crate) fn interrupted(
        &self,
        id: Option<&Value>,
        era: Era,
        input: Option<&Arc<dyn crate::context::ClientInput>>,
    ) -> Option<Answer> {
        match input?.interrupted()? {
            Ok(Value::Object(members)) => {
                let mut out = Vec::with_capacity(256 + self.meta_member.len());
                wire::open_result(&mut out, Id::from(id));
                out.extend_from_slice(b"{\"resultType\":\"input_required\"");
                for (k, v) in &members {
                    out.push(b',');
                    let _ = serde_json::to_writer(&mut out, k);
                    out.push(b':');
                    let _ = serde_json::to_writer(&mut out, v);
                }
                Some(self.close_result(out, era))
            }
            Ok(_) => None,
            Err(e) => {
                let wire = e.to_wire(self.core.env());
                Some(self.error(id, era, e.code(), e.message(), wire.get("data")))
            }
        }
    }

    async fn tools_call(
        &self,
        msg: &mut Message,
        era: Era,
        extras: &mut CallExtras,
    ) -> (Answer, Option<Value>) {
        // The message ends here: what the call needs is taken out of it.
        let id = msg.id.take();
        extras.progress_token = msg.meta.take().and_then(|m| m.progress_token);
        let (info, args) = match self.tools_call_args(id.as_ref(), msg.params.take(), era, extras) {
            Ok(call) => call,
            Err(answer) => return (answer, None),
        };
        // A tool the caller may not call is a protocol error, not a tool result.
        if let Err(e) = info.check_scopes(extras.identity.as_deref()) {
            return (self.forbidden(id.as_ref(), &e), None);
        }
        let input = extras.input.clone();
        let result = self
            .core
            .call(CallRequest {
                catalog: &self.catalog,
                info,
                params: Some(Value::Object(args)),
                face: Face::Mcp,
                extras: std::mem::take(extras),
            })
            .await;
        if result.is_err()
            && let Some(answer) = self.interrupted(id.as_ref(), era, input.as_ref())
        {
            return (answer, None);
        }
        let failure = match &result {
            Err(e) if e.code() == codes::INTERNAL_ERROR => Some(e.to_wire(self.core.env())),
            _ => None,
        };
        (
            self.tools_call_answer(id.as_ref(), era, info, result),
            failure,
        )
    }

    /// The tool and arguments of a `tools/call`, or the answer to an invalid one; the progress
    /// token moves into `extras`.
    fn tools_call_args(
        &self,
        id: Option<&Value>,
        params: Option<Value>,
        era: Era,
        extras: &mut CallExtras,
    ) -> Result<(&Arc<MethodInfo>, Map<String, Value>), Answer> {
        let invalid = |m: &str| self.error(id, era, codes::INVALID_PARAMS, m, None);
        let Some(Value::Object(mut params)) = params else {
            return Err(invalid("Invalid request parameters"));
        };
        if !params.get("name").is_some_and(Value::is_string) {
            return Err(invalid(
                "Invalid request parameters: `name` must be a string",
            ));
        }
        // Taken out of the params, not cloned: the message ends here.
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a,
            Some(_) => {
                return Err(invalid(
                    "Invalid request parameters: `arguments` must be an object",
                ));
            }
        };
        if let Some(token) = &extras.progress_token
            && !self.progress_token_ok(token)
        {
            return Err(invalid(&format!(
                "Invalid request parameters: `_meta.progressToken` must be a string or an integer of at most {} bytes",
                self.limits.progress_token_bytes
            )));
        }
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(invalid("Invalid request parameters"));
        };
        let Some(info) = self.catalog.get(name) else {
            return Err(invalid(&format!(
                "Unknown tool: {}",
                crate::error::shown(name)
            )));
        };
        Ok((info, arguments))
    }

    /// Whether a progress token is one the specification allows (a string or an integer)
    /// within [`Limits::progress_token_bytes`]: it is copied into every progress notification.
    pub(crate) fn progress_token_ok(&self, token: &Value) -> bool {
        let max = self.limits.progress_token_bytes;
        match token {
            Value::String(s) => s.len() + 2 <= max,
            Value::Number(n) => n.is_i64() || n.is_u64(),
            _ => false,
        }
    }

    /// The answer to a `tools/call` from the pipeline's result.
    fn tools_call_answer(
        &self,
        id: Option<&Value>,
        era: Era,
        info: &MethodInfo,
        result: Result<Output, RpcError>,
    ) -> Answer {
        let name = info.def.name;
        let mut members = self.open_result(id, era, 128, true);
        match result {
            Ok(Output::Json(raw)) => {
                // The result goes in twice (escaped as text, then as is): one allocation
                // for both, not a doubling per few KB of a large result.
                members.reserve(2 * raw.get().len() + 96);
                members.extend_from_slice(b"\"content\":[{\"type\":\"text\",\"text\":");
                crate::wire::json_string(&mut members, raw.get());
                members.extend_from_slice(b"}],\"structuredContent\":{\"result\":");
                members.extend_from_slice(raw.get().as_bytes());
                members.extend_from_slice(b"},\"isError\":false");
            }
            Ok(Output::Tool(raw)) => {
                let s = raw.get();
                let inner = s.get(1..s.len().saturating_sub(1)).unwrap_or("");
                if inner.trim().is_empty() && era.typed_results() {
                    members.pop(); // the `,` after `resultType`: no members follow
                }
                members.extend_from_slice(inner.as_bytes());
            }
            Err(e)
                if e.is_schema_failure()
                    && self.opts.invalid_arguments == InvalidArguments::JsonRpcError =>
            {
                let (message, data) = invalid_arguments(name, &e);
                return self.error(id, era, codes::INVALID_PARAMS, &message, Some(&data));
            }
            // Refused before it ran (rate limited), or unable to go on without a capability of
            // the client: a protocol error, not the tool's failure.
            Err(e)
                if matches!(
                    e.code(),
                    codes::RATE_LIMITED | codes::MISSING_CLIENT_CAPABILITY
                ) =>
            {
                let wire = e.to_wire(self.core.env());
                return self.error(id, era, e.code(), e.message(), wire.get("data"));
            }
            Err(e) => {
                let text = if e.is_schema_failure() {
                    invalid_arguments(name, &e).0
                } else {
                    e.to_wire(self.core.env()).to_string()
                };
                members.extend_from_slice(b"\"content\":[{\"type\":\"text\",\"text\":");
                let _ = serde_json::to_writer(&mut members, &text);
                members.extend_from_slice(b"}],\"isError\":true");
                let mut a = self.close_result(members, era);
                a.outcome = Outcome::ToolError;
                return a;
            }
        }
        self.close_result(members, era)
    }
}

/// The -32602 message and data of arguments that fail the schema:
/// `Invalid parameters for tool 'X': Property '/limit': ...` (at most three, then a count).
fn invalid_arguments(tool: &str, e: &RpcError) -> (String, Value) {
    let list = e.violation_list().unwrap_or_default();
    let mut parts: Vec<String> = list
        .iter()
        .take(3)
        .map(|v| format!("Property '{}': {}", v.pointer, v.message))
        .collect();
    if list.len() > 3 {
        parts.push("...and more errors.".to_owned());
    }
    let message = format!("Invalid parameters for tool '{tool}': {}", parts.join("; "));
    let errors: Vec<Value> = list
        .iter()
        .map(|v| json!({ "pointer": v.pointer, "keyword": v.keyword, "message": v.message }))
        .collect();
    (message, json!({ "validation_errors": errors }))
}
