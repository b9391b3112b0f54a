//! `#[mcp_skill(dir = "skills/shopping", groups = [MCP])]` on a unit struct: publishes a
//! directory of the crate as an MCP skill (SEP-2640). Parsed by the shared attribute parser
//! (`attr::parse_skill`), then the directory is read (its files, their names, the limits every
//! host accepts) and checked, and the record is expanded with one `include_bytes!` per file, so
//! the files are embedded in the binary and a change to one rebuilds the crate. The frontmatter
//! of `SKILL.md` is read by the runtime when the server is built.

use std::path::{Path as FsPath, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{ItemStruct, Path};

use crate::attr::{self, SkillArgs, Spanned};
use crate::ctxt::Ctxt;

/// SEP-2640's limits: what every conforming host accepts of one skill.
const MAX_FILES: usize = 512;
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// A file of the skill: its path in the skill (`/`-separated) and on disk.
struct File {
    rel: String,
    abs: PathBuf,
}

/// The checked model of a skill.
struct Skill {
    path: String,
    files: Vec<File>,
    /// Per language, the files of `<dir>.<lang>`.
    translations: Vec<(String, Vec<File>)>,
    groups: Vec<Path>,
    since: u32,
    removed_in: Option<u32>,
    scopes: Vec<String>,
    krate: Path,
}

pub fn expand(args: TokenStream, item: ItemStruct) -> TokenStream {
    let cx = Ctxt::new();
    let parsed = attr::parse_skill(&cx, args.clone());
    check_item(&cx, &item);
    let skill = build(&cx, parsed, &args);
    match (skill, cx.check()) {
        (Some(s), Ok(())) => {
            let record = record(&s, &item);
            quote!(#item #record)
        }
        (_, Err(e)) => {
            let errors = e.to_compile_error();
            quote!(#item #errors)
        }
        // `build` gives `None` only after reporting an error.
        (None, Ok(())) => unreachable!("a skill without a model and without errors"),
    }
}

/// A skill is declared on a unit struct: it has no value of its own, only its files.
fn check_item(cx: &Ctxt, item: &ItemStruct) {
    if !matches!(item.fields, syn::Fields::Unit) || !item.generics.params.is_empty() {
        cx.error_spanned_by(
            &item.ident,
            "`#[mcp_skill]` goes on a unit struct that names the skill: `pub struct Shopping;`",
        );
    }
}

fn build(cx: &Ctxt, args: SkillArgs, tokens: &TokenStream) -> Option<Skill> {
    let missing = |what: &str| {
        let msg = format!("missing {what}");
        if tokens.is_empty() {
            cx.syn_error(syn::Error::new(Span::call_site(), msg));
        } else {
            cx.error_spanned_by(tokens, msg);
        }
    };
    if args.groups.is_none() && !args.seen.contains(&attr::GROUPS) {
        missing("`groups = [...]`: the groups whose MCP endpoints serve the skill");
    }
    if let Some(g) = args.groups.as_ref().filter(|g| g.value.is_empty()) {
        cx.syn_error(syn::Error::new(
            g.span,
            "`groups = []` publishes the skill nowhere: name at least one group",
        ));
    }
    let since = args.version.as_ref().map_or(1, |v| v.value);
    if let Some(v) = args.version.as_ref().filter(|v| v.value == 0) {
        cx.syn_error(syn::Error::new(v.span, "versions start at 1"));
    }
    if let Some(r) = args.removed_in.as_ref().filter(|r| r.value <= since) {
        cx.syn_error(syn::Error::new(
            r.span,
            format!(
                "`removed_in = {}` must be after the first version ({since})",
                r.value
            ),
        ));
    }
    let prefix = args.prefix.as_ref().map(|p| {
        if p.value.is_empty()
            || p.value
                .split('/')
                .any(|s| s.is_empty() || !s.bytes().all(uri_safe))
        {
            cx.syn_error(syn::Error::new(
                p.span,
                "`prefix` is `/`-separated segments of letters, digits, `-`, `.`, `_` and `~` \
                 (`prefix = \"acme/billing\"`), without a leading or trailing `/`",
            ));
        }
        p.value.clone()
    });
    crate::check::scopes_valid(cx, args.scopes.as_ref());
    let dir = match &args.dir {
        Some(d) => d,
        None => {
            if !args.seen.contains(&attr::DIR) {
                missing("`dir = \"...\"`: the skill's directory, relative to the crate's root");
            }
            return None;
        }
    };
    let (name, files) = read_dir(cx, dir)?;
    let translations = translations(cx, args.languages.as_ref(), dir, &files);
    let path = match prefix {
        Some(p) => format!("{p}/{name}"),
        None => name,
    };
    Some(Skill {
        path,
        files,
        translations,
        groups: args.groups.map(|g| g.value).unwrap_or_default(),
        since,
        removed_in: args.removed_in.map(|r| r.value),
        scopes: args
            .scopes
            .map(|s| s.value.iter().map(syn::LitStr::value).collect())
            .unwrap_or_default(),
        krate: args
            .krate
            .unwrap_or_else(|| syn::parse_quote!(::mcp_runtime)),
    })
}

/// `languages = ["uk", ...]`: each a lowercase language tag, once, whose directory `<dir>.<lang>`
/// holds the skill's files in that language: its own `SKILL.md` and any of the skill's other
/// files (one the skill does not have is an error: a translation replaces, it adds nothing).
fn translations(
    cx: &Ctxt,
    languages: Option<&Spanned<Vec<syn::LitStr>>>,
    dir: &Spanned<String>,
    files: &[File],
) -> Vec<(String, Vec<File>)> {
    let Some(languages) = languages else {
        return Vec::new();
    };
    if languages.value.is_empty() {
        cx.syn_error(syn::Error::new(
            languages.span,
            "`languages = []` translates nothing: name at least one language, or leave \
             `languages` out",
        ));
    }
    let mut out: Vec<(String, Vec<File>)> = Vec::new();
    for lit in &languages.value {
        let lang = lit.value();
        let tag = {
            let mut subtags = lang.split('-');
            let first = subtags.next().unwrap_or_default();
            (1..=8).contains(&first.len())
                && first.bytes().all(|b| b.is_ascii_lowercase())
                && subtags.all(|s| {
                    (1..=8).contains(&s.len())
                        && s.bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                })
        };
        if !tag {
            cx.syn_error(syn::Error::new(
                lit.span(),
                format!(
                    "`{lang}` is not a language tag in lower case (`uk`, `pt-br`): the \
                     translation's language, as the translation files name theirs"
                ),
            ));
            continue;
        }
        if out.iter().any(|(l, _)| *l == lang) {
            cx.syn_error(syn::Error::new(
                lit.span(),
                format!("language `{lang}` is listed twice"),
            ));
            continue;
        }
        let at = Spanned {
            value: format!("{}.{lang}", dir.value),
            span: lit.span(),
        };
        let Some(translated) = read_files(cx, &at) else {
            continue;
        };
        if let Some(extra) = translated
            .iter()
            .find(|t| !files.iter().any(|f| f.rel == t.rel))
        {
            cx.syn_error(syn::Error::new(
                lit.span(),
                format!(
                    "`{}/{}` is not a file of the skill: a translation holds the skill's own \
                     files in its language (its `SKILL.md` and any others), and adds none",
                    at.value, extra.rel
                ),
            ));
            continue;
        }
        out.push((lang, translated));
    }
    out
}

/// Characters a URI path segment takes as they are (RFC 3986 `unreserved`): a skill's files
/// are named in `skill://` URIs without any percent-encoding to agree on.
fn uri_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// The skill's name (its directory's) and its files, sorted, or `None` after reporting why
/// the directory is not a skill.
fn read_dir(cx: &Ctxt, dir: &Spanned<String>) -> Option<(String, Vec<File>)> {
    let root = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(PathBuf::new, PathBuf::from);
    let name = root
        .join(&dir.value)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let files = read_files(cx, dir)?;
    if !is_valid_skill_name(&name) {
        cx.syn_error(syn::Error::new(
            dir.span,
            format!(
                "the directory's name `{name}` is the skill's name, which is 1 to 64 lowercase \
                 letters, digits and single hyphens, not at either end (the Agent Skills rules)"
            ),
        ));
        return None;
    }
    Some((name, files))
}

/// The files of a skill's directory (or of a translation's), sorted, within the limits every
/// host accepts, or `None` after reporting why not.
fn read_files(cx: &Ctxt, dir: &Spanned<String>) -> Option<Vec<File>> {
    let fail = |msg: String| {
        cx.syn_error(syn::Error::new(dir.span, msg));
        None
    };
    let root = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(PathBuf::new, PathBuf::from);
    let abs = root.join(&dir.value);
    if !abs.is_dir() {
        return fail(format!(
            "`{}` is not a directory of the crate (paths are relative to the directory of its \
             Cargo.toml)",
            dir.value
        ));
    }
    let mut files = Vec::new();
    if let Err(e) = walk(&abs, "", &mut files) {
        return fail(format!("`{}`: {e}", dir.value));
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    if !files.iter().any(|f| f.rel == "SKILL.md") {
        return fail(format!(
            "`{}` has no `SKILL.md`: a skill is a directory with a `SKILL.md` at its root, \
             whose YAML frontmatter gives its `name` and `description`",
            dir.value
        ));
    }
    if let Some(bad) = files
        .iter()
        .find(|f| !f.rel.split('/').all(|s| s.bytes().all(uri_safe)))
    {
        return fail(format!(
            "`{}`: a skill's file and directory names are letters, digits, `-`, `.`, `_` and \
             `~` (they are served as `skill://` URIs, as they are)",
            bad.rel
        ));
    }
    if files.len() > MAX_FILES {
        return fail(format!(
            "`{}` has {} files: a skill has at most {MAX_FILES} (SEP-2640's limit, what every \
             host accepts)",
            dir.value,
            files.len()
        ));
    }
    let total: u64 = files
        .iter()
        .map(|f| f.abs.metadata().map_or(0, |m| m.len()))
        .sum();
    if total > MAX_BYTES {
        return fail(format!(
            "`{}` holds {total} bytes: a skill holds at most 16 MiB (SEP-2640's limit, what \
             every host accepts)",
            dir.value
        ));
    }
    Some(files)
}

/// Every regular file under `dir`, its path relative to the skill's root; names starting with
/// `.` are left out (editor and system files), as are other kinds of entries.
fn walk(dir: &FsPath, rel: &str, out: &mut Vec<File>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let rel = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let kind = std::fs::metadata(&path)?;
        if kind.is_dir() {
            walk(&path, &rel, out)?;
        } else if kind.is_file() {
            out.push(File { rel, abs: path });
        }
    }
    Ok(())
}

/// The Agent Skills rule for a skill's name. The runtime checks a record built at run time by
/// the same rule (`skill::is_valid_skill_name`): a proc-macro crate cannot share code with the
/// crate its expansions use, so the few lines are in both.
fn is_valid_skill_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The MIME type of a skill's file, by its extension.
fn mime_type(rel: &str) -> &'static str {
    let ext = rel.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("ts") => "text/x-typescript",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("toml") => "application/toml",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("xml") => "application/xml",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

fn record(s: &Skill, item: &ItemStruct) -> TokenStream {
    let krate = &s.krate;
    let rt = quote!(#krate::__private);
    let ident = &item.ident;
    let path = &s.path;
    let file = |f: &File| {
        let rel = &f.rel;
        let abs = f.abs.to_string_lossy();
        let mime = mime_type(rel);
        quote!(#rt::SkillFile { path: #rel, mime_type: #mime, bytes: ::core::include_bytes!(#abs) })
    };
    let files = s.files.iter().map(file);
    let translations = s.translations.iter().map(|(lang, files)| {
        let files = files.iter().map(file);
        quote!(#rt::SkillTranslation { lang: #lang, files: &[#(#files),*] })
    });
    let groups = &s.groups;
    let scopes = &s.scopes;
    let since = s.since;
    let removed_in = match s.removed_in {
        Some(r) => quote!(::core::option::Option::Some(#r)),
        None => quote!(::core::option::Option::None),
    };
    quote! {
        #[doc(hidden)]
        const _: () = {
            #rt::inventory::submit! {
                #rt::SkillDef {
                    path: #path,
                    files: &[#(#files),*],
                    groups: &[#(#groups),*],
                    since: #since,
                    removed_in: #removed_in,
                    scopes: &[#(#scopes),*],
                    translations: &[#(#translations),*],
                    location: #rt::SourceLocation {
                        file: ::core::file!(),
                        line: ::core::line!(),
                        rust_path: ::core::concat!(
                            ::core::module_path!(), "::", ::core::stringify!(#ident)
                        ),
                    },
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system's temporary one, with `files` (relative path,
    /// content) in it; removed by the caller.
    fn skill_dir(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let base =
            std::env::temp_dir().join(format!("mcp-skill-test-{}-{name}", std::process::id()));
        let dir = base.join(name);
        for (rel, content) in files {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, content).expect("write");
        }
        std::fs::create_dir_all(&dir).expect("mkdir");
        dir
    }

    /// What `read_dir` makes of an absolute directory: the name and files, or the errors.
    fn read(dir: &FsPath) -> Result<(String, Vec<String>), Vec<String>> {
        let cx = Ctxt::new();
        let spanned = Spanned {
            value: dir.display().to_string(),
            span: Span::call_site(),
        };
        let out = read_dir(&cx, &spanned);
        match cx.check() {
            Ok(()) => {
                let (name, files) = out.expect("a skill without errors");
                Ok((name, files.into_iter().map(|f| f.rel).collect()))
            }
            Err(e) => Err(e.into_iter().map(|e| e.to_string()).collect()),
        }
    }

    #[test]
    fn translations_are_lowercase_tags_once_each_holding_only_the_skill_s_files() {
        let dir = skill_dir(
            "shopping",
            &[("SKILL.md", "---\nname: shopping\n---\n"), ("a.md", "a")],
        );
        let base = dir.parent().expect("a parent").to_path_buf();
        for (rel, content) in [
            ("shopping.uk/SKILL.md", "---\nname: shopping\n---\nУкр"),
            ("shopping.fr/SKILL.md", "---\nname: shopping\n---\n"),
            ("shopping.fr/extra.md", "x"),
        ] {
            let path = base.join(rel);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, content).expect("write");
        }
        let cx = Ctxt::new();
        let spanned = Spanned {
            value: dir.display().to_string(),
            span: Span::call_site(),
        };
        let (_, files) = read_dir(&cx, &spanned).expect("the skill");
        let lit = |s: &str| syn::LitStr::new(s, Span::call_site());
        let languages = Spanned {
            value: vec![lit("uk"), lit("UK"), lit("uk"), lit("fr"), lit("de")],
            span: Span::call_site(),
        };
        let got = translations(&cx, Some(&languages), &spanned, &files);
        let errors: Vec<String> = cx
            .check()
            .expect_err("errors")
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        let _ = std::fs::remove_dir_all(&base);
        let kept: Vec<(&str, Vec<&str>)> = got
            .iter()
            .map(|(l, f)| (l.as_str(), f.iter().map(|f| f.rel.as_str()).collect()))
            .collect();
        assert_eq!(kept, [("uk", vec!["SKILL.md"])]);
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors[0].starts_with("`UK` is not a language tag in lower case"));
        assert_eq!(errors[1], "language `uk` is listed twice");
        assert!(
            errors[2].ends_with("shopping.fr/extra.md` is not a file of the skill: a translation holds the skill's own files in its language (its `SKILL.md` and any others), and adds none"),
            "{}",
            errors[2]
        );
        assert!(
            errors[3].contains("shopping.de` is not a directory of the crate"),
            "{}",
            errors[3]
        );
    }

    #[test]
    fn a_skill_directory_is_read_recursively_sorted_without_hidden_files() {
        let dir = skill_dir(
            "shopping",
            &[
                ("SKILL.md", "---\nname: shopping\n---\n"),
                ("references/b.md", "b"),
                ("references/a.md", "a"),
                (".DS_Store", "x"),
                ("scripts/.cache/x", "x"),
            ],
        );
        let got = read(&dir);
        let _ = std::fs::remove_dir_all(dir.parent().expect("a parent"));
        assert_eq!(
            got,
            Ok((
                "shopping".to_owned(),
                vec![
                    "SKILL.md".into(),
                    "references/a.md".into(),
                    "references/b.md".into()
                ]
            ))
        );
    }

    #[test]
    fn a_directory_that_is_not_a_skill_is_refused_with_the_reason() {
        for (name, files, why) in [
            ("notes", &[("README.md", "x")][..], "has no `SKILL.md`"),
            ("Shopping", &[("SKILL.md", "x")][..], "is the skill's name"),
            (
                "files",
                &[("SKILL.md", "x"), ("my notes.md", "x")][..],
                "`my notes.md`: a skill's file",
            ),
        ] {
            let dir = skill_dir(name, files);
            let got = read(&dir);
            let _ = std::fs::remove_dir_all(dir.parent().expect("a parent"));
            let errors = got.expect_err(name);
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(errors[0].contains(why), "{name}: {}", errors[0]);
        }
        let missing = std::env::temp_dir().join("mcp-skill-test-none/shopping");
        let errors = read(&missing).expect_err("a missing directory");
        assert!(
            errors[0].contains("is not a directory of the crate"),
            "{errors:?}"
        );
    }

    #[test]
    fn names_and_mime_types() {
        assert!(is_valid_skill_name("shop-2"));
        assert!(!is_valid_skill_name("Shop"));
        assert!(!is_valid_skill_name("a--b"));
        assert_eq!(mime_type("SKILL.md"), "text/markdown");
        assert_eq!(mime_type("scripts/run.PY"), "text/x-python");
        assert_eq!(mime_type("LICENSE"), "application/octet-stream");
    }
}
