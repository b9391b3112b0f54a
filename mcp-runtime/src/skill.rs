//! Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension) as the server serves them:
//! each [`SkillDef`] read once when the catalogs are built, into its `skills/list` entry (the
//! frontmatter of its `SKILL.md` as JSON, every file's digest and size), its `resources/list`
//! entry and the URIs of its files. Requests only look these up.

use std::fmt::Write as _;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::record::{SkillDef, SkillFile};

/// The file every skill has at its root.
pub(crate) const SKILL_MD: &str = "SKILL.md";

/// A skill's name by the Agent Skills rules: 1 to 64 lowercase letters, digits and hyphens,
/// neither starting nor ending with a hyphen, without two in a row. `#[mcp_skill]` checks its
/// directory's name by the same rule when it expands.
pub(crate) fn is_valid_skill_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// One file of a served skill.
#[derive(Debug)]
pub(crate) struct ServedFile {
    /// `skill://<path>/<file>`.
    pub(crate) uri: String,
    pub(crate) file: &'static SkillFile,
    /// The content as text, when it is UTF-8 (then sent as `text`, else as `blob`).
    pub(crate) text: Option<&'static str>,
}

/// A skill as its catalogs serve it.
#[derive(Debug)]
pub struct SkillInfo {
    /// The compile-time record.
    pub def: &'static SkillDef,
    uri: String,
    name: String,
    /// In the default language (the files of its directory).
    default: Variant,
    /// Per translated language (lower case, sorted): the same files, a translation's in place
    /// of those it translates.
    translations: Vec<(String, Variant)>,
}

/// A skill in one language, what requests in that language read.
#[derive(Debug)]
pub(crate) struct Variant {
    /// Its files, sorted by URI: the same URIs, in the same order, in every language.
    pub(crate) files: Vec<ServedFile>,
    /// The `Skill` object of `skills/list` and `skills/get`, as JSON.
    pub(crate) entry: Vec<u8>,
    /// The `resources/list` entry of its `SKILL.md` (name and description from the
    /// frontmatter, as SEP-2640 says), as JSON.
    pub(crate) resource_entry: Vec<u8>,
    description: String,
}

impl Variant {
    /// A skill named `name` made of `files`: its frontmatter checked, its entries written.
    fn new(
        root: &str,
        uri: &str,
        name: &str,
        files: Vec<&'static SkillFile>,
    ) -> Result<Self, String> {
        let skill_md = files
            .iter()
            .find(|f| f.path == SKILL_MD)
            .ok_or_else(|| format!("a skill has a `{SKILL_MD}` at its root"))?;
        let text = std::str::from_utf8(skill_md.bytes)
            .map_err(|_| format!("`{SKILL_MD}` is not UTF-8"))?;
        let frontmatter = frontmatter(text)?;
        let field = |key: &str| frontmatter.get(key).and_then(Value::as_str).unwrap_or("");
        if field("name") != name {
            return Err(format!(
                "the frontmatter's `name` is `{}`, but the skill's directory is `{name}`: they \
                 must be equal",
                field("name")
            ));
        }
        if field("description").trim().is_empty() {
            return Err("the frontmatter has no `description`".to_owned());
        }
        let mut files: Vec<ServedFile> = files
            .into_iter()
            .map(|file| ServedFile {
                uri: format!("{root}/{}", file.path),
                file,
                text: std::str::from_utf8(file.bytes).ok(),
            })
            .collect();
        files.sort_by(|a, b| a.uri.cmp(&b.uri));
        if let Some(pair) = files.windows(2).find(|p| p[0].uri == p[1].uri) {
            return Err(format!("`{}` is listed twice", pair[0].file.path));
        }
        let resources: Vec<Value> = files
            .iter()
            .map(|f| {
                let mut r = Map::new();
                r.insert("uri".into(), f.uri.clone().into());
                r.insert("digest".into(), digest(f.file.bytes).into());
                r.insert("size".into(), f.file.bytes.len().into());
                Value::Object(r)
            })
            .collect();
        let description = field("description").to_owned();
        let mut entry = Map::new();
        entry.insert("uri".into(), uri.into());
        entry.insert("frontmatter".into(), Value::Object(frontmatter));
        entry.insert("resources".into(), Value::Array(resources));
        let entry = serde_json::to_vec(&entry).map_err(|e| e.to_string())?;
        let md_size = files
            .iter()
            .find(|f| f.uri == uri)
            .map_or(0, |f| f.file.bytes.len());
        let mut r = Map::new();
        r.insert("uri".into(), uri.into());
        r.insert("name".into(), name.into());
        r.insert("description".into(), description.clone().into());
        r.insert("mimeType".into(), "text/markdown".into());
        r.insert("size".into(), md_size.into());
        let resource_entry = serde_json::to_vec(&r).map_err(|e| e.to_string())?;
        Ok(Self {
            files,
            entry,
            resource_entry,
            description,
        })
    }
}

impl SkillInfo {
    /// Reads a skill's record: its frontmatter, names, digests, in its default language and in
    /// each translation; `Err` says which rule it breaks (the registry reports it as a
    /// `CatalogError::BadSkill`; the macro checks what it can when it expands, the frontmatter
    /// is read here).
    pub(crate) fn new(def: &'static SkillDef) -> Result<Self, String> {
        let name = def.path.rsplit('/').next().unwrap_or_default();
        if !is_valid_skill_name(name) {
            return Err(format!(
                "`{name}` is not a skill name (1 to 64 lowercase letters, digits and single \
                 hyphens, not at either end)"
            ));
        }
        let root = format!("skill://{}", def.path);
        let uri = format!("{root}/{SKILL_MD}");
        let default = Variant::new(&root, &uri, name, def.files.iter().collect())?;
        let mut translations: Vec<(String, Variant)> = Vec::new();
        for t in def.translations {
            let lang = t.lang.to_ascii_lowercase();
            let of = |e: String| format!("its `{lang}` translation: {e}");
            if let Some(extra) = t
                .files
                .iter()
                .find(|f| !def.files.iter().any(|d| d.path == f.path))
            {
                return Err(of(format!(
                    "`{}` is not a file of the skill (a translation replaces the skill's files, \
                     it adds none)",
                    extra.path
                )));
            }
            if !t.files.iter().any(|f| f.path == SKILL_MD) {
                return Err(of(format!("a translation has its own `{SKILL_MD}`")));
            }
            // Each file in the language where it is translated, else as the skill has it.
            let files = def
                .files
                .iter()
                .map(|d| t.files.iter().find(|f| f.path == d.path).unwrap_or(d))
                .collect();
            let variant = Variant::new(&root, &uri, name, files).map_err(of)?;
            if translations.iter().any(|(l, _)| *l == lang) {
                return Err(of("given twice".to_owned()));
            }
            translations.push((lang, variant));
        }
        translations.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Self {
            def,
            uri,
            name: name.to_owned(),
            default,
            translations,
        })
    }

    /// The skill in `lang` (the negotiated language): its translation, else its default.
    pub(crate) fn variant(&self, lang: Option<&str>) -> &Variant {
        lang.and_then(|l| self.translations.iter().find(|(t, _)| t == l))
            .map_or(&self.default, |(_, v)| v)
    }

    /// The languages it is translated into (lower case, sorted).
    pub fn languages(&self) -> impl Iterator<Item = &str> {
        self.translations.iter().map(|(l, _)| l.as_str())
    }

    /// Its files in its default language, sorted by URI (every language has the same URIs).
    pub(crate) fn files(&self) -> &[ServedFile] {
        &self.default.files
    }

    /// The URI of its `SKILL.md`, which names the skill.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Its name (the frontmatter's, which is its directory's).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its description (the frontmatter's, in its default language).
    pub fn description(&self) -> &str {
        &self.default.description
    }
}

/// `sha256:` and the 64 lowercase hex digits of the bytes' SHA-256.
pub(crate) fn digest(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    for b in Sha256::digest(bytes) {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The YAML frontmatter of a `SKILL.md` (between a first line `---` and the next `---`), as a
/// JSON object: scalars typed as YAML's core schema types them, keys as strings.
fn frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or_default();
    if first.trim_end_matches(['\r', '\n']) != "---" {
        return Err(format!(
            "`{SKILL_MD}` begins with a YAML frontmatter (a line `---`)"
        ));
    }
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end_matches(['\r', '\n']) == "---" {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err(format!(
            "the frontmatter of `{SKILL_MD}` is not closed by a line `---`"
        ));
    }
    let docs = yaml_rust2::YamlLoader::load_from_str(&yaml)
        .map_err(|e| format!("the frontmatter is not YAML: {e}"))?;
    match docs.into_iter().next().map(json_of) {
        Some(Ok(Value::Object(map))) => Ok(map),
        Some(Err(e)) => Err(e),
        _ => Err("the frontmatter is not a mapping of fields".to_owned()),
    }
}

/// A YAML value as JSON; a key that is not a string, and YAML's aliases, are refused.
fn json_of(y: yaml_rust2::Yaml) -> Result<Value, String> {
    use yaml_rust2::Yaml;
    Ok(match y {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => b.into(),
        Yaml::Integer(i) => i.into(),
        Yaml::Real(r) => r
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::String(r), Value::Number),
        Yaml::String(s) => s.into(),
        Yaml::Array(a) => Value::Array(a.into_iter().map(json_of).collect::<Result<_, _>>()?),
        Yaml::Hash(h) => {
            let mut m = Map::new();
            for (k, v) in h {
                let Yaml::String(k) = k else {
                    return Err("a frontmatter key is not a string".to_owned());
                };
                m.insert(k, json_of(v)?);
            }
            Value::Object(m)
        }
        Yaml::Alias(_) | Yaml::BadValue => {
            return Err("the frontmatter has an alias or a value YAML cannot type".to_owned());
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn skill_names_follow_the_agent_skills_rules() {
        for good in ["shopping", "a", "pdf-2", &"x".repeat(64)] {
            assert!(is_valid_skill_name(good), "{good}");
        }
        for bad in [
            "",
            "Shopping",
            "-a",
            "a-",
            "a--b",
            "a_b",
            "a.b",
            &"x".repeat(65),
        ] {
            assert!(!is_valid_skill_name(bad), "{bad}");
        }
    }

    #[test]
    fn the_frontmatter_is_read_as_json() {
        let md = "---\nname: shopping\ndescription: \"Buy things: carefully\"\nlicense: MIT\n\
                  metadata:\n  version: \"1.2\"\n  stars: 5\n  tags: [a, b]\n---\n# Shopping\n";
        assert_eq!(
            Value::Object(frontmatter(md).unwrap()),
            json!({
                "name": "shopping", "description": "Buy things: carefully", "license": "MIT",
                "metadata": {"version": "1.2", "stars": 5, "tags": ["a", "b"]}
            })
        );
        let crlf = "\u{feff}---\r\nname: a\r\ndescription: b\r\n---\r\nbody";
        assert_eq!(
            Value::Object(frontmatter(crlf).unwrap()),
            json!({"name": "a", "description": "b"})
        );
        for (bad, why) in [
            ("# No frontmatter\n", "begins with a YAML frontmatter"),
            ("---\nname: a\n", "is not closed"),
            ("---\n- a\n- b\n---\n", "not a mapping"),
            ("---\n[1, 2]: a\n---\n", "key is not a string"),
            ("---\nname: [\n---\n", "is not YAML"),
        ] {
            let e = frontmatter(bad).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    const AT: crate::record::SourceLocation = crate::record::SourceLocation {
        file: "skills.rs",
        line: 1,
        rust_path: "skills::Shopping",
    };

    fn skill(path: &'static str, files: &'static [SkillFile]) -> &'static SkillDef {
        Box::leak(Box::new(SkillDef {
            path,
            files,
            groups: &[],
            since: 1,
            removed_in: None,
            scopes: &[],
            translations: &[],
            location: AT,
        }))
    }

    const fn md(bytes: &'static [u8]) -> SkillFile {
        SkillFile {
            path: SKILL_MD,
            mime_type: "text/markdown",
            bytes,
        }
    }

    #[test]
    fn a_skill_is_read_into_its_entry_once() {
        static FILES: [SkillFile; 2] = [
            SkillFile {
                path: "logo.png",
                mime_type: "image/png",
                bytes: &[0x89, b'P', b'N', b'G', 0xff],
            },
            md(b"---\nname: shop\ndescription: Buy.\n---\n# Shop\n"),
        ];
        let s = SkillInfo::new(skill("acme/shop", &FILES)).unwrap();
        assert_eq!(s.uri(), "skill://acme/shop/SKILL.md");
        assert_eq!((s.name(), s.description()), ("shop", "Buy."));
        let entry: Value = serde_json::from_slice(&s.variant(None).entry).unwrap();
        assert_eq!(
            entry,
            json!({
                "uri": "skill://acme/shop/SKILL.md",
                "frontmatter": {"name": "shop", "description": "Buy."},
                "resources": [
                    {"uri": "skill://acme/shop/SKILL.md", "digest": digest(FILES[1].bytes), "size": FILES[1].bytes.len()},
                    {"uri": "skill://acme/shop/logo.png", "digest": digest(FILES[0].bytes), "size": 5}
                ]
            })
        );
        // Text is sent as text, anything else as a blob.
        assert_eq!(
            s.files()[0].text,
            Some("---\nname: shop\ndescription: Buy.\n---\n# Shop\n")
        );
        assert_eq!(s.files()[1].text, None);
    }

    #[test]
    fn a_record_built_at_run_time_is_checked_as_the_macro_checks_its_own() {
        static NO_MD: [SkillFile; 0] = [];
        static OTHER: [SkillFile; 1] = [md(b"---\nname: other\ndescription: x\n---\n")];
        static NO_DESCRIPTION: [SkillFile; 1] = [md(b"---\nname: shop\n---\n")];
        static TWICE: [SkillFile; 2] = [
            md(b"---\nname: shop\ndescription: x\n---\n"),
            md(b"---\nname: shop\ndescription: x\n---\n"),
        ];
        for (path, files, why) in [
            ("shop", &NO_MD[..], "has a `SKILL.md` at its root"),
            ("Shop", &OTHER[..], "is not a skill name"),
            ("shop", &OTHER[..], "the frontmatter's `name` is `other`"),
            ("shop", &NO_DESCRIPTION[..], "has no `description`"),
            ("shop", &TWICE[..], "`SKILL.md` is listed twice"),
        ] {
            let e = SkillInfo::new(skill(path, files)).unwrap_err();
            assert!(e.contains(why), "{path}: {e}");
        }
    }

    #[test]
    fn digests_are_sha256_in_lowercase_hex() {
        assert_eq!(
            digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
