//! The runtime's modules point one way (issue 38): the module graph, computed here from the
//! sources of `mcp-runtime/src`, has no cycle, neither between files nor between the top-level
//! modules, and no module imports from a layer above its own.
//!
//! A node is a file (`mcp/engine.rs` is `mcp::engine`); an edge is a path or `use` naming an
//! item of another file, resolved through re-exports (`crate::Limits` is `edge::limits`), so a
//! facade (`lib.rs`, a `mod.rs`) that only re-exports adds no edge of its own. Test code
//! (`#[cfg(test)]`) and doc links are not dependencies.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit_mut::{self, VisitMut};

/// The layers, lowest first: a module may use its own layer and those below it.
const LAYERS: &[&[&str]] = &[
    // Records and types.
    &[
        "env",
        "ids",
        "wire",
        "error",
        "group",
        "output",
        "uri_template",
        "rate_limit",
        "schema_trait",
        "otel",
        "log",
        "log_level",
        "completion",
        "background",
        "limits",
        "context",
        "record",
        "schema",
        "catalog",
        "skill",
        "registry",
        "i18n",
        "scope_views",
    ],
    // The core pipeline.
    &["core"],
    // What every face reads and writes with.
    &["edge"],
    // The faces.
    &["jsonrpc", "mcp"],
    // Transports.
    &["transport"],
    // The server, its client and the CLI.
    &["server", "client", "cli", "lib", "test_redis"],
];

type ModPath = Vec<String>;

/// A path as written, and where it was written.
struct Use {
    segments: Vec<String>,
    /// The module the path is written in (inline modules included).
    module: ModPath,
}

#[derive(Default)]
struct Collected {
    uses: Vec<Use>,
    /// `pub use` items of facades: (module, name) → absolute target.
    reexports: Vec<(ModPath, String, Vec<String>, ModPath)>,
}

struct Collector<'a> {
    module: ModPath,
    facade: bool,
    out: &'a mut Collected,
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<TokenStream>()
                .is_ok_and(|t| t.to_string().split_whitespace().any(|w| w == "test"))
    })
}

/// Every path a use tree names, as written (`a::{b, c::*}` → `a::b`, `a::c`), with the name
/// it binds (`None` for a glob).
fn flatten(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let mut path = prefix.clone();
            if name != "self" {
                path.push(name.clone());
            }
            let bound = if name == "self" {
                prefix.last().cloned()
            } else {
                Some(name)
            };
            out.push((path, bound));
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            out.push((path, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), None)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten(t, prefix, out);
            }
        }
    }
}

/// `crate :: a :: b` (or `super`, `self`) sequences in a macro's tokens.
fn macro_paths(tokens: TokenStream, out: &mut Vec<Vec<String>>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => macro_paths(g.stream(), out),
            TokenTree::Ident(id) if ["crate", "super"].contains(&id.to_string().as_str()) => {
                let mut path = vec![id.to_string()];
                let mut j = i + 1;
                while j + 2 < tokens.len() {
                    let colons = matches!((&tokens[j], tokens.get(j + 1)),
                        (TokenTree::Punct(a), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':');
                    match (colons, tokens.get(j + 2)) {
                        (true, Some(TokenTree::Ident(next))) => {
                            path.push(next.to_string());
                            j += 3;
                        }
                        _ => break,
                    }
                }
                if path.len() > 1 {
                    out.push(path);
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

impl VisitMut for Collector<'_> {
    fn visit_item_mut(&mut self, item: &mut syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Macro(m) => &m.attrs,
            _ => &[],
        };
        if is_test(attrs) {
            return;
        }
        match item {
            syn::Item::Mod(m) if m.content.is_some() => {
                self.module.push(m.ident.to_string());
                let facade = std::mem::replace(&mut self.facade, true);
                visit_mut::visit_item_mut(self, item);
                self.facade = facade;
                self.module.pop();
            }
            syn::Item::Use(u) => {
                let mut paths = Vec::new();
                flatten(&u.tree, &mut Vec::new(), &mut paths);
                let public = !matches!(u.vis, syn::Visibility::Inherited);
                for (segments, bound) in paths {
                    if public && self.facade {
                        if let Some(name) = bound {
                            self.out.reexports.push((
                                self.module.clone(),
                                name,
                                segments,
                                self.module.clone(),
                            ));
                        } else {
                            // A glob re-export: every name of the target.
                            self.out.reexports.push((
                                self.module.clone(),
                                "*".into(),
                                segments,
                                self.module.clone(),
                            ));
                        }
                    } else {
                        self.out.uses.push(Use {
                            segments,
                            module: self.module.clone(),
                        });
                    }
                }
            }
            _ => visit_mut::visit_item_mut(self, item),
        }
    }

    fn visit_impl_item_fn_mut(&mut self, f: &mut syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            visit_mut::visit_impl_item_fn_mut(self, f);
        }
    }

    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        if path.segments.len() > 1 {
            self.out.uses.push(Use {
                segments: path.segments.iter().map(|s| s.ident.to_string()).collect(),
                module: self.module.clone(),
            });
        }
        visit_mut::visit_path_mut(self, path);
    }

    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        let mut paths = Vec::new();
        macro_paths(m.tokens.clone(), &mut paths);
        for segments in paths {
            self.out.uses.push(Use {
                segments,
                module: self.module.clone(),
            });
        }
        visit_mut::visit_macro_mut(self, m);
    }
}

/// The runtime's source files by module path.
fn files(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    fn walk(dir: &Path, prefix: &ModPath, out: &mut BTreeMap<ModPath, PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("the source directory is readable")
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("")
                .to_owned();
            if path.is_dir() {
                let mut p = prefix.clone();
                p.push(name);
                walk(&path, &p, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let mut p = prefix.clone();
                if name != "mod" && !(prefix.is_empty() && name == "lib") {
                    p.push(name);
                }
                out.insert(p, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, &Vec::new(), &mut out);
    out
}

struct Graph {
    /// File node of every module path (inline modules map to their file).
    modules: BTreeMap<ModPath, ModPath>,
    reexports: HashMap<(ModPath, String), Vec<String>>,
    globs: HashMap<ModPath, Vec<ModPath>>,
    edges: BTreeMap<ModPath, BTreeMap<ModPath, String>>,
}

impl Graph {
    /// Makes `segments`, written in `module`, absolute (`None`: not a path into the crate).
    fn absolute(&self, module: &ModPath, segments: &[String]) -> Option<Vec<String>> {
        let mut base = module.clone();
        let mut rest = segments;
        match rest.first().map(String::as_str)? {
            "crate" => {
                base.clear();
                rest = &rest[1..];
            }
            "self" => rest = &rest[1..],
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            first => {
                let mut child = module.clone();
                child.push(first.to_owned());
                if !self.modules.contains_key(&child) {
                    return None;
                }
            }
        }
        let mut out = base;
        out.extend(rest.iter().cloned());
        Some(out)
    }

    /// The module an absolute path lands in, following re-exports.
    fn resolve(&self, path: &[String], depth: usize) -> Option<ModPath> {
        let mut module: ModPath = Vec::new();
        let mut item = None;
        for seg in path {
            let mut next = module.clone();
            next.push(seg.clone());
            if self.modules.contains_key(&next) {
                module = next;
            } else {
                item = Some(seg.clone());
                break;
            }
        }
        if depth > 0
            && let Some(item) = item
        {
            if let Some(target) = self.reexports.get(&(module.clone(), item.clone())) {
                return self.resolve(target, depth - 1);
            }
            for glob in self.globs.get(&module).into_iter().flatten() {
                let mut p = glob.clone();
                p.push(item.clone());
                if let Some(m) = self.resolve(&p, depth - 1)
                    && m != *glob
                {
                    return Some(m);
                }
            }
        }
        Some(module)
    }
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-runtime/src");
    let files = files(&src);
    let mut collected: BTreeMap<ModPath, Collected> = BTreeMap::new();
    let mut modules: BTreeMap<ModPath, ModPath> = BTreeMap::new();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).expect("a source file is readable");
        let mut file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let facade = path.ends_with("mod.rs") || path.ends_with("lib.rs");
        let mut c = Collected::default();
        Collector {
            module: module.clone(),
            facade,
            out: &mut c,
        }
        .visit_file_mut(&mut file);
        modules.insert(module.clone(), module.clone());
        for inline in c
            .uses
            .iter()
            .map(|u| &u.module)
            .chain(c.reexports.iter().map(|r| &r.0))
        {
            modules
                .entry(inline.clone())
                .or_insert_with(|| module.clone());
        }
        collected.insert(module.clone(), c);
    }
    let mut g = Graph {
        modules,
        reexports: HashMap::new(),
        globs: HashMap::new(),
        edges: BTreeMap::new(),
    };
    let mut reexports = Vec::new();
    for c in collected.values() {
        for (module, name, target, written) in &c.reexports {
            if let Some(abs) = g.absolute(written, target) {
                reexports.push((module.clone(), name.clone(), abs));
            }
        }
    }
    for (module, name, target) in reexports {
        if name == "*" {
            g.globs.entry(module).or_default().push(target);
        } else {
            g.reexports.insert((module, name), target);
        }
    }
    let mut edges: BTreeMap<ModPath, BTreeMap<ModPath, String>> = BTreeMap::new();
    for (file, c) in &collected {
        for u in &c.uses {
            let Some(abs) = g.absolute(&u.module, &u.segments) else {
                continue;
            };
            let Some(target) = g.resolve(&abs, 8) else {
                continue;
            };
            let target = g.modules.get(&target).cloned().unwrap_or(target);
            if target != *file && !target.is_empty() {
                edges
                    .entry(file.clone())
                    .or_default()
                    .entry(target)
                    .or_insert_with(|| u.segments.join("::"));
            }
        }
    }
    g.edges = edges;
    g
}

/// Strongly connected components of more than one node (Tarjan).
fn cycles<N: Ord + Clone>(edges: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    struct T<'a, N> {
        edges: &'a BTreeMap<N, BTreeSet<N>>,
        index: BTreeMap<N, usize>,
        low: BTreeMap<N, usize>,
        stack: Vec<N>,
        on: BTreeSet<N>,
        out: Vec<Vec<N>>,
    }
    fn visit<N: Ord + Clone>(t: &mut T<'_, N>, v: &N) {
        let i = t.index.len();
        t.index.insert(v.clone(), i);
        t.low.insert(v.clone(), i);
        t.stack.push(v.clone());
        t.on.insert(v.clone());
        for w in t.edges.get(v).into_iter().flatten() {
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(&w);
                let done = w == *v;
                comp.push(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn name(m: &ModPath) -> String {
    if m.is_empty() {
        "lib".into()
    } else {
        m.join("::")
    }
}

fn top(m: &ModPath) -> String {
    m.first().cloned().unwrap_or_else(|| "lib".into())
}

#[test]
fn no_file_is_in_a_cycle_of_imports() {
    let g = graph();
    let edges: BTreeMap<ModPath, BTreeSet<ModPath>> = g
        .edges
        .iter()
        .map(|(a, bs)| (a.clone(), bs.keys().cloned().collect()))
        .collect();
    let found = cycles(&edges);
    let report: Vec<String> = found
        .iter()
        .map(|comp| {
            let inside: Vec<String> = comp
                .iter()
                .flat_map(|a| {
                    g.edges[a]
                        .iter()
                        .filter(|(b, _)| comp.contains(b))
                        .map(move |(b, via)| format!("  {} -> {} ({via})", name(a), name(b)))
                })
                .collect();
            format!("cycle of {} files:\n{}", comp.len(), inside.join("\n"))
        })
        .collect();
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn top_level_modules_import_only_from_their_layer_or_below() {
    let g = graph();
    let layer = |m: &str| LAYERS.iter().position(|l| l.contains(&m));
    let mut unknown = BTreeSet::new();
    let mut upward = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, bs) in &g.edges {
        for (b, via) in bs {
            let (ta, tb) = (top(a), top(b));
            if ta == tb {
                continue;
            }
            edges.entry(ta.clone()).or_default().insert(tb.clone());
            match (layer(&ta), layer(&tb)) {
                (Some(la), Some(lb)) if lb > la => {
                    upward.push(format!("  {} -> {} ({via})", name(a), name(b)));
                }
                (None, _) => {
                    unknown.insert(ta);
                }
                (_, None) => {
                    unknown.insert(tb);
                }
                _ => {}
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "modules missing from LAYERS: {unknown:?}"
    );
    assert!(
        upward.is_empty(),
        "imports from a higher layer:\n{}",
        upward.join("\n")
    );
    assert_eq!(cycles(&edges), Vec::<Vec<String>>::new());
}

#[test]
fn the_graph_sees_real_imports() {
    // The test would pass on an empty graph: check that it finds what is certainly there.
    let g = graph();
    let deps = |m: &str| {
        let m: ModPath = m.split("::").map(str::to_owned).collect();
        g.edges
            .get(&m)
            .map(|e| e.keys().map(name).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert!(deps("transport::stdio").contains(&"mcp::engine".to_owned()));
    // Through a re-export: `crate::RpcError` is `error`.
    assert!(
        deps("mcp::engine").contains(&"error".to_owned()),
        "{:?}",
        deps("mcp::engine")
    );
    // A `#[cfg(test)]` module's imports do not count.
    assert!(
        !deps("mcp::engine").contains(&"record".to_owned()),
        "{:?}",
        deps("mcp::engine")
    );
}

/// Literals of non-test code: strings and negative integers, in macros too.
#[derive(Default)]
struct Literals {
    strings: Vec<String>,
    ints: Vec<i64>,
}

impl Literals {
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, t) in tokens.iter().enumerate() {
            match t {
                TokenTree::Literal(l) => {
                    if let Ok(syn::Lit::Str(s)) = syn::parse_str::<syn::Lit>(&l.to_string()) {
                        self.strings.push(s.value());
                    }
                    let neg = i > 0
                        && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '-');
                    if neg && let Ok(v) = l.to_string().parse::<i64>() {
                        self.ints.push(-v);
                    }
                }
                TokenTree::Group(g) => self.tokens(g.stream()),
                _ => {}
            }
        }
    }
}

impl VisitMut for Literals {
    fn visit_item_mut(&mut self, item: &mut syn::Item) {
        let test = match item {
            syn::Item::Mod(m) => is_test(&m.attrs),
            syn::Item::Fn(f) => is_test(&f.attrs),
            syn::Item::Impl(i) => is_test(&i.attrs),
            _ => false,
        };
        if !test {
            visit_mut::visit_item_mut(self, item);
        }
    }

    fn visit_attribute_mut(&mut self, _: &mut syn::Attribute) {
        // Doc comments and attributes are not code.
    }

    fn visit_lit_str_mut(&mut self, s: &mut syn::LitStr) {
        self.strings.push(s.value());
    }

    // Byte strings too: the writers write JSON as bytes.
    fn visit_lit_byte_str_mut(&mut self, s: &mut syn::LitByteStr) {
        self.strings
            .push(String::from_utf8_lossy(&s.value()).into_owned());
    }

    fn visit_expr_unary_mut(&mut self, e: &mut syn::ExprUnary) {
        if let (syn::UnOp::Neg(_), syn::Expr::Lit(l)) = (&e.op, &*e.expr)
            && let syn::Lit::Int(i) = &l.lit
            && let Ok(v) = i.base10_parse::<i64>()
        {
            self.ints.push(-v);
        }
        visit_mut::visit_expr_unary_mut(self, e);
    }

    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        self.tokens(m.tokens.clone());
    }

    fn visit_lit_int_mut(&mut self, i: &mut syn::LitInt) {
        // A negative literal pattern (`-32020 =>`) is one literal to syn.
        if let Ok(v) = i.base10_parse::<i64>()
            && v < 0
        {
            self.ints.push(v);
        }
    }
}

/// The non-test literals of every runtime source file, by module path.
fn literals() -> BTreeMap<ModPath, Literals> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-runtime/src");
    files(&src)
        .into_iter()
        .map(|(module, path)| {
            let text = std::fs::read_to_string(&path).expect("a source file is readable");
            let mut file = syn::parse_file(&text).expect("a source file parses");
            let mut l = Literals::default();
            l.visit_file_mut(&mut file);
            (module, l)
        })
        .collect()
}

/// The non-test string literals of the modules `module` picks that `bad` matches, each as
/// `module: "literal"`.
fn strings_where(
    all: &BTreeMap<ModPath, Literals>,
    module: impl Fn(&ModPath) -> bool,
    bad: impl Fn(&str) -> bool,
) -> Vec<String> {
    all.iter()
        .filter(|(m, _)| module(m))
        .flat_map(|(m, l)| {
            l.strings
                .iter()
                .filter(|s| bad(s))
                .map(move |s| format!("{}: {s:?}", name(m)))
        })
        .collect()
}

#[test]
fn transports_carry_messages_without_naming_mcp_methods_or_revisions() {
    let method = |s: &str| {
        [
            "initialize",
            "ping",
            "tools/",
            "resources/",
            "prompts/",
            "completion/",
            "logging/",
            "notifications/",
            "tasks/",
            "subscriptions/",
            "server/",
            "elicitation/",
            "sampling/",
            "roots/",
        ]
        .iter()
        .any(|m| s == *m || (m.ends_with('/') && s.starts_with(m)))
    };
    let all = literals();
    let found = strings_where(
        &all,
        |m| m.first().is_some_and(|t| t == "transport"),
        |s| method(s) || is_revision(s),
    );
    assert!(found.is_empty(), "MCP spelled under transport/: {found:?}");
    // The scan sees what is there: the protocol's vocabulary spells them.
    let names = &all[&vec!["mcp".to_owned(), "protocol".to_owned(), "method".to_owned()]];
    assert!(names.strings.iter().any(|s| s == "subscriptions/listen"));
    // Nor does a transport decide which revision a message is in: it asks the engine
    // (`engine::route`, `engine::session_request_era`, ...), never `Era`'s lookups itself.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-runtime/src");
    let mut lookups = Vec::new();
    for (module, path) in files(&src) {
        if module.first().is_none_or(|t| t != "transport") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file is readable");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if code.contains("Era::") {
                lookups.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        lookups.is_empty(),
        "eras looked up under transport/: {lookups:#?}"
    );
    let engine = std::fs::read_to_string(src.join("mcp/engine.rs")).expect("readable");
    assert!(
        engine.contains("Era::negotiate"),
        "the scan reads the sources"
    );
}

/// A revision string (`2025-06-18`; MCP's are from 2024 on, so no other date looks like one).
fn is_revision(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && s.starts_with("20")
        && b[4] == b'-'
        && b[7] == b'-'
        && s.chars().filter(char::is_ascii_digit).count() == 8
}

#[test]
fn each_revision_is_spelled_only_in_its_own_module() {
    let all = literals();
    let mut found = Vec::new();
    let mut seen = 0;
    for (m, l) in &all {
        let own = m.len() == 3 && m[0] == "mcp" && m[1] == "protocol" && m[2].starts_with('r');
        for s in l.strings.iter().filter(|s| is_revision(s)) {
            if own {
                seen += 1;
                // Its module's name is its revision (`r2025_06_18`).
                assert_eq!(m[2][1..].replace('_', "-"), *s, "{}", name(m));
            } else {
                found.push(format!("{}: {s:?}", name(m)));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a revision spelled outside its module: {found:?}"
    );
    // The scan sees what is there: each revision module spells its own.
    assert!(seen >= 5, "{seen} revision modules seen");
}

#[test]
fn json_rpc_envelopes_are_written_only_by_the_wire_writer() {
    let all = literals();
    let found = strings_where(
        &all,
        |m| m.as_slice() != ["wire"],
        |s| s.contains("\"jsonrpc\""),
    );
    assert!(
        found.is_empty(),
        "an envelope written outside wire: {found:?}"
    );
    // The scan sees what is there: the writer spells it.
    let wire = &all[&vec!["wire".to_owned()]];
    assert!(wire.strings.iter().any(|s| s.contains("\"jsonrpc\"")));
}

#[test]
fn every_json_rpc_error_code_is_a_constant_of_codes() {
    let all = literals();
    let found: Vec<String> = all
        .iter()
        .filter(|(m, _)| m.as_slice() != ["error"])
        .flat_map(|(m, l)| {
            l.ints
                .iter()
                .filter(|v| (-32768..=-32000).contains(*v))
                .map(move |v| format!("{}: {v}", name(m)))
        })
        .collect();
    assert!(found.is_empty(), "error codes outside `codes`: {found:?}");
    // The scan sees what is there: `codes` itself is full of them, and a code in a pattern,
    // an expression or a macro is found.
    assert!(all[&vec!["error".to_owned()]].ints.contains(&-32602));
    let mut probe = syn::parse_file(
        "fn f(x: i32) -> i32 { match x { -32020 => -32021, _ => { m!(-32022); 0 } } }",
    )
    .expect("parses");
    let mut l = Literals::default();
    l.visit_file_mut(&mut probe);
    let mut seen = l.ints.clone();
    seen.sort_unstable();
    assert_eq!(seen, [-32022, -32021, -32020]);
}
