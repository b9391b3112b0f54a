//! Two methods with one name in one group and version: a startup error naming both places.

use mcp_runtime::BuildError;
use mcp_runtime::prelude::*;

const D: ApiGroup = ApiGroup::rpc("dup");

/// One.
#[rpc_method(name = "Dup.same", groups = [D])]
fn first() -> String {
    String::new()
}

/// Two.
#[rpc_method(name = "Dup.same", groups = [D])]
fn second() -> String {
    String::new()
}

#[test]
fn duplicate_names_fail_startup_with_both_locations() {
    let Err(BuildError::Catalog(errors)) = Server::builder().build() else {
        panic!("a duplicate must fail the build")
    };
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 1, "{text:?}");
    let e = &text[0];
    assert!(
        e.starts_with("duplicate method `Dup.same` in group `dup` version v1: defined at "),
        "{e}"
    );
    assert!(
        e.contains("duplicate_names::first (tests/tests/duplicate_names.rs:10)"),
        "{e}"
    );
    assert!(
        e.contains("duplicate_names::second (tests/tests/duplicate_names.rs:16)"),
        "{e}"
    );
}
