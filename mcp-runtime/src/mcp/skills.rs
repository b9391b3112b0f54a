//! Skills on the MCP face (SEP-2640, the `io.modelcontextprotocol/skills` extension):
//! `skills/get` and `resources/read` of a skill's files, answered from the entries the catalog
//! wrote once and the bytes embedded in the binary (`skills/list` is a precomputed list, its
//! entries in `items`).

use serde_json::Value;

use super::handler::{Answer, McpEndpoint};
use super::protocol::Era;
use super::surface::bounded_uri;
use crate::error::{codes, shown};
use crate::skill::ServedFile;

impl McpEndpoint {
    /// The cache hints of a skill's entry or file on 2026-07-28: the lists' time to live (the
    /// content is the binary's), private in a protected group.
    fn skill_hints(&self, era: Era, members: &mut Vec<u8>) {
        if era.typed_results() {
            let scope = if self.catalog.group().is_protected() {
                "private"
            } else {
                "public"
            };
            let ttl = self.opts.list.ttl_ms;
            members.extend_from_slice(
                format!(",\"ttlMs\":{ttl},\"cacheScope\":\"{scope}\"").as_bytes(),
            );
        }
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` the URI names; -32602 for a URI
    /// that names none (SEP-2640), -32403 for a caller lacking the skill's scopes.
    pub(crate) fn skills_get(
        &self,
        id: Option<&Value>,
        params: Option<&Value>,
        era: Era,
        extras: &crate::context::CallExtras,
    ) -> Answer {
        let uri = params.and_then(|p| p.get("uri")).and_then(Value::as_str);
        let uri = match bounded_uri(self, id, era, uri) {
            Ok(u) => u,
            Err(a) => return a,
        };
        let Some(skill) = self.catalog.skill(uri) else {
            let message = format!("No skill is served at {}", shown(uri));
            return self.error(id, era, codes::INVALID_PARAMS, &message, None);
        };
        if let Some((refused, _)) = self.skill_refusal(id, skill, extras.identity.as_deref()) {
            return refused;
        }
        let lang = self.language(extras.language.as_deref());
        let entry = &skill.variant(Some(lang)).entry;
        let mut members = Vec::with_capacity(entry.len() + 64);
        members.extend_from_slice(b"\"skill\":");
        members.extend_from_slice(entry);
        self.skill_hints(era, &mut members);
        self.ok(id, era, &members)
    }

    /// `resources/read` of a skill's file: its text (UTF-8) or its bytes in base64, exactly
    /// the bytes its entry's digest covers.
    pub(crate) fn skill_read(&self, id: Option<&Value>, era: Era, file: &ServedFile) -> Answer {
        let mut content = serde_json::Map::new();
        content.insert("uri".into(), file.uri.clone().into());
        content.insert("mimeType".into(), file.file.mime_type.into());
        match file.text {
            Some(text) => content.insert("text".into(), text.into()),
            None => content.insert("blob".into(), base64(file.file.bytes).into()),
        };
        let mut members = Vec::with_capacity(file.file.bytes.len() + 128);
        members.extend_from_slice(b"\"contents\":[");
        // A map of strings: serialization cannot fail.
        let _ = serde_json::to_writer(&mut members, &content);
        members.push(b']');
        self.skill_hints(era, &mut members);
        self.ok(id, era, &members)
    }
}

/// Standard base64 with padding (RFC 4648), as `blob` contents are written.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
