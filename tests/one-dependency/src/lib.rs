//! The README and every page of the guide, compiled and run as doctests of a crate whose
//! only dependencies are the quick start's (`mcp-runtime`, `serde`, `tokio`): an example that
//! needs anything else, or that does not compile as written, fails
//! `tests/tests/one_dependency.rs`.

#![doc = include_str!("../../../README.md")]

/// `docs/guide/getting-started.md`.
#[doc = include_str!("../../../docs/guide/getting-started.md")]
pub struct GettingStarted;

/// `docs/guide/attributes.md`.
#[doc = include_str!("../../../docs/guide/attributes.md")]
pub struct Attributes;

/// `docs/guide/groups-and-versions.md`.
#[doc = include_str!("../../../docs/guide/groups-and-versions.md")]
pub struct GroupsAndVersions;

/// `docs/guide/pipeline.md`.
#[doc = include_str!("../../../docs/guide/pipeline.md")]
pub struct Pipeline;

/// `docs/guide/errors.md`.
#[doc = include_str!("../../../docs/guide/errors.md")]
pub struct Errors;

/// `docs/guide/resources-and-prompts.md`.
#[doc = include_str!("../../../docs/guide/resources-and-prompts.md")]
pub struct ResourcesAndPrompts;

/// `docs/guide/asking-the-client.md`.
#[doc = include_str!("../../../docs/guide/asking-the-client.md")]
pub struct AskingTheClient;

/// `docs/guide/apps.md`.
#[doc = include_str!("../../../docs/guide/apps.md")]
pub struct Apps;

/// `docs/guide/skills.md`.
#[doc = include_str!("../../../docs/guide/skills.md")]
pub struct Skills;

/// `docs/guide/tasks.md`.
#[doc = include_str!("../../../docs/guide/tasks.md")]
pub struct Tasks;

/// `docs/guide/identity-and-scopes.md`.
#[doc = include_str!("../../../docs/guide/identity-and-scopes.md")]
pub struct IdentityAndScopes;

/// `docs/guide/translations.md`.
#[doc = include_str!("../../../docs/guide/translations.md")]
pub struct Translations;

/// `docs/guide/discovery.md`.
#[doc = include_str!("../../../docs/guide/discovery.md")]
pub struct Discovery;

/// `docs/guide/testing.md`.
#[doc = include_str!("../../../docs/guide/testing.md")]
pub struct Testing;

/// `docs/guide/cli.md`.
#[doc = include_str!("../../../docs/guide/cli.md")]
pub struct Cli;

/// `docs/guide/deployment.md`.
#[doc = include_str!("../../../docs/guide/deployment.md")]
pub struct Deployment;

/// `docs/guide/mcp-hosts.md`.
#[doc = include_str!("../../../docs/guide/mcp-hosts.md")]
pub struct McpHosts;
