//! Server cards (SEP-2127): the document that describes an MCP endpoint before a client
//! connects (its name, version, title, description and where to connect), served at
//! `<endpoint>/server-card`, and its entry in the site's MCP catalog
//! (`/.well-known/mcp/catalog.json`). The texts are translated like every other title and
//! description (`server` in the translation files: `title`, `description`), written once per
//! language when the endpoint is built; only the URL, which follows the request's origin
//! unless `public_url` fixes it, is written per request.

use serde_json::{Value, json};

use super::protocol::Era;
use crate::i18n::SERVER_TEXTS;

/// The media type of a server card.
pub(crate) const CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";

/// The schema a card states it follows.
const CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json";

/// The schema of the MCP Registry's `server.json` (what `mcp-publisher publish` takes).
const REGISTRY_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The longest title and description of a card (the card schema's `maxLength`, the
/// registry's for a description).
const MAX_TEXT: usize = 100;

/// What a card says of its endpoint in one language.
#[derive(Debug, Clone)]
pub(crate) struct CardTexts {
    title: String,
    description: String,
}

impl CardTexts {
    /// The texts of `group`'s card in `lang`: the translations' `server` entry (group, then
    /// base files), else the server's name and its instructions (or a sentence naming the
    /// group), each cut to 100 characters.
    pub(crate) fn of(
        translations: &crate::i18n::Translations,
        group: &str,
        lang: &str,
        server: &str,
        instructions: Option<&str>,
    ) -> Self {
        let r = translations.resolve(group, lang, SERVER_TEXTS);
        let title = r.title.unwrap_or_else(|| server.to_owned());
        let description = r
            .description
            .or_else(|| instructions.map(str::to_owned))
            .unwrap_or_else(|| format!("The `{group}` tools of {server} over MCP."));
        CardTexts {
            title: cut(&title),
            description: cut(&description),
        }
    }
}

/// At most [`MAX_TEXT`] characters, the last one `…` when cut, never empty.
fn cut(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_TEXT {
        return if text.is_empty() {
            "-".to_owned()
        } else {
            text.to_owned()
        };
    }
    let mut s: String = text.chars().take(MAX_TEXT - 1).collect();
    s.push('…');
    s
}

/// Where a site's endpoints are published, from its public origin (`https://shop.example.com`
/// or the request's `http://127.0.0.1:8080`): the reverse-DNS namespace of card names, and the
/// publisher domain of catalog identifiers. An address or `localhost` is `localhost` for both.
pub(crate) struct Publisher {
    pub(crate) namespace: String,
    pub(crate) domain: String,
}

impl Publisher {
    pub(crate) fn of(origin: &str) -> Self {
        let host = origin
            .split_once("://")
            .map_or(origin, |(_, rest)| rest)
            .split(['/', '?', '#'])
            .next()
            .unwrap_or_default();
        // An IPv6 literal keeps its colons inside its brackets.
        let host = if host.starts_with('[') {
            host
        } else {
            host.rsplit_once(':').map_or(host, |(h, _)| h)
        };
        let domain = host.to_ascii_lowercase();
        let is_name = domain.bytes().any(|b| b.is_ascii_alphabetic())
            && domain
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
        if !is_name || domain == "localhost" {
            return Publisher {
                namespace: "localhost".to_owned(),
                domain: "localhost".to_owned(),
            };
        }
        let namespace = domain.split('.').rev().collect::<Vec<_>>().join(".");
        Publisher { namespace, domain }
    }
}

/// `s` with every character a card name does not take (`[A-Za-z0-9._-]`) as `-`.
fn name_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The cards of one endpoint: its name, version and texts per language, written once when the
/// endpoint is built.
#[derive(Debug)]
pub(crate) struct Cards {
    /// The name after the namespace: the server's name, the group and the version
    /// (`catalog.mcp.v1`).
    suffix: String,
    version: String,
    /// Per language, the default first.
    texts: Vec<(String, CardTexts)>,
}

impl Cards {
    pub(crate) fn new(
        translations: &crate::i18n::Translations,
        group: &str,
        group_version: u32,
        server: &str,
        server_version: &str,
        instructions: Option<&str>,
    ) -> Self {
        let of = |lang: &str| CardTexts::of(translations, group, lang, server, instructions);
        let default = translations.default_lang();
        let mut texts = vec![(default.to_owned(), of(default))];
        texts.extend(
            translations
                .languages()
                .iter()
                .filter(|l| l.as_str() != default)
                .map(|l| (l.clone(), of(l))),
        );
        Cards {
            suffix: format!(
                "{}.{}.v{group_version}",
                name_part(server),
                name_part(group)
            ),
            version: server_version.to_owned(),
            texts,
        }
    }

    /// The texts in `lang`, else in the default language.
    fn texts(&self, lang: &str) -> &CardTexts {
        let found = self.texts.iter().find(|(l, _)| l == lang);
        &found.unwrap_or(&self.texts[0]).1
    }

    /// The server card in `lang`, its remote at `url` (the endpoint's absolute URL).
    pub(crate) fn card(&self, lang: &str, publisher: &Publisher, url: &str) -> Vec<u8> {
        let mut card = self.server(CARD_SCHEMA, lang, publisher, url);
        card["remotes"][0]["supportedProtocolVersions"] = json!(Era::versions());
        serde_json::to_vec(&card).unwrap_or_default()
    }

    /// The MCP Registry's `server.json` of the endpoint in `lang`, its remote at `url`: the
    /// card's name, version, texts and remote, under the registry's schema (for
    /// `mcp-publisher publish`; the name's namespace must be one the publisher can prove).
    pub(crate) fn server_json(&self, lang: &str, publisher: &Publisher, url: &str) -> Vec<u8> {
        serde_json::to_vec(&self.server(REGISTRY_SCHEMA, lang, publisher, url)).unwrap_or_default()
    }

    /// What a card and a `server.json` share.
    fn server(&self, schema: &str, lang: &str, publisher: &Publisher, url: &str) -> Value {
        let texts = self.texts(lang);
        json!({
            "$schema": schema,
            "name": format!("{}/{}", publisher.namespace, self.suffix),
            "version": self.version,
            "title": texts.title,
            "description": texts.description,
            "remotes": [{"type": "streamable-http", "url": url}],
        })
    }

    /// The endpoint's entry in the site's MCP catalog, or in its AI Catalog (`named`: false,
    /// where the card's own title is the name to show), its card at `card_url`.
    pub(crate) fn catalog_entry(
        &self,
        lang: &str,
        publisher: &Publisher,
        card_url: &str,
        named: bool,
    ) -> Value {
        let mut entry = json!({
            "identifier": format!("urn:air:{}:mcp:{}", publisher.domain, self.suffix),
            "type": CARD_MEDIA_TYPE,
            "url": card_url,
        });
        if named {
            entry["displayName"] = self.texts(lang).title.clone().into();
        }
        entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_publisher_is_the_origin_s_domain_reversed() {
        let p = Publisher::of("https://shop.example.com");
        assert_eq!(
            (p.namespace.as_str(), p.domain.as_str()),
            ("com.example.shop", "shop.example.com")
        );
        let p = Publisher::of("http://Shop.Example.com:8443/api");
        assert_eq!(p.namespace, "com.example.shop");
        let p = Publisher::of("http://intranet:8080");
        assert_eq!(
            (p.namespace.as_str(), p.domain.as_str()),
            ("intranet", "intranet")
        );
        for local in [
            "http://127.0.0.1:8080",
            "http://localhost:3000",
            "http://[::1]:80",
        ] {
            let p = Publisher::of(local);
            assert_eq!(
                (p.namespace.as_str(), p.domain.as_str()),
                ("localhost", "localhost"),
                "{local}"
            );
        }
    }

    #[test]
    fn texts_are_cut_to_the_card_s_bounds() {
        assert_eq!(cut("  Catalog "), "Catalog");
        assert_eq!(cut(""), "-");
        let long = "é".repeat(150);
        let c = cut(&long);
        assert_eq!(c.chars().count(), 100);
        assert!(c.ends_with('…'));
        assert_eq!(name_part("my shop/ü"), "my-shop--");
    }
}
