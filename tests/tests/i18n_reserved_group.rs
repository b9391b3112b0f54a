//! A group named like a translation domain (`rpc`, the base file's name) is refused at startup.

use mcp_runtime::BuildError;
use mcp_runtime::prelude::*;

const RPC: ApiGroup = ApiGroup::rpc("rpc");

/// A method in a group whose name collides with the base translation domain.
#[rpc_method(name = "X.y", groups = [RPC])]
fn y() -> String {
    String::new()
}

#[test]
fn a_group_named_rpc_is_rejected_with_a_clear_message() {
    match Server::builder().build() {
        Err(BuildError::Translations(e)) => assert_eq!(
            e.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "group `rpc`:0: the group name `rpc` is reserved for a translation domain (rpc, messages, validators); rename the group"
            ]
        ),
        Err(other) => panic!("unexpected: {other}"),
        Ok(_) => panic!("a group named `rpc` must be refused"),
    }
}
