//! mcp-runtime's public API is what `mcp-runtime/public-api.txt` says (issue 38): every change
//! to it shows in a review as a change to that file.
//!
//! The list is `cargo public-api`'s, made here without that tool's nightly toolchain: rustdoc
//! writes the crate's JSON (`RUSTC_BOOTSTRAP=1`, as the pinned toolchain's rustdoc has the
//! format behind `-Z`), and `tests/public-api` (the `public-api` crate, outside the workspace)
//! lists its items. Every feature a user can turn on is documented, not `test-util` (this
//! repository's own: `test_util` is not an API anyone may rely on).
//!
//! After a deliberate change: `UPDATE_PUBLIC_API=1 cargo nextest run -p tests --run-ignored all
//! public_api`.

use std::process::Command;

const FEATURES: &str = "redis,webhooks,jwt,anyhow,fmt,otel";

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

#[test]
#[ignore = "needs the crates of tests/public-api (cargo fetch); scripts/test.sh provides the peers and runs ignored tests"]
fn the_public_api_is_the_one_in_the_repository() {
    let root = tests::workspace();
    // A directory of its own: rustdoc's JSON needs `RUSTC_BOOTSTRAP`, which cargo counts in
    // its fingerprints, so sharing the build's would rebuild the dependencies both ways.
    let target = tests::target_dir().join("public-api");
    run(
        tests::cargo()
            .args([
                "rustdoc",
                "--offline",
                "--locked",
                "-p",
                "mcp-runtime",
                "--lib",
            ])
            .args(["--features", FEATURES, "--quiet", "--"])
            .args(["-Z", "unstable-options", "--output-format", "json"])
            .current_dir(root)
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_TARGET_DIR", &target),
        "cargo rustdoc (JSON) of mcp-runtime",
    );
    let json = target.join("doc").join("mcp_runtime.json");
    let listed = run(
        tests::cargo()
            .args(["run", "--offline", "--locked", "--quiet", "--manifest-path"])
            .arg(root.join("tests/public-api/Cargo.toml"))
            .arg("--")
            .arg(&json)
            // Apart again: its dependencies' features differ, and one directory would have
            // each build undo the other's.
            .env("CARGO_TARGET_DIR", target.join("lister")),
        "tests/public-api",
    );
    let api = listed;
    // The lister read the crate: its root, its server and its macros are there.
    for item in [
        "pub mod mcp_runtime",
        "pub struct mcp_runtime::Server",
        "pub use mcp_runtime::rpc_method",
    ] {
        assert!(api.lines().any(|l| l == item), "{item} is not listed");
    }

    let snapshot = root.join("mcp-runtime/public-api.txt");
    if std::env::var_os("UPDATE_PUBLIC_API").is_some() {
        std::fs::write(&snapshot, &api).expect("public-api.txt written");
        return;
    }
    let kept = std::fs::read_to_string(&snapshot).unwrap_or_default();
    if kept == api {
        return;
    }
    let old: std::collections::BTreeSet<&str> = kept.lines().collect();
    let new: std::collections::BTreeSet<&str> = api.lines().collect();
    let mut diff = String::new();
    for l in old.difference(&new) {
        diff.push_str(&format!("- {l}\n"));
    }
    for l in new.difference(&old) {
        diff.push_str(&format!("+ {l}\n"));
    }
    panic!(
        "mcp-runtime's public API changed (a line's order, if nothing below):\n{diff}\n\
         If that is meant: UPDATE_PUBLIC_API=1 cargo nextest run -p tests --run-ignored all public_api"
    );
}
