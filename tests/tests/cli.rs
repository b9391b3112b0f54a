//! `mcp_runtime::cli`: argument parsing and the `check` report, on servers built in the test.

use mcp_runtime::cli::{Cli, Command, DEFAULT_LISTEN, check};
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
    let cli = parse(&["--stdio"]);
    assert_eq!((cli.group.as_str(), cli.version), ("mcp", 1));
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
        Some(Command::Openrpc(l)) => {
            assert_eq!((l.target.group.as_str(), l.target.version), ("mcp", 1));
            assert_eq!(l.lang, None);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(parse(&["check"]).command, Some(Command::Check)));
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
        location: SourceLocation {
            file: "tests/tests/cli.rs",
            line,
            rust_path: "cli::ping",
        },
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
