//! Translation files: `rpc.<lang>.yaml` (every group) and `rpc/<group>.<lang>.yaml` (one
//! group), keyed by method name, each entry with `title`, `description` and `params.<name>`.
//!
//! ```yaml
//! Catalog.search:
//!   title: Search products
//!   description: Search products by name. Returns up to limit products.
//!   params:
//!     query: Search text
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// The base domain's file name (`rpc.<lang>.yaml`): no group may be called so.
pub const BASE_DOMAIN: &str = "rpc";
/// Names a group cannot take (they would collide with a translation domain).
pub const RESERVED_DOMAINS: &[&str] = &[BASE_DOMAIN, "messages", "validators"];

/// The texts of one method in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Texts {
    /// Title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Parameter descriptions by parameter name.
    pub params: BTreeMap<String, String>,
    /// The line of the method key, for messages.
    pub line: usize,
}

/// One translation file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Where it came from (path or embedded name), for messages.
    pub source: String,
    /// `None` for the base domain, else the group.
    pub group: Option<String>,
    /// The language.
    pub lang: String,
    /// Texts by method name.
    pub methods: BTreeMap<String, Texts>,
}

/// A problem with a translation file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct TranslationError {
    /// The file.
    pub file: String,
    /// The line (1-based; 0 when not about a line).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

#[derive(Debug)]
enum Node {
    Scalar(String, usize),
    Map(Vec<(String, usize, Node)>, usize),
    Seq(usize),
}

/// An open mapping: its entries, a key waiting for its value, and its line.
type OpenMap = (Vec<(String, usize, Node)>, Option<(String, usize)>, usize);

#[derive(Default)]
struct Builder {
    stack: Vec<OpenMap>,
    root: Option<Node>,
    error: Option<(usize, String)>,
    seq_depth: usize,
}

impl Builder {
    fn push_value(&mut self, node: Node) {
        let Some((entries, pending, _)) = self.stack.last_mut() else {
            self.root = Some(node);
            return;
        };
        match pending.take() {
            None => match node {
                Node::Scalar(k, line) => *pending = Some((k, line)),
                Node::Map(_, line) | Node::Seq(line) => {
                    self.error
                        .get_or_insert((line, "keys must be plain strings".into()));
                }
            },
            Some((key, line)) => {
                if let Some((_, first, _)) = entries.iter().find(|(k, _, _)| *k == key) {
                    let msg = format!("duplicate key `{key}` (first at line {first})");
                    self.error.get_or_insert((line, msg));
                }
                entries.push((key, line, node));
            }
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let line = mark.line();
        if self.seq_depth > 0 {
            match ev {
                Event::SequenceStart(..) => self.seq_depth += 1,
                Event::SequenceEnd => self.seq_depth -= 1,
                _ => {}
            }
            return;
        }
        match ev {
            Event::Scalar(s, ..) => self.push_value(Node::Scalar(s, line)),
            Event::MappingStart(..) => self.stack.push((Vec::new(), None, line)),
            Event::MappingEnd => {
                if let Some((entries, _, l)) = self.stack.pop() {
                    self.push_value(Node::Map(entries, l));
                }
            }
            Event::SequenceStart(..) => {
                self.seq_depth = 1;
                self.push_value(Node::Seq(line));
            }
            Event::Alias(_) => {
                self.error
                    .get_or_insert((line, "aliases are not supported".into()));
            }
            _ => {}
        }
    }
}

/// Parses one file's text.
pub fn parse(
    source: &str,
    group: Option<&str>,
    lang: &str,
    text: &str,
) -> Result<File, TranslationError> {
    let err = |line: usize, message: String| TranslationError {
        file: source.to_owned(),
        line,
        message,
    };
    let mut b = Builder::default();
    let mut parser = Parser::new_from_str(text);
    parser
        .load(&mut b, false)
        .map_err(|e| err(e.marker().line(), format!("invalid YAML: {}", e.info())))?;
    if let Some((line, message)) = b.error {
        return Err(err(line, message));
    }
    let mut methods = BTreeMap::new();
    let entries = match b.root {
        None => Vec::new(),
        Some(Node::Scalar(s, _)) if s.is_empty() || s == "~" || s == "null" => Vec::new(),
        Some(Node::Map(e, _)) => e,
        Some(Node::Scalar(_, l) | Node::Seq(l)) => {
            return Err(err(l, "expected a mapping of method names to texts".into()));
        }
    };
    for (method, line, node) in entries {
        let Node::Map(fields, _) = node else {
            return Err(err(
                line,
                format!("`{method}`: expected `title`, `description` or `params` keys"),
            ));
        };
        let mut t = Texts {
            line,
            ..Texts::default()
        };
        for (key, kline, value) in fields {
            match (key.as_str(), value) {
                ("title", Node::Scalar(s, _)) => t.title = Some(s),
                ("description", Node::Scalar(s, _)) => t.description = Some(s),
                ("params", Node::Map(ps, _)) => {
                    for (p, pline, pv) in ps {
                        match pv {
                            Node::Scalar(s, _) => {
                                t.params.insert(p, s);
                            }
                            _ => {
                                return Err(err(
                                    pline,
                                    format!("`{method}.params.{p}`: expected a text"),
                                ));
                            }
                        }
                    }
                }
                ("title" | "description", _) => {
                    return Err(err(kline, format!("`{method}.{key}`: expected a text")));
                }
                ("params", _) => {
                    return Err(err(kline, format!("`{method}.params`: expected a mapping")));
                }
                (other, _) => {
                    return Err(err(
                        kline,
                        format!(
                            "`{method}`: unknown key `{other}`; expected title, description or params"
                        ),
                    ));
                }
            }
        }
        methods.insert(method, t);
    }
    Ok(File {
        source: source.to_owned(),
        group: group.map(str::to_owned),
        lang: lang.to_owned(),
        methods,
    })
}

/// Reads `(group, lang)` from a file name relative to the translations directory:
/// `rpc.uk.yaml` → `(None, "uk")`, `rpc/mcp.uk.yaml` → `(Some("mcp"), "uk")`.
pub fn classify(relative: &str) -> Option<(Option<String>, String)> {
    let rel = relative.replace('\\', "/");
    let stem = rel
        .strip_suffix(".yaml")
        .or_else(|| rel.strip_suffix(".yml"))?;
    if let Some(rest) = stem.strip_prefix("rpc/") {
        let (group, lang) = rest.rsplit_once('.')?;
        (!group.contains('/') && !group.is_empty() && !lang.is_empty())
            .then(|| (Some(group.to_owned()), lang.to_ascii_lowercase()))
    } else {
        let lang = stem.strip_prefix("rpc.")?;
        (!lang.contains(['/', '.']) && !lang.is_empty()).then(|| (None, lang.to_ascii_lowercase()))
    }
}

/// Loads every translation file of a directory.
pub fn load_dir(dir: &Path) -> Result<Vec<File>, TranslationError> {
    let io = |p: &Path, e: std::io::Error| TranslationError {
        file: p.display().to_string(),
        line: 0,
        message: format!("cannot read: {e}"),
    };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let entry = entry.map_err(|e| io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() && name == BASE_DOMAIN {
            for sub in std::fs::read_dir(entry.path()).map_err(|e| io(&entry.path(), e))? {
                let sub = sub.map_err(|e| io(&entry.path(), e))?;
                names.push(format!(
                    "{BASE_DOMAIN}/{}",
                    sub.file_name().to_string_lossy()
                ));
            }
        } else {
            names.push(name);
        }
    }
    names.sort();
    let mut files = Vec::new();
    for name in names {
        let Some((group, lang)) = classify(&name) else {
            continue;
        };
        let path = dir.join(&name);
        let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
        files.push(parse(
            &path.display().to_string(),
            group.as_deref(),
            &lang,
            &text,
        )?);
    }
    Ok(files)
}

/// Parses embedded files: `(relative name, contents)` pairs such as
/// `("rpc/mcp.uk.yaml", include_str!("../translations/rpc/mcp.uk.yaml"))`.
pub fn load_embedded(files: &[(&str, &str)]) -> Result<Vec<File>, TranslationError> {
    let mut out = Vec::new();
    for (name, text) in files {
        let Some((group, lang)) = classify(name) else {
            return Err(TranslationError {
                file: (*name).to_owned(),
                line: 0,
                message: "not a translation file name (rpc.<lang>.yaml or rpc/<group>.<lang>.yaml)"
                    .into(),
            });
        };
        out.push(parse(name, group.as_deref(), &lang, text)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_entries_with_lines() {
        let f = parse(
            "t.yaml",
            None,
            "en",
            "A.b:\n  title: T\n  description: D\n  params:\n    q: Query\nC.d:\n  title: X\n",
        )
        .unwrap();
        assert_eq!(f.methods["A.b"].title.as_deref(), Some("T"));
        assert_eq!(f.methods["A.b"].params["q"], "Query");
        assert_eq!(f.methods["A.b"].line, 1);
        assert_eq!(f.methods["C.d"].line, 6);
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse("t.yaml", None, "en", "A.b:\n  title: T\nA.b:\n  title: U\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.yaml:3: duplicate key `A.b` (first at line 1)"
        );
        let e = parse("t.yaml", None, "en", "A.b:\n  titel: T\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.yaml:2: `A.b`: unknown key `titel`; expected title, description or params"
        );
        let e = parse("t.yaml", None, "en", "A.b: [unclosed\n").unwrap_err();
        assert!(e.to_string().starts_with("t.yaml:"), "{e}");
        assert!(e.message.starts_with("invalid YAML"), "{e}");
        let e = parse("t.yaml", None, "en", "- a\n- b\n").unwrap_err();
        assert_eq!(e.line, 1);
    }

    #[test]
    fn file_names() {
        assert_eq!(classify("rpc.uk.yaml"), Some((None, "uk".into())));
        assert_eq!(
            classify("rpc/mcp.en.yaml"),
            Some((Some("mcp".into()), "en".into()))
        );
        assert_eq!(classify("messages.en.yaml"), None);
        assert_eq!(classify("rpc/a/b.en.yaml"), None);
    }
}
