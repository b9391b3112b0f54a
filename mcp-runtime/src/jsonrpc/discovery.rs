//! The discovery documents of one catalog: its OpenRPC document (`GET`, `?info` and
//! `rpc.discover`) and its Postman collection, each serialized once per language on its first
//! request, with its one URL left out, and written per request with the URL the request sees
//! (see [`crate::transport::mount`]). Nothing is serialized again after that.
//!
//! Why on first request and not when the server is built: serializing them is most of a
//! build's work (about 130 k instructions per method for both documents in one language), and
//! most servers are never asked for most of them (a Postman collection, a language nobody
//! reads). A server with 10 000 methods then starts in a fraction of the time, and the first
//! request for one document pays for that document alone.

use std::sync::{Arc, OnceLock};

use crate::catalog::Catalog;
use crate::i18n::Translations;
use crate::wire::{self, Id};

use super::spliced::Spliced;

/// The end of the `?info` document: the server object, the array and the document close.
pub(crate) const INFO_END: &[u8] = b"}]}";

/// The documents of one catalog in one language, each serialized on its first use.
#[derive(Default)]
struct Slots {
    openrpc: OnceLock<Spliced>,
    /// The OpenRPC document with its recursive schemas unrolled, per depth (`?unroll`).
    unrolled: [OnceLock<Spliced>; super::openrpc::MAX_UNROLL],
    postman: OnceLock<Spliced>,
}

/// The documents of one catalog in one language, as one caller may see them (see
/// [`Discovery::negotiate`]).
pub(crate) struct Documents<'a> {
    discovery: &'a Discovery,
    lang: &'a str,
    slots: Arc<Slots>,
    /// Who is asking, in a catalog with scoped methods (the documents list only what the
    /// identity may call); `Whole`: every method (the operator's copy).
    reader: Reader<'a>,
}

/// Whom documents are for.
#[derive(Clone, Copy)]
enum Reader<'a> {
    Caller(Option<&'a crate::Identity>),
    Whole,
}

impl Documents<'_> {
    /// The language of the documents.
    pub(crate) fn lang(&self) -> &str {
        self.lang
    }

    /// The OpenRPC document; its head alone (with the URL and [`INFO_END`]) is `?info`.
    pub(crate) fn openrpc(&self) -> &Spliced {
        self.slots.openrpc.get_or_init(|| self.build_openrpc(None))
    }

    /// The OpenRPC document with its recursive schemas unrolled `depth` levels (1 to
    /// [`super::openrpc::MAX_UNROLL`]; `None` past that), for tools that cannot stop at a
    /// cycle.
    pub(crate) fn openrpc_unrolled(&self, depth: usize) -> Option<&Spliced> {
        let slot = self.slots.unrolled.get(depth.checked_sub(1)?)?;
        Some(slot.get_or_init(|| self.build_openrpc(Some(depth))))
    }

    fn build_openrpc(&self, unroll: Option<usize>) -> Spliced {
        let d = self.discovery;
        super::openrpc::spliced(
            &d.catalog,
            &d.translations,
            self.lang,
            &d.server_name,
            &d.versions,
            &|def| self.visible(def),
            unroll,
        )
    }

    fn visible(&self, def: &crate::MethodDef) -> bool {
        match self.reader {
            Reader::Whole => true,
            Reader::Caller(identity) => crate::catalog::admits(def.scopes, identity),
        }
    }

    /// The Postman collection; the URL is its `baseUrl` variable.
    pub(crate) fn postman(&self) -> &Spliced {
        let d = self.discovery;
        self.slots.postman.get_or_init(|| {
            super::postman::spliced(
                &d.catalog,
                &super::postman::Collection {
                    translations: &d.translations,
                    lang: self.lang,
                    server_name: &d.server_name,
                    path: &d.path,
                    token_header: d.token_header.as_deref(),
                    visible: &|def| self.visible(def),
                },
            )
        })
    }
}

/// The documents of one catalog in every language of the server.
pub(crate) struct Discovery {
    catalog: Arc<Catalog>,
    /// The endpoint's path (`/rpc/shop/v1`).
    path: String,
    /// The configured public URL without a trailing `/`, or empty.
    public_url: String,
    translations: Arc<Translations>,
    language_ranges: usize,
    server_name: String,
    /// The catalog's group's versions.
    versions: Vec<u32>,
    /// The token header of a protected group.
    token_header: Option<String>,
    /// The documents in the default language, and in every other language of `translations`
    /// (in a catalog without scoped methods: everyone sees them all).
    default: Arc<Slots>,
    others: Vec<(String, Arc<Slots>)>,
    /// In a catalog with scoped methods, the documents per view instead (`None`: none).
    views: Option<crate::scope_views::ScopeViews<Arc<Slots>>>,
}

/// What a [`Discovery`] is built from, beside the catalog.
pub(crate) struct Setup<'a> {
    pub translations: &'a Arc<Translations>,
    pub language_ranges: usize,
    pub server_name: &'a str,
    pub versions: &'a [u32],
    pub path: &'a str,
    pub public_url: Option<&'a str>,
    /// The token header of a protected group.
    pub token_header: Option<&'a str>,
}

impl Discovery {
    /// The documents of `catalog` in every language, none serialized yet.
    pub(crate) fn new(catalog: &Arc<Catalog>, s: &Setup<'_>) -> Self {
        let default_lang = s.translations.default_lang();
        let others = s
            .translations
            .languages()
            .iter()
            .filter(|l| *l != default_lang)
            .map(|l| (l.clone(), Arc::default()))
            .collect();
        Self {
            catalog: catalog.clone(),
            path: s.path.to_owned(),
            public_url: s
                .public_url
                .unwrap_or_default()
                .trim_end_matches('/')
                .to_owned(),
            translations: s.translations.clone(),
            language_ranges: s.language_ranges,
            server_name: s.server_name.to_owned(),
            versions: s.versions.to_vec(),
            token_header: s.token_header.map(str::to_owned),
            default: Arc::default(),
            others,
            views: crate::scope_views::ScopeViews::of(catalog),
        }
    }

    /// The documents `identity` may see in the language an `Accept-Language` value
    /// negotiates (the default language without one).
    pub(crate) fn negotiate<'a>(
        &'a self,
        accept_language: Option<&str>,
        identity: Option<&'a crate::Identity>,
    ) -> Documents<'a> {
        let lang = self
            .translations
            .pick_limited(accept_language, self.language_ranges);
        self.language(lang, identity)
    }

    /// The documents `identity` may see in `lang` (a language of the server; else the
    /// default language).
    pub(crate) fn language<'a>(
        &'a self,
        lang: &str,
        identity: Option<&'a crate::Identity>,
    ) -> Documents<'a> {
        let (lang, slots) = self.slots(lang);
        let slots = match &self.views {
            None => slots.clone(),
            // Kept per view once built; a view past those kept is built for its request.
            Some(views) => match views.view(identity) {
                Some(v) => views.kept(v, lang).unwrap_or_else(|| {
                    let fresh = Arc::<Slots>::default();
                    views.keep(v, lang, &fresh);
                    views.kept(v, lang).unwrap_or(fresh)
                }),
                None => Arc::default(),
            },
        };
        Documents {
            discovery: self,
            lang,
            slots,
            reader: Reader::Caller(identity),
        }
    }

    /// Every method's documents in `lang`, whatever their scopes: what the operator's
    /// [`crate::Server::openrpc`] and [`crate::Server::postman`] give.
    pub(crate) fn whole(&self, lang: &str) -> Documents<'_> {
        let (lang, slots) = self.slots(lang);
        Documents {
            discovery: self,
            lang,
            slots: slots.clone(),
            reader: Reader::Whole,
        }
    }

    /// The language's slots of the whole documents (the default language's when unknown).
    fn slots(&self, lang: &str) -> (&str, &Arc<Slots>) {
        self.others
            .iter()
            .find(|(l, _)| l == lang)
            .map(|(l, d)| (l.as_str(), d))
            .unwrap_or((self.translations.default_lang(), &self.default))
    }

    /// The endpoint's path (`/rpc/shop/v1`).
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The OpenRPC `servers[0].url` under `prefix`: relative (`/api/rpc/shop/v1`), or
    /// absolute when a public URL is configured.
    pub(crate) fn openrpc_url(&self, prefix: &str) -> String {
        format!("{}{prefix}{}", self.public_url, self.path)
    }

    /// The OpenRPC `servers[0].url` of a request that named `host`: absolute, as the OpenRPC
    /// meta-schema wants it (a `uri`) and as generators read it. Under the configured public
    /// URL, else under the origin of the request's `Host` (checked by the host policy before;
    /// `http://`: behind a proxy that ends TLS, configure the public URL); relative only when
    /// there is neither.
    pub(crate) fn openrpc_url_for(&self, host: Option<&str>, prefix: &str) -> String {
        match host.filter(|h| self.public_url.is_empty() && crate::edge::policy::is_host(h)) {
            Some(host) => format!("http://{host}{prefix}{}", self.path),
            None => self.openrpc_url(prefix),
        }
    }
}

/// `rpc.discover` on one request: the catalog's documents, the caller's `Accept-Language` and
/// the prefix the router is nested under.
#[derive(Clone, Copy)]
pub(crate) struct Discover<'a> {
    pub discovery: &'a Discovery,
    pub accept_language: Option<&'a str>,
    pub prefix: &'a str,
    /// The request's `Host` (`None` in process): the document's URL is absolute under it.
    pub host: Option<&'a str>,
}

impl Discover<'_> {
    /// Appends the answer to `rpc.discover` with `id`: the OpenRPC document `identity` may
    /// see, as the result.
    pub(crate) fn write_answer(
        &self,
        out: &mut Vec<u8>,
        id: Id<'_>,
        identity: Option<&crate::Identity>,
    ) {
        let docs = self.discovery.negotiate(self.accept_language, identity);
        wire::open_result(out, id);
        docs.openrpc()
            .write(out, &self.discovery.openrpc_url_for(self.host, self.prefix));
        out.push(b'}');
    }
}
