//! The discovery documents of one catalog: its OpenRPC document (`GET`, `?info` and
//! `rpc.discover`) and its Postman collection, serialized once per language when the server
//! is built, each with its one URL left out, and written per request with the URL the
//! request sees (see [`crate::transport::mount`]). Nothing is serialized per request.

use axum::body::Bytes;

use crate::catalog::Catalog;
use crate::edge::write::{self, Id};
use crate::i18n::Translations;

/// A document serialized once, with one URL left out: `head`, the URL as a JSON string,
/// `tail`.
pub(crate) struct Spliced {
    head: Bytes,
    tail: Bytes,
}

impl Spliced {
    pub(crate) fn new(head: Vec<u8>, tail: Vec<u8>) -> Self {
        Self {
            head: head.into(),
            tail: tail.into(),
        }
    }

    /// The document with `url`, as frames (the shared parts are not copied).
    pub(crate) fn frames(&self, url: &str) -> Vec<Bytes> {
        vec![
            self.head.clone(),
            json_string(url).into(),
            self.tail.clone(),
        ]
    }

    /// The head, `url` and `end` instead of the tail (the `?info` document).
    pub(crate) fn frames_ending(&self, url: &str, end: &'static [u8]) -> Vec<Bytes> {
        vec![
            self.head.clone(),
            json_string(url).into(),
            Bytes::from_static(end),
        ]
    }

    /// Appends the document with `url`.
    fn write(&self, out: &mut Vec<u8>, url: &str) {
        out.extend_from_slice(&self.head);
        out.extend_from_slice(&json_string(url));
        out.extend_from_slice(&self.tail);
    }

    /// The document with `url`, in one buffer.
    pub(crate) fn to_bytes(&self, url: &str) -> Bytes {
        let mut out = Vec::new();
        self.write(&mut out, url);
        out.into()
    }
}

/// A URL as a JSON string.
fn json_string(url: &str) -> Vec<u8> {
    serde_json::to_vec(url).unwrap_or_else(|_| b"\"\"".to_vec())
}

/// The end of the `?info` document: the server object, the array and the document close.
pub(crate) const INFO_END: &[u8] = b"}]}";

/// The documents of one catalog in one language.
pub(crate) struct Documents {
    /// The OpenRPC document; its head alone (with the URL and [`INFO_END`]) is `?info`.
    pub openrpc: Spliced,
    /// The Postman collection; the URL is its `baseUrl` variable.
    pub postman: Spliced,
}

/// The documents of one catalog in every language of the server.
pub(crate) struct Discovery {
    /// The endpoint's path (`/rpc/shop/v1`).
    path: String,
    /// The configured public URL without a trailing `/`, or empty.
    public_url: String,
    translations: std::sync::Arc<Translations>,
    language_ranges: usize,
    /// The documents in the default language, and in every other language of `translations`.
    default: Documents,
    others: Vec<(String, Documents)>,
}

/// What a [`Discovery`] is built from, beside the catalog.
pub(crate) struct Setup<'a> {
    pub translations: &'a std::sync::Arc<Translations>,
    pub language_ranges: usize,
    pub server_name: &'a str,
    pub versions: &'a [u32],
    pub path: &'a str,
    pub public_url: Option<&'a str>,
    /// The token header of a protected group.
    pub token_header: Option<&'a str>,
}

impl Discovery {
    /// Serializes every document of `catalog` in every language.
    pub(crate) fn build(catalog: &Catalog, s: &Setup<'_>) -> Self {
        let documents = |lang: &str| {
            let openrpc =
                super::openrpc::spliced(catalog, s.translations, lang, s.server_name, s.versions);
            let postman = super::postman::spliced(
                catalog,
                &super::postman::Collection {
                    translations: s.translations,
                    lang,
                    server_name: s.server_name,
                    path: s.path,
                    token_header: s.token_header,
                },
            );
            Documents { openrpc, postman }
        };
        let default_lang = s.translations.default_lang();
        let others = s
            .translations
            .languages()
            .iter()
            .filter(|l| *l != default_lang)
            .map(|l| (l.clone(), documents(l)))
            .collect();
        Self {
            path: s.path.to_owned(),
            public_url: s
                .public_url
                .unwrap_or_default()
                .trim_end_matches('/')
                .to_owned(),
            translations: s.translations.clone(),
            language_ranges: s.language_ranges,
            default: documents(default_lang),
            others,
        }
    }

    /// The documents in the language an `Accept-Language` value negotiates (the default
    /// language without one).
    pub(crate) fn negotiate(&self, accept_language: Option<&str>) -> (&str, &Documents) {
        let lang = self
            .translations
            .pick_limited(accept_language, self.language_ranges);
        self.language(lang)
    }

    /// The documents in `lang` (a language of the server; else the default language).
    pub(crate) fn language(&self, lang: &str) -> (&str, &Documents) {
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
}

/// `rpc.discover` on one request: the catalog's documents, the caller's `Accept-Language` and
/// the prefix the router is nested under.
#[derive(Clone, Copy)]
pub(crate) struct Discover<'a> {
    pub discovery: &'a Discovery,
    pub accept_language: Option<&'a str>,
    pub prefix: &'a str,
}

impl Discover<'_> {
    /// Appends the answer to `rpc.discover` with `id`: the OpenRPC document as the result.
    pub(crate) fn write_answer(&self, out: &mut Vec<u8>, id: Id<'_>) {
        let (_, docs) = self.discovery.negotiate(self.accept_language);
        write::open_result(out, id);
        docs.openrpc
            .write(out, &self.discovery.openrpc_url(self.prefix));
        out.push(b'}');
    }
}
