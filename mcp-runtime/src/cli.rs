//! A standard command line for service binaries: serve HTTP or stdio, print the tools,
//! resources, resource templates or prompts, the OpenRPC document or the Postman collection
//! of a group, print the configuration of MCP hosts, check the catalog.
//!
//! A service's `main` installs a logger that writes to **stderr** (stdout carries only MCP
//! messages on stdio, and only the JSON in the other commands), then hands its builder to
//! [`run`] (a plain `fn main`) or [`run_async`] (inside `#[tokio::main]`):
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! #[tokio::main]
//! async fn main() -> ExitCode {
//!     // e.g. tracing_subscriber::fmt().with_writer(std::io::stderr).init();
//!     let builder = mcp_runtime::Server::builder().name("shop");
//!     mcp_runtime::cli::run_async(builder).await
//! }
//! ```
//!
//! The commands (the program name is taken from `argv[0]`):
//!
//! | command | what it does |
//! |---|---|
//! | `shop [--listen ADDR]`, `shop serve [--listen ADDR]` | HTTP on ADDR (default `127.0.0.1:8080`) until Ctrl-C or SIGTERM |
//! | `shop --stdio [--group G] [--version N] [--allow-protected]`, `shop stdio ...` | one MCP group over stdin/stdout until stdin closes (a protected group only with `--allow-protected`: stdio has no token) |
//! | `shop tools [--group G] [--version N] [--lang L]` | the `tools` array of a modern `tools/list` (every page) |
//! | `shop resources [--group G] [--version N] [--lang L]` | the `resources` array of a modern `resources/list` (every page) |
//! | `shop resource-templates [...]`, `shop templates [...]` | the `resourceTemplates` array of a modern `resources/templates/list` (every page) |
//! | `shop prompts [--group G] [--version N] [--lang L]` | the `prompts` array of a modern `prompts/list` (every page) |
//! | `shop openrpc [--group G] [--version N] [--lang L] [--url URL] [--unroll [N]]` | the bytes `GET /rpc/G/vN` answers a request for URL (default as for `postman`); with `--unroll`, those of `?unroll=N` (recursive schemas written out N levels, default 3) |
//! | `shop postman [--group G] [--version N] [--lang L] [--url URL]` | the Postman collection `GET /rpc/G/vN/postman` answers, its `baseUrl` URL (default: the public URL, else `http://127.0.0.1:8080`) |
//! | `shop card [--group G] [--version N] [--lang L] [--url URL] [--registry]` | the server card (SEP-2127) `GET /mcp/G/vN/server-card` answers, its remote under URL (default as for `postman`); with `--registry`, the MCP Registry's `server.json` for publishing the endpoint |
//! | `shop hosts [--group G] [--version N] [--url URL] [--allow-protected]` | the configuration of MCP hosts (Claude Desktop, Claude Code, VS Code, Cursor) for the group, over stdio (this executable) and HTTP (URL, default as for `postman`) |
//! | `shop check` | builds the server and lists its problems, one per line |
//!
//! `--group` defaults to `mcp` and `--version` to 1. `--lang` is negotiated like an
//! `Accept-Language` header against the server's languages (the default language when none
//! fits). A group without resources (or prompts) prints `[]`. Exit codes: 0 success, 1 a
//! failure (the server does not build, the address cannot be bound, an unknown group, problems
//! found by `check`), 2 bad arguments (with the usage).

use std::ffi::OsString;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

/// The `clap` these types come from (for [`clap::Error`], [`clap::CommandFactory`] and
/// embedding [`Cli`] in a larger command line), so a service needs no `clap` dependency.
pub use clap;
use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};

use crate::context::CallExtras;
use crate::error::codes;
use crate::mcp::handler::McpEndpoint;
use crate::mcp::handler::Message;
use crate::mcp::protocol::{self, Era};
use crate::server::{BuildError, DEFAULT_LISTEN, Server, ServerBuilder};

/// The command line of a service binary.
#[derive(Debug, Parser)]
#[command(
    name = "service",
    about = "Serve this service's JSON-RPC methods and MCP tools, resources and prompts, or inspect them",
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    /// The command; without one, `serve` (or stdio with `--stdio`).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// HTTP address to listen on (same as `serve --listen`)
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN, conflicts_with = "stdio")]
    pub listen: SocketAddr,
    /// Serve one MCP group over stdin/stdout instead of HTTP (same as `stdio`)
    #[arg(long)]
    pub stdio: bool,
    /// The MCP group of `--stdio` (default: the server's only MCP group, else `mcp`)
    #[arg(
        long,
        value_name = "G",
        default_value = "",
        hide_default_value = true,
        requires = "stdio"
    )]
    pub group: String,
    /// The version of `--stdio`
    #[arg(long, value_name = "N", default_value_t = 1, requires = "stdio",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub version: u32,
    /// Let `--stdio` serve a protected group (stdio has no token: whoever starts the process
    /// gets the group)
    #[arg(long, requires = "stdio")]
    pub allow_protected: bool,
    /// The program name, for messages (`argv[0]`'s file name).
    #[arg(skip)]
    pub program: String,
}

/// A command of [`Cli`].
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve HTTP: JSON-RPC and MCP endpoints of every group (the default command)
    Serve(ServeArgs),
    /// Serve one MCP group and version over stdin/stdout until stdin closes
    Stdio(StdioArgs),
    /// Print the `tools` array a modern MCP tools/list returns (every page), as JSON
    Tools(Localized),
    /// Print the `resources` array a modern MCP resources/list returns (every page), as JSON
    Resources(Localized),
    /// Print the `resourceTemplates` array a modern MCP resources/templates/list returns
    /// (every page), as JSON
    #[command(visible_alias = "templates")]
    ResourceTemplates(Localized),
    /// Print the `prompts` array a modern MCP prompts/list returns (every page), as JSON
    Prompts(Localized),
    /// Print the OpenRPC document `GET /rpc/{group}/v{N}` returns (with `--unroll`, what
    /// `?unroll=N` returns)
    Openrpc(OpenrpcArgs),
    /// Print the Postman collection (v2.1) `GET /rpc/{group}/v{N}/postman` returns
    Postman(PostmanArgs),
    /// Print the server card (SEP-2127) `GET /mcp/{group}/v{N}/server-card` returns, or with
    /// `--registry` the MCP Registry's `server.json` for publishing the endpoint
    Card(CardArgs),
    /// Print the configuration of MCP hosts (Claude Desktop, Claude Code, VS Code, Cursor)
    /// for one MCP group, over stdio and HTTP
    Hosts(HostsArgs),
    /// Build the server and report problems (catalog, translations, tool names)
    Check,
    /// Run queued work (tasks accepted by any instance on the same Redis) without serving
    /// requests; `--listen` answers `/healthz` and `/readyz` only
    Worker(ServeArgs),
    /// Tasks and deliveries across instances (with Redis): list, show, cancel, dead letters
    #[command(subcommand)]
    Tasks(TasksCommand),
}

/// `tasks`: what operators see and steer of queued work.
#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// Print every instance's tasks, oldest first, one JSON object a line
    List,
    /// Print one task as stored, its result or error included
    Show {
        /// Its id
        id: String,
    },
    /// Cancel a task: on the instance that runs it, or at once when none does
    Cancel {
        /// Its id
        id: String,
    },
    /// Print the webhook deliveries given up on (the dead letters), one JSON object a line
    DeadLetter,
    /// Take a dead delivery back: tried again at once, by an instance that runs work
    Retry {
        /// Its id (`webhook-id`, as `dead-letter` prints it)
        id: String,
    },
}

/// The options of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// HTTP address to listen on (port 0 picks a free port)
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
}

/// A group and version.
#[derive(Debug, Clone, Args)]
pub struct Target {
    /// The API group (default: the server's only MCP group, else `mcp`; empty: that default)
    #[arg(long, value_name = "G", default_value = "", hide_default_value = true)]
    pub group: String,
    /// The version of the group
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub version: u32,
}

impl Target {
    /// This target with its group settled: the one given, else the server's only MCP group
    /// (a crate whose one MCP group is `notes` needs no `--group`), else `mcp`.
    pub fn settled(&self, server: &Server) -> Target {
        if !self.group.is_empty() {
            return self.clone();
        }
        let mut mcp: Vec<&str> = server
            .registry()
            .catalogs()
            .filter(|c| c.group().is_mcp())
            .map(|c| c.group().name())
            .collect();
        mcp.dedup();
        let group = match mcp.as_slice() {
            [only] => (*only).to_owned(),
            _ => "mcp".to_owned(),
        };
        Target {
            group,
            version: self.version,
        }
    }
}

/// The options of `stdio`.
#[derive(Debug, Clone, Args)]
pub struct StdioArgs {
    /// The group and version.
    #[command(flatten)]
    pub target: Target,
    /// Serve a protected group (stdio has no token: whoever starts the process gets the group)
    #[arg(long)]
    pub allow_protected: bool,
}

/// A list of an MCP group, as the `tools`, `resources`, `resource-templates` and `prompts`
/// commands print it (see [`list`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum McpList {
    /// `tools/list`, its `tools` array.
    Tools,
    /// `resources/list`, its `resources` array.
    Resources,
    /// `resources/templates/list`, its `resourceTemplates` array.
    ResourceTemplates,
    /// `prompts/list`, its `prompts` array.
    Prompts,
}

impl McpList {
    /// The MCP method (`tools/list`, ...).
    pub const fn method(self) -> &'static str {
        match self {
            Self::Tools => "tools/list",
            Self::Resources => "resources/list",
            Self::ResourceTemplates => "resources/templates/list",
            Self::Prompts => "prompts/list",
        }
    }

    /// The member of the result that holds the page's items (`tools`, ...).
    pub const fn member(self) -> &'static str {
        match self {
            Self::Tools => "tools",
            Self::Resources => "resources",
            Self::ResourceTemplates => "resourceTemplates",
            Self::Prompts => "prompts",
        }
    }
}

/// A group, a version and a language.
#[derive(Debug, Clone, Args)]
pub struct Localized {
    /// The group and version.
    #[command(flatten)]
    pub target: Target,
    /// The language, negotiated like an Accept-Language header (default: the server's default language)
    #[arg(long, value_name = "L")]
    pub lang: Option<String>,
}

/// The options of `postman` and `card`.
#[derive(Debug, Clone, Args)]
pub struct PostmanArgs {
    /// The group, version and language.
    #[command(flatten)]
    pub localized: Localized,
    /// Where the server is reached, without the endpoint's path: the collection's `baseUrl`,
    /// the card's remote (default: the server's public URL, else http://127.0.0.1:8080)
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
}

/// The options of `openrpc`.
#[derive(Debug, Clone, Args)]
pub struct OpenrpcArgs {
    /// The group, version, language and URL, as for `postman` (the URL the document's
    /// `servers[0].url` is under).
    #[command(flatten)]
    pub doc: PostmanArgs,
    /// Write each recursive schema out N levels deep (1 to 5, default 3), for tools that
    /// cannot stop at a cycle (`@open-rpc/generator`)
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "3",
        value_parser = clap::value_parser!(u8).range(1..=5))]
    pub unroll: Option<u8>,
}

/// The options of `card`.
#[derive(Debug, Clone, Args)]
pub struct CardArgs {
    /// The group, version, language and URL, as for `postman`.
    #[command(flatten)]
    pub card: PostmanArgs,
    /// Print the MCP Registry's `server.json` (what `mcp-publisher publish` takes) instead of
    /// the card
    #[arg(long)]
    pub registry: bool,
}

/// The options of `hosts`.
#[derive(Debug, Clone, Args)]
pub struct HostsArgs {
    /// The MCP group and version.
    #[command(flatten)]
    pub target: Target,
    /// Where the running server is reached over HTTP, without the endpoint's path (default:
    /// the server's public URL, else http://127.0.0.1:8080)
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Print stdio entries for a protected group too (they start the process with
    /// `--allow-protected`: whoever starts it gets the group)
    #[arg(long)]
    pub allow_protected: bool,
}

impl Cli {
    /// Parses a command line (`args[0]` is the program). `Err` carries clap's message (see
    /// [`Cli::from_args`] for one that always shows the usage).
    pub fn try_parse_args<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let mut cli = <Self as Parser>::try_parse_from(&args)?;
        cli.program = program_name(&args);
        Ok(cli)
    }

    /// Parses a command line (`args[0]` is the program). On bad arguments it prints the
    /// error and the usage to stderr and exits with code 2; `--help` prints the help and
    /// exits with 0.
    pub fn from_args<I, T>(args: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        match Self::try_parse_args(&args) {
            Ok(cli) => cli,
            Err(e) if !e.use_stderr() => e.exit(),
            Err(e) => {
                eprint!("{}", with_usage(&e, &args));
                std::process::exit(2)
            }
        }
    }

    /// Parses the process's arguments, as [`Cli::from_args`] does.
    pub fn from_env() -> Self {
        Self::from_args(std::env::args_os())
    }

    /// Runs the command on the server `builder` makes.
    pub async fn run(self, builder: ServerBuilder) -> ExitCode {
        let program = self.program.clone();
        match self.execute(builder).await {
            Ok(code) => code,
            Err(message) => {
                eprintln!("{program}: {message}");
                ExitCode::FAILURE
            }
        }
    }

    async fn execute(self, builder: ServerBuilder) -> Result<ExitCode, String> {
        let command = match self.command {
            Some(c) => c,
            None if self.stdio => Command::Stdio(StdioArgs {
                target: Target {
                    group: self.group,
                    version: self.version,
                },
                allow_protected: self.allow_protected,
            }),
            None => Command::Serve(ServeArgs {
                listen: self.listen,
            }),
        };
        match command {
            Command::Check => Ok(run_check(builder, &self.program)),
            Command::Worker(a) => {
                let server = build(builder)?;
                let listener = tokio::net::TcpListener::bind(a.listen)
                    .await
                    .map_err(|e| format!("cannot listen on {}: {e}", a.listen))?;
                server
                    .serve_worker(listener, crate::server::shutdown_signal())
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Tasks(t) => {
                // An operator's command runs no work itself.
                let server = build(builder.runs_work(false))?;
                tasks_command(&server, t).await
            }
            Command::Serve(a) => {
                let server = build(builder)?;
                serve(&server, a.listen).await?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Stdio(StdioArgs {
                target: t,
                allow_protected,
            }) => {
                let server = build(builder.stdio_serves_protected(allow_protected))?;
                let t = t.settled(&server);
                endpoint(&server, &t)?;
                tracing::debug!(group = %t.group, version = t.version, "serving MCP on stdio");
                server
                    .serve_stdio(&t.group, t.version)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Tools(l) => print_list(builder, McpList::Tools, &l).await,
            Command::Resources(l) => print_list(builder, McpList::Resources, &l).await,
            Command::ResourceTemplates(l) => {
                print_list(builder, McpList::ResourceTemplates, &l).await
            }
            Command::Prompts(l) => print_list(builder, McpList::Prompts, &l).await,
            Command::Openrpc(o) => {
                let server = build(builder)?;
                let l = &o.doc.localized;
                let t = &l.target.settled(&server);
                let lang = language(&server, l.lang.as_deref());
                let unroll = o.unroll.map(usize::from);
                let doc = server
                    .openrpc_at(
                        &t.group,
                        t.version,
                        Some(lang),
                        o.doc.url.as_deref(),
                        unroll,
                    )
                    .ok_or_else(|| unknown(&server, t, false))?;
                write_stdout(&doc)?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Postman(a) => {
                let server = build(builder)?;
                let l = &a.localized;
                let t = l.target.settled(&server);
                let lang = language(&server, l.lang.as_deref());
                let doc = server
                    .postman(&t.group, t.version, Some(lang), a.url.as_deref())
                    .ok_or_else(|| unknown(&server, &t, false))?;
                write_stdout(&doc)?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Card(c) => {
                let server = build(builder)?;
                let a = &c.card;
                let l = &a.localized;
                let t = l.target.settled(&server);
                let lang = language(&server, l.lang.as_deref());
                let card = match c.registry {
                    true => server.registry_server_json(
                        &t.group,
                        t.version,
                        Some(lang),
                        a.url.as_deref(),
                    ),
                    false => server.server_card(&t.group, t.version, Some(lang), a.url.as_deref()),
                }
                .ok_or_else(|| unknown(&server, &t, true))?;
                write_stdout(&card)?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Hosts(a) => {
                let server = build(builder)?;
                let exe = std::env::current_exe()
                    .map_err(|e| format!("cannot find this executable's path: {e}"))?;
                let text = hosts(&server, &a, &exe.to_string_lossy())?;
                write_stdout(text.as_bytes())?;
                Ok(ExitCode::SUCCESS)
            }
        }
    }
}

/// `tasks dead-letter` and `tasks retry ID`.
#[cfg(feature = "redis")]
async fn tasks_command(server: &Server, t: TasksCommand) -> Result<ExitCode, String> {
    match t {
        TasksCommand::List => {
            let mut out = String::new();
            for t in server.all_tasks().await? {
                out.push_str(&task_line(&t, false).to_string());
                out.push('\n');
            }
            write_stdout(out.as_bytes())?;
        }
        TasksCommand::Show { id } => {
            let tasks = server.all_tasks().await?;
            let t = tasks
                .iter()
                .find(|t| t.view.id == id)
                .ok_or_else(|| format!("no task `{}`", crate::error::shown(&id)))?;
            let mut out = task_line(t, true).to_string();
            out.push('\n');
            write_stdout(out.as_bytes())?;
        }
        TasksCommand::Cancel { id } => {
            server.stop_task(&id).await?;
            eprintln!("task {id}: cancelled (an instance that runs it stops its call)");
        }
        TasksCommand::DeadLetter => {
            let mut out = String::new();
            for d in server.dead_deliveries().await? {
                out.push_str(&serde_json::to_string(&d).map_err(|e| e.to_string())?);
                out.push('\n');
            }
            write_stdout(out.as_bytes())?;
        }
        TasksCommand::Retry { id } => {
            server.retry_delivery(&id).await?;
            eprintln!("delivery {id} is tried again");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A task as `tasks list` (`whole`: `tasks show`) prints it.
#[cfg(feature = "redis")]
fn task_line(t: &crate::core::SharedTask, whole: bool) -> serde_json::Value {
    let ms = |at: std::time::SystemTime| {
        at.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    };
    let v = &t.view;
    let mut line = serde_json::json!({
        "id": v.id,
        "status": v.status.as_str(),
        "owner": t.owner,
        "running": t.running,
        "createdMs": ms(v.created),
        "updatedMs": ms(v.updated),
    });
    if let Some(m) = &v.status_message {
        line["statusMessage"] = m.clone().into();
    }
    if whole {
        if !v.input_requests.is_empty() {
            line["inputRequests"] = v.input_requests.clone().into();
        }
        if let Some(r) = &v.result {
            line["result"] = r.clone();
        }
        if let Some(e) = &v.error {
            line["error"] = e.clone();
        }
    }
    line
}

/// `tasks` needs Redis.
#[cfg(not(feature = "redis"))]
async fn tasks_command(_: &Server, _: TasksCommand) -> Result<ExitCode, String> {
    Err("`tasks` needs the feature `redis` and a server with Redis".to_owned())
}

/// What `hosts` prints: the configuration of common MCP hosts for `a`'s MCP group and version,
/// over stdio (`exe stdio --group G --version N`) and over HTTP (`--url`, else the public URL,
/// else `http://127.0.0.1:8080`, followed by the endpoint's path): Claude Desktop's
/// `claude_desktop_config.json`, Claude Code's `claude mcp add` command lines, VS Code's
/// `.vscode/mcp.json` and Cursor's `.cursor/mcp.json`. The entries are named
/// `{server}-{group}-v{N}` (`-http` for HTTP). A protected group gets stdio entries only with
/// `--allow-protected`.
///
/// `Err` has the command's message: an unknown group or version, a group published over
/// JSON-RPC only, invalid tool names.
pub fn hosts(server: &Server, a: &HostsArgs, exe: &str) -> Result<String, String> {
    let t = &a.target.settled(server);
    let ep = endpoint(server, t)?;
    let site = server.site();
    let name: String = format!("{}-{}-v{}", site.name, t.group, t.version)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let http_name = format!("{name}-http");
    let base = a
        .url
        .as_deref()
        .or(site.auth.public_url.as_deref())
        .map(|u| u.trim_end_matches('/').to_owned())
        .unwrap_or_else(|| format!("http://{DEFAULT_LISTEN}"));
    let url = format!("{base}{}/{}/v{}", site.mcp_prefix, t.group, t.version);
    let version = t.version.to_string();
    let mut args = vec!["stdio", "--group", t.group.as_str(), "--version", &version];
    let protected = ep.catalog().group().is_protected();
    if protected && a.allow_protected {
        args.push("--allow-protected");
    }
    let stdio = !protected || a.allow_protected;
    let pretty = |v: Value| serde_json::to_string_pretty(&v).unwrap_or_default();
    let command = json!({ "command": exe, "args": args });
    let mut out = String::new();
    let mut section = |title: &str, body: &str| {
        out.push_str("# ");
        out.push_str(title);
        out.push('\n');
        out.push_str(body);
        out.push_str("\n\n");
    };
    if stdio {
        section(
            "Claude Desktop: claude_desktop_config.json (stdio)",
            &pretty(json!({ "mcpServers": { &name: command } })),
        );
    }
    let mut claude = Vec::new();
    if stdio {
        let line: Vec<String> = std::iter::once(exe)
            .chain(args.iter().copied())
            .map(shell_word)
            .collect();
        claude.push(format!(
            "claude mcp add --transport stdio {} -- {}",
            shell_word(&name),
            line.join(" ")
        ));
    }
    claude.push(format!(
        "claude mcp add --transport http {} {}",
        shell_word(&http_name),
        shell_word(&url)
    ));
    section("Claude Code: command lines", &claude.join("\n"));
    let mut vscode = serde_json::Map::new();
    let mut cursor = serde_json::Map::new();
    if stdio {
        vscode.insert(
            name.clone(),
            json!({ "type": "stdio", "command": exe, "args": args }),
        );
        cursor.insert(name.clone(), command.clone());
    }
    vscode.insert(http_name.clone(), json!({ "type": "http", "url": url }));
    cursor.insert(http_name, json!({ "url": url }));
    section(
        "VS Code: .vscode/mcp.json",
        &pretty(json!({ "servers": vscode })),
    );
    section(
        "Cursor: .cursor/mcp.json (or ~/.cursor/mcp.json)",
        &pretty(json!({ "mcpServers": cursor })),
    );
    if protected && !a.allow_protected {
        out.push_str(&format!(
            "# stdio entries left out: group `{}` is protected and stdio has no token \
             (pass --allow-protected to print them)\n",
            t.group
        ));
    }
    out.push_str(&format!(
        "# HTTP entries need the server running: {} serve\n",
        shell_word(exe)
    ));
    Ok(out)
}

/// `w` as one POSIX shell word: as is when it has only safe characters, else single-quoted.
fn shell_word(w: &str) -> String {
    let safe = !w.is_empty()
        && w.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'-' | b'_' | b'.' | b'/' | b':' | b'@' | b'=' | b'+' | b','
                )
        });
    if safe {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Parses the process's arguments and runs the command on its own tokio runtime: for a plain
/// `fn main() -> ExitCode` (inside an async runtime use [`run_async`]).
pub fn run(builder: ServerBuilder) -> ExitCode {
    let cli = Cli::from_env();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(cli.run(builder)),
        Err(e) => {
            eprintln!("{}: cannot start the runtime: {e}", cli.program);
            ExitCode::FAILURE
        }
    }
}

/// Parses the process's arguments and runs the command: for `#[tokio::main] async fn main`.
pub async fn run_async(builder: ServerBuilder) -> ExitCode {
    Cli::from_env().run(builder).await
}

/// `argv[0]`'s file name (`service` without one).
fn program_name(args: &[OsString]) -> String {
    args.first()
        .and_then(|a| std::path::Path::new(a).file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "service".to_owned())
}

/// Clap's message with the usage of the (sub)command, which clap leaves out of some errors
/// (e.g. an invalid value).
fn with_usage(e: &clap::Error, args: &[OsString]) -> String {
    let text = e.render().to_string();
    if text.contains("Usage:") {
        return text;
    }
    let mut cmd = <Cli as clap::CommandFactory>::command().bin_name(program_name(args));
    cmd.build();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    let sub = args
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| names.iter().any(|n| n == a));
    let usage = match sub.and_then(|s| cmd.find_subcommand_mut(s)) {
        Some(c) => c.render_usage(),
        None => cmd.render_usage(),
    };
    match text.find("For more information") {
        Some(i) => format!("{}{usage}\n\n{}", &text[..i], &text[i..]),
        None => format!("{text}\n{usage}\n"),
    }
}

fn build(builder: ServerBuilder) -> Result<Server, String> {
    builder.build().map_err(|e| e.to_string())
}

fn write_stdout(bytes: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))
}

async fn serve(server: &Server, listen: SocketAddr) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    // `serve_listener` says where it listens (the bound address: port 0 picks a free one),
    // as a line scripts and tests read.
    server
        .serve_listener(listener, crate::server::shutdown_signal())
        .await
        .map_err(|e| e.to_string())
}

/// The negotiated language of `--lang` (the default language without one).
fn language<'a>(server: &'a Server, lang: Option<&str>) -> &'a str {
    let t = server.translations();
    let picked = t.pick(lang);
    if let Some(l) = lang
        && crate::i18n::negotiate(Some(l), &[picked], t.default_lang()).is_none()
    {
        tracing::warn!(
            "no translations for `{l}`; using `{picked}` (languages: {})",
            t.languages().join(", ")
        );
    }
    picked
}

/// The error of a group and version the server does not serve (over MCP when `mcp`).
fn unknown(server: &Server, t: &Target, mcp: bool) -> String {
    if mcp && server.registry().catalog(&t.group, t.version).is_some() {
        return format!(
            "group `{}` v{} is not published over MCP (it is an `ApiGroup::rpc` group)",
            t.group, t.version
        );
    }
    let known: Vec<String> = server
        .registry()
        .catalogs()
        .filter(|c| !mcp || c.group().is_mcp())
        .map(|c| format!("{} v{}", c.group().name(), c.version()))
        .collect();
    format!(
        "no {}group `{}` with version {} (available: {})",
        if mcp { "MCP " } else { "" },
        t.group,
        t.version,
        if known.is_empty() {
            "none".to_owned()
        } else {
            known.join(", ")
        }
    )
}

/// The MCP endpoint of a target, refusing one that has invalid tool names.
fn endpoint<'a>(server: &'a Server, t: &Target) -> Result<&'a Arc<McpEndpoint>, String> {
    let ep = server
        .mcp_endpoint(&t.group, t.version)
        .ok_or_else(|| unknown(server, t, true))?;
    let bad = crate::mcp::tools::bad_tool_names(ep.catalog());
    if !bad.is_empty() {
        return Err(format!(
            "MCP group `{}` v{} has invalid tool names: {}",
            t.group,
            t.version,
            bad.join("; ")
        ));
    }
    Ok(ep)
}

/// The `tools`, `resources`, `resource-templates` and `prompts` commands.
async fn print_list(
    builder: ServerBuilder,
    kind: McpList,
    l: &Localized,
) -> Result<ExitCode, String> {
    let server = build(builder)?;
    let items = list(&server, kind, l).await?;
    write_stdout(&serde_json::to_vec(&items).map_err(|e| e.to_string())?)?;
    Ok(ExitCode::SUCCESS)
}

/// What the `tools`, `resources`, `resource-templates` and `prompts` commands print: the
/// items of every page of a modern `kind` list of `l`'s group and version in `l`'s language,
/// joined into one array. They are asked of the group's MCP endpoint itself, so they are
/// written with the server's own list options, exactly as a live request gets them. A group
/// without the capability (the endpoint answers -32601 "Method not found": no resources, no
/// prompts) gives `[]`.
///
/// `Err` has the command's message: an unknown group or version, a group published over
/// JSON-RPC only, invalid tool names.
pub async fn list(server: &Server, kind: McpList, l: &Localized) -> Result<Value, String> {
    let ep = endpoint(server, &l.target.settled(server))?;
    let lang = language(server, l.lang.as_deref());
    every_page(ep, kind, lang).await
}

/// Every page of a modern `kind` list in `lang`, asked of the endpoint.
async fn every_page(ep: &McpEndpoint, kind: McpList, lang: &str) -> Result<Value, String> {
    let (method, member) = (kind.method(), kind.member());
    let lang: Arc<str> = Arc::from(lang);
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let first = cursor.is_none();
        let mut params = json!({ "_meta": {
            protocol::META_PROTOCOL_VERSION: Era::latest_stateless().version(),
            protocol::META_CLIENT_CAPABILITIES: {},
        }});
        if let Some(c) = cursor.take() {
            params["cursor"] = c.into();
        }
        let msg = Message::new(Some(json!(1)), method, Some(params));
        let extras = CallExtras {
            language: Some(lang.clone()),
            ..CallExtras::default()
        };
        let answer = ep.handle(msg, Era::latest_stateless(), extras).await;
        let mut reply: Value = serde_json::from_slice(&answer.body.into_vec())
            .map_err(|e| format!("{method} answered invalid JSON: {e}"))?;
        if let Some(e) = reply.get("error") {
            // The group does not have the capability (no resources, no prompts): none.
            if first
                && e.get("code").and_then(Value::as_i64) == Some(codes::METHOD_NOT_FOUND.into())
            {
                return Ok(Value::Array(Vec::new()));
            }
            return Err(format!("{method} failed: {e}"));
        }
        let result = reply
            .get_mut("result")
            .ok_or_else(|| format!("{method} answered without a result"))?;
        if let Some(Value::Array(page)) = result.get_mut(member).map(Value::take) {
            items.extend(page);
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => return Ok(Value::Array(items)),
        }
    }
}

/// What `check` reports: `Ok` with a one-line summary (then a `warning: ` line for each of
/// [`crate::Server::warnings`]), or `Err` with every problem found, one line each: catalog errors (duplicates, group conflicts, bad version ranges, methods without
/// a group), translation errors, invalid MCP tool names and input schemas that do not compile.
///
/// Building stops at the first kind of problem, in this order: the cache/lock store, the
/// catalog, the input schemas, the settings naming groups or methods, the translations; tool
/// names are checked on a server that built.
pub fn check(builder: ServerBuilder) -> Result<String, Vec<String>> {
    let server = match builder.build() {
        Ok(s) => s,
        Err(BuildError::Catalog(errors)) => {
            return Err(errors.iter().map(ToString::to_string).collect());
        }
        Err(BuildError::Translations(errors)) => {
            return Err(errors
                .iter()
                .map(|e| format!("translations: {e}"))
                .collect());
        }
        Err(BuildError::Schema(errors)) => {
            return Err(errors.iter().map(ToString::to_string).collect());
        }
        Err(BuildError::Settings(errors)) => return Err(errors),
        Err(BuildError::MissingState(errors)) => return Err(errors),
        Err(e @ BuildError::Store(_)) => return Err(vec![e.to_string()]),
    };
    let mut problems = Vec::new();
    for c in server.registry().catalogs() {
        let (group, version) = (c.group().name(), c.version());
        if c.group().is_mcp() {
            for bad in crate::mcp::tools::bad_tool_names(c) {
                problems.push(format!("group `{group}` v{version}: tool name {bad}"));
            }
        }
        for m in c.methods() {
            if let Err(e) = m.validator() {
                problems.push(format!(
                    "group `{group}` v{version}: method `{}` ({}): the input schema does not compile: {e}",
                    m.name(),
                    m.def.location
                ));
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let r = server.registry();
    let methods: std::collections::BTreeSet<&str> = r
        .catalogs()
        .flat_map(|c| c.methods().iter().map(|m| m.name()))
        .collect();
    let mut summary = format!(
        "{} groups, {} catalogs, {} methods ({}), languages {}",
        r.groups().len(),
        r.catalogs().count(),
        methods.len(),
        server.endpoints(),
        server.translations().languages().join(", ")
    );
    for w in server.warnings() {
        summary.push_str("\nwarning: ");
        summary.push_str(w);
    }
    Ok(summary)
}

/// The `check` command: the summary (exit 0) or the problems (exit 1) on stdout.
fn run_check(builder: ServerBuilder, program: &str) -> ExitCode {
    match check(builder) {
        Ok(summary) => {
            println!("{program}: ok: {summary}");
            ExitCode::SUCCESS
        }
        Err(problems) => {
            for p in &problems {
                println!("{p}");
            }
            eprintln!("{program}: check found {} problem(s)", problems.len());
            ExitCode::FAILURE
        }
    }
}
