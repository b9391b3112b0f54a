//! A user's crate with only `mcp-runtime`, `serde` and `tokio` (`tests/one-dependency`, outside
//! the workspace): the README's quick start and a DTO deriving the prelude's `JsonSchema`
//! compile without `schemars`, its unit test calls methods in process and over HTTP on a
//! loopback port, and every Rust example of the README and the guide compiles (and, unless
//! marked `no_run`, runs) as one of its doctests.
//!
//! It runs `cargo test --offline --locked` on that crate with this build's target directory, so
//! only `mcp-runtime` (without the workspace's `redis` feature) and the crate itself are built.

use std::path::Path;

#[test]
fn a_crate_with_only_mcp_runtime_serde_and_tokio_compiles_and_tests_the_quick_start() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("one-dependency");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("its manifest");
    // The names in one table (up to the next).
    let table = |name: &str| -> Vec<&str> {
        manifest
            .split(name)
            .nth(1)
            .unwrap_or_default()
            .lines()
            .skip(1)
            .take_while(|l| !l.starts_with('['))
            .filter_map(|l| l.split_once(" = ").map(|(name, _)| name.trim()))
            .collect()
    };
    let deps = table("[dependencies]");
    assert_eq!(deps, ["mcp-runtime", "serde", "tokio"], "{manifest}");
    // Doctests also see dev-dependencies: only the two the guide's examples are about.
    let dev = table("[dev-dependencies]");
    assert_eq!(dev, ["thiserror", "axum"], "{manifest}");

    let out = tests::cargo()
        .args(["test", "--offline", "--locked", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", tests::target_dir())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo test in tests/one-dependency failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 passed"), "{stdout}");
    // The doctests: one summary line of the README's and the guide's blocks, every one run.
    let doc = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test result: ok. "))
        .filter_map(|l| l.split(' ').next()?.parse::<usize>().ok())
        .max()
        .unwrap_or(0);
    assert!(
        doc >= 45,
        "the README's and the guide's examples ran: {stdout}"
    );
}
