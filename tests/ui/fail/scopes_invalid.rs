use mcp_runtime::prelude::*;

const G: ApiGroup = ApiGroup::mcp("g").protected();

/// No scope at all.
#[rpc_method(name = "A.none", groups = [G], scopes = [])]
fn none() {}

/// A space and a quote are not scope characters; a scope twice.
#[rpc_method(name = "A.bad", groups = [G], scopes = ["orders write", "a\"b", "", "x", "x"])]
fn bad() {}

/// Not a list.
#[rpc_method(name = "A.list", groups = [G], scopes = "orders:write")]
fn not_list() {}

fn main() {}
