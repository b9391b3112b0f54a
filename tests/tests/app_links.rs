//! A tool linked to an MCP App its group and version do not have: a startup error naming the
//! tool, the URI, the group and the version. An app in another group, or one removed in the
//! tool's version, does not count.

use mcp_runtime::BuildError;
use mcp_runtime::prelude::*;

const SHOP: ApiGroup = ApiGroup::mcp("shop");
const ADMIN: ApiGroup = ApiGroup::mcp("admin");
const RPC: ApiGroup = ApiGroup::rpc("internal");

/// The card of `admin`, in every version.
#[mcp_resource(uri = "ui://shop/card", app, groups = [ADMIN])]
fn admin_card() -> &'static str {
    "<!DOCTYPE html><title>card</title>"
}

/// The card of `shop`, version 1 only.
#[mcp_resource(uri = "ui://shop/card", app, groups = [SHOP], removed_in = 2)]
fn shop_card() -> &'static str {
    "<!DOCTYPE html><title>card</title>"
}

/// Linked to the card: found in `shop` v1 and `admin` v1, missing in `shop` v2; never checked
/// in the JSON-RPC group.
#[rpc_method(name = "Shop.card", groups = [SHOP, ADMIN, RPC], version = 1, removed_in = 3)]
#[mcp_tool(app = "ui://shop/card")]
fn card() -> String {
    String::new()
}

#[test]
fn a_tool_linked_to_an_app_its_group_and_version_lack_fails_the_build() {
    let Err(BuildError::Catalog(errors)) = Server::builder().build() else {
        panic!("a missing app must fail the build")
    };
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "tool `Shop.card` at app_links::card (tests/tests/app_links.rs:28) shows its results \
             in the app `ui://shop/card`, but group `shop` version v2 has no app resource with \
             that URI (`#[mcp_resource(uri = \"ui://shop/card\", app, ...)]` in the same groups \
             and versions)"
        ]
    );
}
