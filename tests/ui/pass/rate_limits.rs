use std::time::Duration;

use mcp_runtime::RateLimit;
use mcp_runtime::prelude::*;

const MCP: ApiGroup =
    ApiGroup::mcp("mcp").rate_limit(RateLimit::new(600, Duration::from_secs(60)).burst(50));

/// Per caller, ten at once.
#[rpc_method(groups = [MCP], rate_limit(limit = "60/min", burst = 10))]
fn send() {}

/// One shared allowance.
#[rpc_method(groups = [MCP], rate_limit(limit = "5/10s", per = "method"))]
fn reindex() {}

/// The group's default.
#[rpc_method(groups = [MCP])]
fn ping() {}

/// A resource and a prompt take one too.
#[mcp_resource(uri = "docs://readme", groups = [MCP], rate_limit(limit = "100/h"))]
fn readme() -> String {
    String::new()
}

/// Says hello.
#[mcp_prompt(name = "hello", groups = [MCP], rate_limit(limit = "3/s", per = "caller"))]
fn hello() -> String {
    String::new()
}

fn main() {
    assert_eq!(MCP.default_rate_limit().map(|r| r.burst_size()), Some(50));
}
