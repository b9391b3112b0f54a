//! The test kit shared by this crate's test files: what more than one of them needs.

use std::path::{Path, PathBuf};

/// This build's target directory: `CARGO_TARGET_DIR`, or the one holding the running test
/// binary (`<target>/debug/deps/<binary>`).
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .expect("<target>/debug/deps/<binary>")
        .to_path_buf()
}

/// The workspace's root directory.
pub fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is in the workspace")
}

/// The cargo running the tests (`CARGO`), else the one on the path.
pub fn cargo() -> std::process::Command {
    std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}
