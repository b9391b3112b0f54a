use std::time::Duration;

use mcp_runtime::RateLimit;
use mcp_runtime::prelude::*;

// A group's default is a constant: a zero burst fails to compile.
const MCP: ApiGroup =
    ApiGroup::mcp("mcp").rate_limit(RateLimit::new(60, Duration::from_secs(60)).burst(0));

#[rpc_method(groups = [MCP])]
fn ping() {}

fn main() {}
