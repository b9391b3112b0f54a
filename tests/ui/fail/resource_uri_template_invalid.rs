//! Each template fails for its own reason, reported at the template.
#![allow(unused_variables)]
use mcp_runtime::prelude::*;

const MCP: ApiGroup = ApiGroup::mcp("mcp");

#[mcp_resource(uri_template = "items/{id}", groups = [MCP])]
fn no_scheme(id: u64) {}

#[mcp_resource(uri_template = "db://items/{id", groups = [MCP])]
fn unclosed(id: u64) {}

#[mcp_resource(uri_template = "db://items/id}", groups = [MCP])]
fn unopened() {}

#[mcp_resource(uri_template = "db://items/{a{b}}", groups = [MCP])]
fn nested(b: u64) {}

#[mcp_resource(uri_template = "db://items{?query}", groups = [MCP])]
fn query_expression(query: String) {}

#[mcp_resource(uri_template = "db://items/{item-id}", groups = [MCP])]
fn bad_name(id: u64) {}

#[mcp_resource(uri_template = "db://{id}/{id}", groups = [MCP])]
fn repeated(id: u64) {}

#[mcp_resource(uri_template = "db://items/all", groups = [MCP])]
fn no_variable() {}

#[mcp_resource(uri_template = "db://items/{shelf}{slot}", groups = [MCP])]
fn adjacent(shelf: u64, slot: u64) {}

fn main() {}
