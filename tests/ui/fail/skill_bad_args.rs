use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

// The directory must exist, relative to the crate's Cargo.toml.
#[mcp_skill(dir = "skills/nowhere", groups = [MCP])]
pub struct Nowhere;

// Groups are required; a prefix is URI path segments; versions go forward.
#[mcp_skill(dir = "skills/nowhere")]
pub struct NoGroups;

#[mcp_skill(dir = "skills/nowhere", prefix = "/acme billing", groups = [MCP], version = 2, removed_in = 2)]
pub struct BadPrefix;

#[mcp_skill(groups = [MCP], folder = "skills")]
pub struct NoDir;

// Scopes are OAuth scope tokens, each once.
#[mcp_skill(dir = "skills/nowhere", groups = [MCP], scopes = ["orders read", "a", "a"])]
pub struct BadScopes;

// A skill is a unit struct.
#[mcp_skill(dir = "skills/nowhere", groups = [MCP])]
pub struct Fields(u32);

#[mcp_skill(dir = "skills/nowhere", groups = [MCP])]
fn not_a_struct() {}

fn main() {}
