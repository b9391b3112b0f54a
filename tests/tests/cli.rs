//! `mcp_runtime::cli`: argument parsing, the `check` report on servers built in the test, and
//! the lists `tools`, `resources`, `resource-templates` and `prompts` print, on the example
//! service.

use mcp_runtime::DEFAULT_LISTEN;
use mcp_runtime::cli::{Cli, Command, HostsArgs, Localized, McpList, Target, check, hosts, list};
use mcp_runtime::record::{
    Handler, MethodDef, ParamDef, ParamKind, Params, SourceLocation, ToolAnnotations,
};
use mcp_runtime::{ApiGroup, Output, RequestContext, RpcError, Server, ServerBuilder};

fn parse(args: &[&str]) -> Cli {
    Cli::try_parse_args(std::iter::once("/usr/bin/svc").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn parse_err(args: &[&str]) -> mcp_runtime::cli::clap::Error {
    match Cli::try_parse_args(std::iter::once("svc").chain(args.iter().copied())) {
        Ok(cli) => panic!("{args:?} parsed: {cli:?}"),
        Err(e) => e,
    }
}

#[test]
fn no_command_serves_http_on_the_default_address() {
    let cli = parse(&[]);
    assert!(cli.command.is_none() && !cli.stdio);
    assert_eq!(cli.listen.to_string(), DEFAULT_LISTEN);
    assert_eq!(cli.program, "svc");
    let cli = parse(&["--listen", "0.0.0.0:9000"]);
    assert_eq!(cli.listen.to_string(), "0.0.0.0:9000");
    match parse(&["serve", "--listen", "127.0.0.1:0"]).command {
        Some(Command::Serve(a)) => assert_eq!(a.listen.port(), 0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn stdio_flag_and_subcommand() {
    let cli = parse(&["--stdio", "--group", "g", "--version", "2"]);
    assert!(cli.stdio && cli.command.is_none());
    assert_eq!((cli.group.as_str(), cli.version), ("g", 2));
    // No group given: settled against the server (its only MCP group, else `mcp`).
    let cli = parse(&["--stdio"]);
    assert_eq!((cli.group.as_str(), cli.version), ("", 1));
    match parse(&["stdio", "--group", "g"]).command {
        Some(Command::Stdio(a)) => {
            assert_eq!((a.target.group.as_str(), a.target.version), ("g", 1));
            assert!(!a.allow_protected);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tools_and_openrpc_take_a_group_a_version_and_a_language() {
    match parse(&["tools", "--group", "g", "--version", "3", "--lang", "uk"]).command {
        Some(Command::Tools(l)) => {
            assert_eq!((l.target.group.as_str(), l.target.version), ("g", 3));
            assert_eq!(l.lang.as_deref(), Some("uk"));
        }
        other => panic!("{other:?}"),
    }
    match parse(&["openrpc"]).command {
        Some(Command::Openrpc(o)) => {
            let l = &o.doc.localized;
            assert_eq!((l.target.group.as_str(), l.target.version), ("", 1));
            assert_eq!(
                (l.lang.as_deref(), o.doc.url.as_deref(), o.unroll),
                (None, None, None)
            );
        }
        other => panic!("{other:?}"),
    }
    match parse(&["openrpc", "--unroll"]).command {
        Some(Command::Openrpc(o)) => assert_eq!(o.unroll, Some(3)),
        other => panic!("{other:?}"),
    }
    assert!(matches!(parse(&["check"]).command, Some(Command::Check)));
}

#[test]
fn the_resource_and_prompt_lists_take_a_group_a_version_and_a_language() {
    let target = |c: Option<Command>| match c {
        Some(Command::Resources(l) | Command::ResourceTemplates(l) | Command::Prompts(l)) => {
            (l.target.group, l.target.version, l.lang)
        }
        other => panic!("{other:?}"),
    };
    let args = ["--group", "g", "--version", "2", "--lang", "uk"];
    for cmd in ["resources", "resource-templates", "templates", "prompts"] {
        let cli = parse(&[&[cmd][..], &args].concat());
        assert_eq!(
            target(cli.command),
            ("g".to_owned(), 2, Some("uk".to_owned())),
            "{cmd}"
        );
        assert_eq!(
            target(parse(&[cmd]).command),
            (String::new(), 1, None),
            "{cmd}"
        );
        assert_eq!(
            parse_err(&[cmd, "--version", "0"]).kind(),
            mcp_runtime::cli::clap::error::ErrorKind::ValueValidation,
            "{cmd}"
        );
    }
    assert!(matches!(
        parse(&["templates"]).command,
        Some(Command::ResourceTemplates(_))
    ));
    assert!(matches!(
        parse(&["resources"]).command,
        Some(Command::Resources(_))
    ));
    assert!(matches!(
        parse(&["prompts"]).command,
        Some(Command::Prompts(_))
    ));
}

#[test]
fn bad_arguments_are_usage_errors() {
    use mcp_runtime::cli::clap::error::ErrorKind;
    for (args, kind) in [
        (&["--nope"][..], ErrorKind::UnknownArgument),
        (&["--group", "g"], ErrorKind::MissingRequiredArgument),
        (
            &["--stdio", "--listen", "127.0.0.1:1"],
            ErrorKind::ArgumentConflict,
        ),
        (
            &["--listen", "127.0.0.1:1", "check"],
            ErrorKind::ArgumentConflict,
        ),
        (&["tools", "--version", "0"], ErrorKind::ValueValidation),
        (&["--listen", "nowhere"], ErrorKind::ValueValidation),
        (&["frobnicate"], ErrorKind::InvalidSubcommand),
    ] {
        let e = parse_err(args);
        assert_eq!(e.kind(), kind, "{args:?}: {e}");
        assert_eq!(e.exit_code(), 2, "{args:?}");
    }
    assert_eq!(parse_err(&["--help"]).exit_code(), 0);
}

// ---------------------------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------------------------

fn ping(_: RequestContext, _: Params) -> Result<Output, RpcError> {
    Output::json(&"pong")
}

const G: ApiGroup = ApiGroup::mcp("g");

const fn def(name: &'static str, line: u32) -> MethodDef {
    MethodDef {
        name,
        groups: &[G],
        since: 1,
        removed_in: None,
        docs: "Ping.",
        params: &[ParamDef {
            name: "who",
            description: "Who is pinging",
            kind: ParamKind::Optional,
            schema: |g| g.subschema_for::<String>(),
            constraints: "",
        }],
        annotations: ToolAnnotations::NONE,
        output_schema: |_| None,
        handler: Handler::Sync(ping),
        cache: None,
        lock: None,
        rate_limit: None,
        task: mcp_runtime::record::TaskSupport::Forbidden,
        retry: true,
        transform: None,
        location: SourceLocation {
            file: "tests/tests/cli.rs",
            line,
            rust_path: "cli::ping",
        },
        states: &[],
        scopes: &[],
        app: None,
    }
}

static GOOD: MethodDef = def("Good.ping", 1);
static GOOD_AGAIN: MethodDef = def("Good.ping", 2);
static BAD: MethodDef = def("Bad:ping", 3);

fn builder() -> ServerBuilder {
    Server::builder().without_registered_methods()
}

#[test]
fn check_summarizes_a_valid_server() {
    let summary = check(builder().method(&GOOD)).expect("valid");
    assert_eq!(
        summary,
        "1 groups, 1 catalogs, 1 methods (JSON-RPC g v1; MCP g v1), languages en"
    );
}

#[test]
fn check_warns_of_a_declared_group_with_nothing_in_it() {
    const NOTES: mcp_runtime::ApiGroup = mcp_runtime::ApiGroup::mcp("notes");
    let summary = check(builder().method(&GOOD).groups([G, NOTES])).expect("valid");
    assert_eq!(
        summary,
        "1 groups, 1 catalogs, 1 methods (JSON-RPC g v1; MCP g v1), languages en\n\
         warning: group `notes` is declared but no method, resource or prompt is in it: it serves nothing"
    );
}

#[test]
fn check_lists_catalog_errors_one_per_line() {
    let problems = check(builder().method(&GOOD).method(&GOOD_AGAIN)).unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("duplicate method `Good.ping` in group `g` version v1"),
        "{problems:?}"
    );
    assert!(problems.iter().all(|p| !p.contains('\n')));
}

#[test]
fn check_lists_invalid_tool_names() {
    let problems = check(builder().method(&GOOD).method(&BAD)).unwrap_err();
    assert_eq!(
        problems,
        vec![
            "group `g` v1: tool name `Bad:ping` (cli::ping (tests/tests/cli.rs:3)) does not match ^[a-zA-Z0-9_.-]{1,128}$"
                .to_owned()
        ]
    );
}

#[test]
fn check_lists_translation_errors() {
    static FILES: &[(&str, &str)] = &[
        ("rpc.en.yaml", "Good.ping:\n  title: Ping\n"),
        ("rpc.uk.yaml", "Nope.method:\n  title: Ні\n"),
    ];
    let problems = check(builder().method(&GOOD).translations_embedded(FILES)).unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("translations: ")
            && problems[0].contains("unknown method `Nope.method`"),
        "{problems:?}"
    );
}

/// A pattern the regex engine refuses (the macro's own check is a light one).
static BAD_PATTERN: MethodDef = MethodDef {
    params: &[ParamDef {
        name: "sku",
        description: "",
        kind: ParamKind::Optional,
        schema: |g| g.subschema_for::<String>(),
        constraints: r#"{"pattern":"[z-a]"}"#,
    }],
    ..def("Bad.pattern", 4)
};

#[test]
fn check_lists_input_schemas_that_do_not_compile() {
    let problems = check(builder().method(&GOOD).method(&BAD_PATTERN)).unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with(
            "method `Bad.pattern`, parameter `sku`, at cli::ping (tests/tests/cli.rs:4): \
             the input schema does not compile: "
        ),
        "{problems:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// tools, resources, resource-templates, prompts: what they print (`list`, written compact)
// ---------------------------------------------------------------------------------------------

fn localized(group: &str, lang: Option<&str>) -> Localized {
    Localized {
        target: Target {
            group: group.to_owned(),
            version: 1,
        },
        lang: lang.map(str::to_owned),
    }
}

/// What `catalog <kind> --group G [--lang L]` prints, on a server of `builder`.
async fn printed_by(
    builder: ServerBuilder,
    kind: McpList,
    group: &str,
    lang: Option<&str>,
) -> String {
    let server = builder.build().expect("the server builds");
    let items = list(&server, kind, &localized(group, lang))
        .await
        .unwrap_or_else(|e| panic!("{kind:?} {group}: {e}"));
    serde_json::to_string(&items).unwrap()
}

async fn printed(kind: McpList, group: &str) -> String {
    printed_by(examples::builder(), kind, group, None).await
}

#[tokio::test]
async fn resources_prints_the_resources_of_every_page() {
    let skill_md = include_str!("../../examples/skills/shopping/SKILL.md").len();
    assert_eq!(
        printed(McpList::Resources, "mcp").await,
        [
            r#"[{"uri":"catalog://hours","name":"hours","title":"The store's opening hours.","description":"The store's opening hours.","mimeType":"text/plain"},"#,
            &format!(
                r#"{{"uri":"skill://catalog/shopping/SKILL.md","name":"shopping","description":"Help a customer find, compare and buy products of this catalog, with its tools in the right order.","mimeType":"text/markdown","size":{skill_md}}},"#
            ),
            r#"{"uri":"ui://catalog/product-card","name":"product-card","title":"The product card.","description":"The product card.\n\nAn MCP App: shows the product of a `Catalog.get` call.","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"prefersBorder":true}}}]"#,
        ]
        .concat()
    );
}

#[tokio::test]
async fn resource_templates_prints_the_templates_of_every_page() {
    assert_eq!(
        printed(McpList::ResourceTemplates, "mcp").await,
        r#"[{"uriTemplate":"catalog://products/{id}","name":"product","title":"A product, by id.","description":"A product, by id.\n\nThe product's id and name as JSON.","mimeType":"application/json"}]"#
    );
}

#[tokio::test]
async fn prompts_prints_the_prompts_of_every_page() {
    assert_eq!(
        printed(McpList::Prompts, "mcp").await,
        r#"[{"name":"recommend","title":"Recommend products for a need.","description":"Recommend products for a need.\n\nAsks the model to pick products of the catalog for what a customer needs, using the\n`Catalog.search` tool.","arguments":[{"name":"need","description":"What the customer needs","required":true},{"name":"count","description":"How many products to propose","required":false}]}]"#
    );
}

#[tokio::test]
async fn the_lists_are_translated_like_tools() {
    let uk = printed_by(examples::builder(), McpList::Prompts, "mcp", Some("uk-UA")).await;
    assert!(uk.contains(r#""title":"Порадити товари""#), "{uk}");
    assert_ne!(uk, printed(McpList::Prompts, "mcp").await);
}

/// `admin` is protected over HTTP, but the command line asks the endpoint itself (as `tools`
/// does): it has tools and neither resources nor prompts, and the endpoint answers -32601 for
/// a capability the group lacks, which is an empty list.
#[tokio::test]
async fn a_group_without_the_capability_prints_an_empty_array() {
    assert_eq!(printed(McpList::Prompts, "admin").await, "[]");
    assert_eq!(printed(McpList::Resources, "admin").await, "[]");
    assert_eq!(printed(McpList::ResourceTemplates, "admin").await, "[]");
    assert!(
        printed(McpList::Tools, "admin")
            .await
            .contains(r#""name":"Admin.reindex""#)
    );
}

#[tokio::test]
async fn every_page_is_joined() {
    for kind in [
        McpList::Tools,
        McpList::Resources,
        McpList::ResourceTemplates,
        McpList::Prompts,
    ] {
        let one_page = printed(kind, "conformance").await;
        let paged = printed_by(
            examples::builder().mcp_page_size(1),
            kind,
            "conformance",
            None,
        )
        .await;
        assert_eq!(paged, one_page, "{kind:?}");
        let items: Vec<serde_json::Value> = serde_json::from_str(&paged).unwrap();
        // Several pages (the conformance group has a single resource template).
        if kind != McpList::ResourceTemplates {
            assert!(items.len() > 1, "{kind:?}: {paged}");
        }
    }
}

#[tokio::test]
async fn unknown_groups_fail_with_the_message_of_tools() {
    let server = examples::builder().build().unwrap();
    for kind in [
        McpList::Tools,
        McpList::Resources,
        McpList::ResourceTemplates,
        McpList::Prompts,
    ] {
        assert_eq!(
            list(&server, kind, &localized("internal", None))
                .await
                .unwrap_err(),
            "group `internal` v1 is not published over MCP (it is an `ApiGroup::rpc` group)"
        );
        let e = list(&server, kind, &localized("nope", None))
            .await
            .unwrap_err();
        assert!(
            e.starts_with("no MCP group `nope` with version 1 (available: "),
            "{e}"
        );
    }
}

#[test]
fn postman_and_hosts_take_a_group_a_version_and_a_url() {
    match parse(&[
        "postman",
        "--group",
        "g",
        "--version",
        "2",
        "--lang",
        "uk",
        "--url",
        "https://x",
    ])
    .command
    {
        Some(Command::Postman(a)) => {
            let l = &a.localized;
            assert_eq!((l.target.group.as_str(), l.target.version), ("g", 2));
            assert_eq!(
                (l.lang.as_deref(), a.url.as_deref()),
                (Some("uk"), Some("https://x"))
            );
        }
        other => panic!("{other:?}"),
    }
    match parse(&["hosts", "--group", "admin"]).command {
        Some(Command::Hosts(a)) => {
            assert_eq!((a.target.group.as_str(), a.target.version), ("admin", 1));
            assert_eq!((a.url, a.allow_protected), (None, false));
        }
        other => panic!("{other:?}"),
    }
    match parse(&["hosts", "--url", "https://h/api", "--allow-protected"]).command {
        Some(Command::Hosts(a)) => {
            assert_eq!(
                (a.target.group.as_str(), a.url.as_deref()),
                ("", Some("https://h/api"))
            );
            assert!(a.allow_protected);
        }
        other => panic!("{other:?}"),
    }
}

fn hosts_args(group: &str, url: Option<&str>, allow_protected: bool) -> HostsArgs {
    HostsArgs {
        target: Target {
            group: group.to_owned(),
            version: 1,
        },
        url: url.map(str::to_owned),
        allow_protected,
    }
}

#[test]
fn hosts_prints_every_host_over_stdio_and_http() {
    let server = examples::builder().build().unwrap();
    let out = hosts(
        &server,
        &hosts_args("mcp", None, false),
        "/opt/my svc/catalog",
    )
    .unwrap();
    assert_eq!(
        out,
        r#"# Claude Desktop: claude_desktop_config.json (stdio)
{
  "mcpServers": {
    "catalog-mcp-v1": {
      "command": "/opt/my svc/catalog",
      "args": [
        "stdio",
        "--group",
        "mcp",
        "--version",
        "1"
      ]
    }
  }
}

# Claude Code: command lines
claude mcp add --transport stdio catalog-mcp-v1 -- '/opt/my svc/catalog' stdio --group mcp --version 1
claude mcp add --transport http catalog-mcp-v1-http http://127.0.0.1:8080/mcp/mcp/v1

# VS Code: .vscode/mcp.json
{
  "servers": {
    "catalog-mcp-v1": {
      "type": "stdio",
      "command": "/opt/my svc/catalog",
      "args": [
        "stdio",
        "--group",
        "mcp",
        "--version",
        "1"
      ]
    },
    "catalog-mcp-v1-http": {
      "type": "http",
      "url": "http://127.0.0.1:8080/mcp/mcp/v1"
    }
  }
}

# Cursor: .cursor/mcp.json (or ~/.cursor/mcp.json)
{
  "mcpServers": {
    "catalog-mcp-v1": {
      "command": "/opt/my svc/catalog",
      "args": [
        "stdio",
        "--group",
        "mcp",
        "--version",
        "1"
      ]
    },
    "catalog-mcp-v1-http": {
      "url": "http://127.0.0.1:8080/mcp/mcp/v1"
    }
  }
}

# HTTP entries need the server running: '/opt/my svc/catalog' serve
"#
    );
    // A protected group: HTTP entries only, unless stdio may serve it.
    let out = hosts(
        &server,
        &hosts_args("admin", Some("https://h.example/api/"), false),
        "/svc",
    )
    .unwrap();
    assert_eq!(
        out,
        r#"# Claude Code: command lines
claude mcp add --transport http catalog-admin-v1-http https://h.example/api/mcp/admin/v1

# VS Code: .vscode/mcp.json
{
  "servers": {
    "catalog-admin-v1-http": {
      "type": "http",
      "url": "https://h.example/api/mcp/admin/v1"
    }
  }
}

# Cursor: .cursor/mcp.json (or ~/.cursor/mcp.json)
{
  "mcpServers": {
    "catalog-admin-v1-http": {
      "url": "https://h.example/api/mcp/admin/v1"
    }
  }
}

# stdio entries left out: group `admin` is protected and stdio has no token (pass --allow-protected to print them)
# HTTP entries need the server running: /svc serve
"#
    );
    let out = hosts(&server, &hosts_args("admin", None, true), "/svc").unwrap();
    let stdio: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("claude mcp add --transport stdio"))
        .collect();
    assert_eq!(
        stdio,
        [
            "claude mcp add --transport stdio catalog-admin-v1 -- /svc stdio --group admin --version 1 --allow-protected"
        ]
    );
    // The public URL is the default HTTP base.
    let server = examples::builder()
        .public_url("https://api.example.com")
        .build()
        .unwrap();
    let out = hosts(&server, &hosts_args("mcp", None, false), "/svc").unwrap();
    let http: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("claude mcp add --transport http"))
        .collect();
    assert_eq!(
        http,
        ["claude mcp add --transport http catalog-mcp-v1-http https://api.example.com/mcp/mcp/v1"]
    );
    assert_eq!(
        hosts(&server, &hosts_args("internal", None, false), "/svc"),
        Err(
            "group `internal` v1 is not published over MCP (it is an `ApiGroup::rpc` group)"
                .to_owned()
        )
    );
}

/// In a child process (no `tracing` subscriber there): the example, served on a free port for
/// a moment, `.quiet()` when `MCP_TEST_ANNOUNCE=quiet`, after `log::init()` when `log`.
#[test]
fn announce_child() {
    let Ok(mode) = std::env::var("MCP_TEST_ANNOUNCE") else {
        return; // Run by the test below only.
    };
    if mode == "log" {
        assert!(mcp_runtime::log::init(), "the first subscriber");
        assert!(!mcp_runtime::log::init(), "a second one changes nothing");
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut b = examples::builder();
        if mode == "quiet" {
            b = b.quiet();
        }
        let server = b.build().unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let stop = tokio::time::sleep(std::time::Duration::from_millis(300));
        server.serve_listener(listener, stop).await.unwrap();
    });
}

/// The stderr of [`announce_child`] in `mode`.
fn announced(mode: &str) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "announce_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("MCP_TEST_ANNOUNCE", mode)
        .output()
        .expect("the child runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_server_without_logging_says_where_it_listens_unless_quiet() {
    let err = announced("plain");
    let line = err
        .lines()
        .find(|l| l.starts_with("catalog listening on 127.0.0.1:"))
        .unwrap_or_else(|| panic!("no listening line in {err:?}"));
    let (_, endpoints) = line
        .strip_prefix("catalog listening on 127.0.0.1:")
        .and_then(|rest| rest.split_once(": "))
        .expect("the port, then the endpoints");
    assert_eq!(
        endpoints,
        "JSON-RPC admin v1, conformance v1, internal v1, mcp v1; MCP admin v1, conformance v1, mcp v1"
    );
    assert!(!announced("quiet").contains("listening on"));
}

#[test]
fn log_init_writes_the_server_logs_to_stderr_in_one_line_each() {
    let err = announced("log");
    // Through the subscriber now: an `INFO` event of `mcp_runtime`, with its plain fields.
    let line = err
        .lines()
        .find(|l| l.contains("catalog listening on 127.0.0.1:"))
        .unwrap_or_else(|| panic!("no listening line in {err:?}"));
    assert!(line.contains(" INFO mcp_runtime::"), "{line}");
    assert!(
        !line.contains('\u{1b}'),
        "no colours off a terminal: {line:?}"
    );
}

#[test]
fn no_group_given_is_the_only_mcp_group_else_mcp() {
    const NOTES: ApiGroup = ApiGroup::mcp("cli_notes");
    static NOTE: MethodDef = MethodDef {
        name: "Notes.count",
        groups: &[NOTES],
        since: 1,
        removed_in: None,
        docs: "Counts notes.",
        params: &[],
        annotations: ToolAnnotations::NONE,
        output_schema: |_| None,
        handler: Handler::Sync(count),
        cache: None,
        lock: None,
        rate_limit: None,
        task: mcp_runtime::TaskSupport::Forbidden,
        retry: true,
        transform: None,
        location: SourceLocation {
            file: file!(),
            line: line!(),
            rust_path: "cli::count",
        },
        states: &[],
        scopes: &[],
        app: None,
    };
    fn count(_: RequestContext, _: Params) -> Result<Output, RpcError> {
        Output::json(&0)
    }
    let default = Target {
        group: String::new(),
        version: 1,
    };
    let only = Server::builder()
        .without_registered_methods()
        .method(&NOTE)
        .build()
        .unwrap();
    assert_eq!(default.settled(&only).group, "cli_notes");
    // Several MCP groups: `mcp`; a group given stays.
    let example = examples::server().unwrap();
    assert_eq!(default.settled(&example).group, "mcp");
    let given = Target {
        group: "admin".into(),
        version: 1,
    };
    assert_eq!(given.settled(&only).group, "admin");
}
