#!/usr/bin/env bash
# Benchmarks mcp-runtime against rmcp 3.x and a bare axum handler, then writes
# docs/benchmarks.md (issues 7 and 24). On this 2-core machine a run from a clean checkout
# takes about 25 minutes (3 to 5 of them building: the servers in release, then the compile
# stage's dependencies in debug and release, beside the profile stage).
#
#   scripts/bench.sh [STAGE...]     stages: build http features scaleout queue criterion profile compile
#                                   report
#                                   (default: all of them, in that order)
#
#   build      release build of bench-mcp-runtime, bench-rmcp, bench-axum, bench-profile,
#              bench-features, and the example service `catalog`
#   http       each server pinned to core 1, wrk pinned to core 0 (the servers: the minimal
#              bench-mcp-runtime, rmcp, the bare axum ceiling, and the example `catalog` as it
#              ships): tools/call at 32
#              connections (3 alternating rounds), 1-connection latency (12 alternating
#              rounds of 1 s: this VM's tail comes in bursts of seconds), success checks,
#              server CPU per request, peak RSS; then, in rounds of their own, 2026-07-28
#              resources/read (a URI template) and prompts/get of mcp-runtime and rmcp, beside
#              mcp-runtime's 2026-07-28 tools/call again (the reference within those rounds)
#              JSON-RPC `/rpc` of mcp-runtime, the example and the axum ceiling is in the same rounds
#   example    the example `catalog` as it ships, on its newer surface (2026-07-28, in rounds of
#              their own with its tools/call as the reference): tools/call and tools/list with
#              and without the request's language (`_meta` acceptLanguage `uk`), resources/read of
#              a static resource, a URI template and an MCP App's page, skills/get in en and uk
#   features   the marginal cost of each feature (bench-features: the minimal server plus one
#              feature): server CPU per request under load, instructions per request under
#              callgrind; starts a private redis-server for the Redis-backed ones
#   scaleout   three `catalog` instances on one Redis behind HAProxy against one instance
#   queue      the durable task queue: tasks accepted and completed per second by one `catalog`
#              on Redis, beside redis-benchmark's XADD; Redis commands per accepted task
#   criterion  the in-process benches (benches/benches/inprocess.rs), pinned to core 1
#   profile    callgrind over bench-profile (mcp-runtime's in-process tools/call,
#              resources/read and prompts/get) and over the
#              mcp-runtime, axum and catalog servers; when the compile stage follows, its (untimed)
#              dependency builds run meanwhile, since callgrind counts instructions, which a
#              busy machine does not change
#   compile    generated 200-method crates under target/bench-compile/: #[rpc_method] vs
#              plain fns, rmcp #[tool] vs plain methods; debug and release build times
#   report     docs/benchmarks.md from the results (target/bench-results/)
#
# Environment: BENCH_DURATION (s per load run, default 10), BENCH_ROUNDS (default 3),
# BENCH_LAT_ROUNDS (1-connection rounds, default 12), BENCH_LAT_DURATION (s per 1-connection
# run, default 1), BENCH_FEATURE_DURATION (s per feature
# load run, default 4; twice that under callgrind), BENCH_FEATURES (the features stage's
# features, space-separated; default all), BENCH_COMPILE_REPS (builds per crate and
# profile, best kept; default 1).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
OUT="$TARGET/bench-results"
BIN="$TARGET/release"
DURATION="${BENCH_DURATION:-10}"
ROUNDS="${BENCH_ROUNDS:-3}"
# Latency at one connection: many short alternating rounds, so that a burst of the host's
# noise (which on this VM moves a p99 from ~120 µs to 300-1000 µs for seconds at a time, the
# bare axum ceiling's as much as ours) lands on every server alike; the report shows each
# server's best and median round.
LAT_ROUNDS="${BENCH_LAT_ROUNDS:-12}"
LAT_DURATION="${BENCH_LAT_DURATION:-1}"
COMPILE_REPS="${BENCH_COMPILE_REPS:-1}"
METHODS=200
SERVER_CPU=1
CLIENT_CPU=0
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(build http example features scaleout queue criterion profile compile report)
mkdir -p "$OUT"
START=$SECONDS

log() { printf '==> %s\n' "$*" >&2; }
die() {
    printf 'bench.sh: %s\n' "$*" >&2
    exit 1
}

# One line of JSON appended to a results file.
record() { printf '%s\n' "$2" >>"$OUT/$1"; }

# Seconds spent per stage, for the report.
stage_time() { record stages.jsonl "{\"stage\":\"$1\",\"seconds\":$2}"; }

need() {
    command -v "$1" >/dev/null 2>&1 && return
    case "$1" in
        wrk) log "installing wrk" && { apt-get update -qq && apt-get install -y -qq wrk; } >&2 ;;
        *) die "$1 is required" ;;
    esac
}

# --------------------------------------------------------------------------------------------
# build

stage_build() {
    need cargo
    # What was built: the commit, and whether the checkout had changes (the report says so).
    local commit clean=false
    commit="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
    [ -z "$(git -C "$ROOT" status --porcelain 2>/dev/null || echo x)" ] && clean=true
    printf '{"commit": "%s", "clean": %s}\n' "$commit" "$clean" >"$OUT/source.json"
    log "building the servers (release)"
    cargo build --release -p benches --features rmcp,criterion --bins
    # The example apart: built with the benches, its features (Redis, webhooks, JWT) would be
    # compiled into the minimal server too.
    log "building the example service (release)"
    cargo build --release -p examples --bin catalog
}

# --------------------------------------------------------------------------------------------
# http

META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}'
# resources/read of the bench://items/{id} template and prompts/get of review (2026-07-28 only);
# the bodies are benches/src/lib.rs's MODERN_READ_BODY and MODERN_PROMPT_BODY.
READ_BODY='{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"bench://items/7",'"$META"'}}'
PROMPT_BODY='{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"review","arguments":{"topic":"benchmarks"},'"$META"'}}'

# The servers: the minimal bench server, rmcp, the bare axum ceiling, and the example service
# `catalog` as it ships (its tracing subscriber at `info`, logging to a file, its listeners on
# every event kind, translations, the protected group), which answers `Catalog.ping` where
# the others answer `add`.
# `axum-typed` is the stricter ceiling of issue 38: the bare handler with a typed wire model
# (serde derive in and out) instead of a `serde_json::Value`.
SERVERS=(mcp-runtime rmcp axum axum-typed catalog)
declare -A TOOL=([mcp-runtime]=add [rmcp]=add [axum]=add [axum-typed]=add [catalog]=Catalog.ping)
declare -A ARGS=([mcp-runtime]='{"a":2,"b":3}' [rmcp]='{"a":2,"b":3}' [axum]='{"a":2,"b":3}'
    [axum-typed]='{"a":2,"b":3}' [catalog]='{"who":"x"}')
declare -A RESULT=([mcp-runtime]=5 [rmcp]=5 [axum]=5 [axum-typed]=5 [catalog]='"pong, x"')

# A variant is SERVER/ERA (tools/call; ERA `rpc` is a plain JSON-RPC call at /rpc) or
# SERVER/ERA/OP.
VARIANTS=(mcp-runtime/handshake mcp-runtime/modern rmcp/handshake rmcp/modern axum/handshake
    axum/modern axum-typed/handshake axum-typed/modern catalog/handshake catalog/modern
    mcp-runtime/rpc axum/rpc axum-typed/rpc catalog/rpc)
# Their own rounds, with mcp-runtime's 2026-07-28 tools/call again as the reference (the bare
# axum handler answers tools/call only).
OTHER_VARIANTS=(mcp-runtime/modern/call mcp-runtime/modern/read mcp-runtime/modern/prompt
    rmcp/modern/read rmcp/modern/prompt)
declare -A OP_METHOD=([call]=tools/call [read]=resources/read [prompt]=prompts/get
    [calluk]=tools/call [list]=tools/list [listuk]=tools/list [hours]=resources/read
    [product]=resources/read [card]=resources/read [skill]=skills/get [skilluk]=skills/get)
declare -A PORT=([mcp-runtime]=39101 [rmcp]=39102 [axum]=39103 [catalog]=39104 [axum-typed]=39105)
declare -A MCP_PATH=([mcp-runtime]=/mcp/bench/v1 [rmcp]=/mcp [axum]=/mcp [axum-typed]=/mcp
    [catalog]=/mcp/mcp/v1)
declare -A RPC_PATH=([mcp-runtime]=/rpc/bench/v1 [axum]=/rpc [axum-typed]=/rpc
    [catalog]=/rpc/mcp/v1)
declare -A PID=()
# Where check_sample and run_rounds record (the example stage has its own file).
RESULTS=http.jsonl

# The example's newer surface (stage `example`): catalog/modern/OP, OP one of these, beside
# catalog/modern/call (its tools/call, as in the http stage) as the reference. `uk` is the
# request's language in `_meta` (SEP-2792), which the example has translations for.
EX_VARIANTS=(catalog/modern/call catalog/modern/calluk catalog/modern/list catalog/modern/listuk
    catalog/modern/hours catalog/modern/product catalog/modern/card catalog/modern/skill
    catalog/modern/skilluk)
META_UK="${META%\}},\"io.modelcontextprotocol/acceptLanguage\":\"uk\"}"
ex_read() { echo '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"'"$1"'",'"$META"'}}'; }
ex_skill() { echo '{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://catalog/shopping/SKILL.md",'"$1"'}}'; }
declare -A EX_BODY=(
    [calluk]='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.ping","arguments":{"who":"x"},'"$META_UK"'}}'
    [list]='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{'"$META"'}}'
    [listuk]='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{'"$META_UK"'}}'
    [hours]="$(ex_read catalog://hours)"
    [product]="$(ex_read catalog://products/2)"
    [card]="$(ex_read ui://catalog/product-card)"
    [skill]="$(ex_skill "$META")"
    [skilluk]="$(ex_skill "$META_UK")")
# Mcp-Name of those that have one (tools/list and skills/get have none).
declare -A EX_NAME=([calluk]=Catalog.ping [hours]=catalog://hours [product]=catalog://products/2
    [card]=ui://catalog/product-card)
declare -A EX_EXPECTED=(
    [calluk]='"structuredContent":{"result":"pong, x"},"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"catalog","version":"0.1.0"},"io.modelcontextprotocol/contentLanguage":"uk"}'
    [list]='"name":"Catalog.get","title":"Get a product"'
    [listuk]='"name":"Catalog.get","title":"Товар за ідентифікатором"'
    [hours]='closed on Sunday.'
    [product]='{\"id\":2,\"name\":\"Blue mug\"}'
    [card]='<title>Product card</title>'
    [skill]='"description":"Help a customer find'
    [skilluk]='"description":"Допомогти покупцеві')

server_of() { echo "${1%%/*}"; }
era_of() {
    local r="${1#*/}"
    echo "${r%%/*}"
}
op_of() {
    local r="${1#*/}"
    if [[ "$r" == */* ]]; then echo "${r#*/}"; else echo call; fi
}
bin_of() {
    if [ "$1" = catalog ]; then echo "$BIN/catalog"; else echo "$BIN/bench-$1"; fi
}

# body_of VARIANT: the request body.
body_of() {
    local s era op
    s="$(server_of "$1")"
    era="$(era_of "$1")"
    op="$(op_of "$1")"
    if [ -n "${EX_BODY[$op]:-}" ]; then
        echo "${EX_BODY[$op]}"
        return
    fi
    case "$era/$op" in
        rpc/*) echo '{"jsonrpc":"2.0","id":1,"method":"'"${TOOL[$s]}"'","params":'"${ARGS[$s]}"'}' ;;
        handshake/*) echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"'"${TOOL[$s]}"'","arguments":'"${ARGS[$s]}"'}}' ;;
        modern/read) echo "$READ_BODY" ;;
        modern/prompt) echo "$PROMPT_BODY" ;;
        *) echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"'"${TOOL[$s]}"'","arguments":'"${ARGS[$s]}"','"$META"'}}' ;;
    esac
}

# name_of VARIANT: the 2026-07-28 Mcp-Name (params.name, or params.uri for resources/read).
name_of() {
    local op
    op="$(op_of "$1")"
    if [ -n "${EX_BODY[$op]:-}" ]; then
        echo "${EX_NAME[$op]:-}"
        return
    fi
    case "$op" in
        read) echo bench://items/7 ;;
        prompt) echo review ;;
        *) echo "${TOOL[$(server_of "$1")]}" ;;
    esac
}

expected_of() {
    local s
    s="$(server_of "$1")"
    if [ -n "${EX_EXPECTED[$(op_of "$1")]:-}" ]; then
        echo "${EX_EXPECTED[$(op_of "$1")]}"
        return
    fi
    case "$(era_of "$1")/$(op_of "$1")" in
        rpc/*) echo '"result":'"${RESULT[$s]}" ;;
        */read) echo '{\"id\":7,\"name\":\"widget\"}' ;;
        */prompt) echo '"text":"Write a short review of benchmarks."' ;;
        *) echo '"structuredContent":{"result":'"${RESULT[$s]}"'}' ;;
    esac
}

url_of() {
    local s
    s="$(server_of "$1")"
    if [ "$(era_of "$1")" = rpc ]; then
        echo "http://127.0.0.1:${PORT[$s]}${RPC_PATH[$s]}"
    else
        echo "http://127.0.0.1:${PORT[$s]}${MCP_PATH[$s]}"
    fi
}

# curl arguments of a variant's request.
curl_args() {
    local era op
    era="$(era_of "$1")"
    op="$(op_of "$1")"
    printf '%s\n' -H 'Content-Type: application/json'
    case "$era" in
        modern)
            printf '%s\n' -H 'Accept: application/json, text/event-stream' \
                -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: ${OP_METHOD[$op]}"
            [ -z "$(name_of "$1")" ] || printf '%s\n' -H "Mcp-Name: $(name_of "$1")"
            ;;
        handshake)
            printf '%s\n' -H 'Accept: application/json, text/event-stream' \
                -H 'MCP-Protocol-Version: 2025-11-25'
            ;;
    esac
    printf '%s\n' --data-binary "$(body_of "$1")"
}

# lua_script FILE BODY MODE EXPECTED [HEADER VALUE]...: a wrk script posting BODY with the
# headers; with MODE "verify", it checks every response body for EXPECTED too.
lua_script() {
    local file="$1" body="$2" mode="$3" expected="$4"
    shift 4
    mkdir -p "$(dirname "$file")"
    {
        echo 'wrk.method = "POST"'
        echo 'wrk.headers["Content-Type"] = "application/json"'
        echo "wrk.body = [==[$body]==]"
        while [ $# -ge 2 ]; do
            echo "wrk.headers[\"$1\"] = [==[$2]==]"
            shift 2
        done
        cat <<'LUA'
local threads = {}
function setup(thread) table.insert(threads, thread) end
LUA
        # A body with `__N__` gets a number of its own per request (a lock key per call). Runs
        # start from a number of their own (the second of the run): a run's last calls, cut off
        # when its server is stopped, leave their Redis locks to expire, and a later run
        # counting from 0 again would meet them.
        if [[ "$body" == *__N__* ]]; then
            cat <<'LUA'
local n = (os.time() % 100000) * 1000000
function request()
    n = n + 1
    return wrk.format(nil, nil, nil, (string.gsub(wrk.body, "__N__", tostring(n))))
end
LUA
        fi
        lua_results "$mode" "$expected"
    } >"$file"
}

# The end of a wrk Lua script (its threads gathered in `threads`): with "verify", each response
# checked (200, and `expected` in the body); then the RESULT line the stages read.
lua_results() {
    local mode="$1" expected="$2"
    if [ "$mode" = verify ]; then
        cat <<LUA
local expected = [==[$expected]==]
function init(args) checked = 0; bad = 0 end
function response(status, headers, body)
    checked = checked + 1
    if status ~= 200 or not string.find(body, expected, 1, true) then bad = bad + 1 end
end
LUA
    fi
    cat <<'LUA'
function done(summary, latency, requests)
    local checked, bad = 0, 0
    for _, t in ipairs(threads) do
        checked = checked + (t:get("checked") or 0)
        bad = bad + (t:get("bad") or 0)
    end
    local e = summary.errors
    io.write(string.format(
        'RESULT {"requests":%d,"duration_us":%d,"non2xx":%d,"socket_errors":%d,' ..
        '"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%d,"max_us":%d,"checked":%d,"bad":%d}\n',
        summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
        latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean,
        latency.max, checked, bad))
end
LUA
}

# The wrk Lua script of a variant; with "verify", it checks every response body too.
lua_of() {
    local v="$1" mode="${2:-}" era op file headers=()
    era="$(era_of "$v")"
    op="$(op_of "$v")"
    file="$OUT/lua/${v//\//-}${mode:+-$mode}.lua"
    case "$era" in
        modern)
            headers=(Accept 'application/json, text/event-stream' MCP-Protocol-Version 2026-07-28
                Mcp-Method "${OP_METHOD[$op]}")
            [ -z "$(name_of "$v")" ] || headers+=(Mcp-Name "$(name_of "$v")")
            ;;
        handshake)
            headers=(Accept 'application/json, text/event-stream' MCP-Protocol-Version 2025-11-25)
            ;;
    esac
    lua_script "$file" "$(body_of "$v")" "$mode" "$(expected_of "$v")" "${headers[@]}"
    echo "$file"
}

# utime + stime of a process, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

start_servers() {
    local s
    for s in "${SERVERS[@]}"; do
        # The example as it ships: its own default log level (`info`), logging to a file.
        env -u RUST_LOG taskset -c "$SERVER_CPU" "$(bin_of "$s")" --listen "127.0.0.1:${PORT[$s]}" \
            2>>"$OUT/server-$s.log" &
        PID[$s]=$!
    done
    for s in "${SERVERS[@]}"; do
        local i
        for i in $(seq 1 100); do
            curl -s -o /dev/null "http://127.0.0.1:${PORT[$s]}/" && break
            kill -0 "${PID[$s]}" 2>/dev/null || die "$s exited (see $OUT/server-$s.log)"
            sleep 0.1
        done
    done
}

stop_servers() {
    local s
    for s in "${!PID[@]}"; do
        kill "${PID[$s]}" 2>/dev/null || true
        wait "${PID[$s]}" 2>/dev/null || true
    done
    PID=()
}

# Runs wrk for a variant; prints the RESULT JSON with the server CPU per request added.
run_wrk() {
    local v="$1" conns="$2" secs="$3" mode="${4:-}" server script before after line
    server="$(server_of "$v")"
    script="$(lua_of "$v" "$mode")"
    before="$(cpu_ticks "${PID[$server]}")"
    line="$(taskset -c "$CLIENT_CPU" wrk -t1 -c"$conns" -d"${secs}s" -s "$script" "$(url_of "$v")" |
        sed -n 's/^RESULT //p')"
    after="$(cpu_ticks "${PID[$server]}")"
    [ -n "$line" ] || die "wrk printed no result for $v"
    echo "${line%\}},\"server_cpu_ticks\":$((after - before)),\"clk_tck\":$(getconf CLK_TCK)}"
}

# check_sample VARIANT: one request with curl, which must answer 200 with the expected body.
check_sample() {
    local v="$1" sample args
    mapfile -t args < <(curl_args "$v")
    sample="$(curl -s -w '\n%{http_code}' "$(url_of "$v")" "${args[@]}")"
    [[ "$sample" == *"$(expected_of "$v")"* && "${sample##*$'\n'}" == 200 ]] ||
        die "$v answered: $sample"
    record "$RESULTS" "{\"kind\":\"sample\",\"variant\":\"$v\",\"body\":$(printf '%s' "${sample%$'\n'*}" | jq -Rs .)}"
}

# run_rounds KIND CONNECTIONS SECONDS VARIANT...: ROUNDS rounds in which the variants run one
# after another, the order rotated between rounds.
run_rounds() {
    local kind="$1" conns="$2" secs="$3" r i v rounds="$ROUNDS"
    shift 3
    local vs=("$@") n=$#
    [ "$kind" = latency ] && rounds="$LAT_ROUNDS"
    for r in $(seq 1 "$rounds"); do
        for i in $(seq 0 $((n - 1))); do
            v="${vs[$(((i + r - 1) % n))]}"
            log "round $r/$rounds: $v, $conns connection$([ "$conns" = 1 ] || echo s), ${secs}s"
            record "$RESULTS" "{\"kind\":\"$kind\",\"round\":$r,\"variant\":\"$v\",$(run_wrk "$v" "$conns" "$secs" | cut -c2-)"
        done
    done
}

# record_rss KIND: each server's peak and current RSS.
record_rss() {
    local s st text_kb js_kb
    for s in "${SERVERS[@]}"; do
        # Peak and current RSS, split into anonymous (heap, stacks) and file-backed (the
        # binary's code and read-only data pages), plus the size of the code itself.
        st="/proc/${PID[$s]}/status"
        kb() { awk -v k="$1:" '$1 == k {print $2}' "$st"; }
        text_kb=$(size -A "$(bin_of "$s")" | awk '$1 == ".text" {printf "%d", $2 / 1024}')
        # The code of the JSON Schema validator (mcp-runtime only), by symbol sizes.
        js_kb=$(nm -C --print-size -t d "$(bin_of "$s")" 2>/dev/null |
            awk '$3 ~ /^[tTwW]$/ && ($4 ~ /^<?jsonschema::/) {n += $2} END {printf "%d", n / 1024}')
        record "$RESULTS" "{\"kind\":\"$1\",\"server\":\"$s\",\"vmhwm_kb\":$(kb VmHWM),\"vmrss_kb\":$(kb VmRSS),\"anon_kb\":$(kb RssAnon),\"file_kb\":$(kb RssFile),\"text_kb\":${text_kb:-0},\"jsonschema_text_kb\":${js_kb:-0}}"
    done
}

stage_http() {
    need wrk
    need curl
    need taskset
    [ -x "$BIN/bench-rmcp" ] && [ -x "$BIN/catalog" ] || die "run the build stage first"
    rm -f "$OUT/http.jsonl" "$OUT"/server-*.log
    trap stop_servers EXIT
    start_servers
    local v s
    for s in "${SERVERS[@]}"; do
        record http.jsonl "{\"kind\":\"rss_start\",\"server\":\"$s\",\"vmrss_kb\":$(awk '/^VmRSS/ {print $2}' "/proc/${PID[$s]}/status"),\"file_kb\":$(awk '/^RssFile/ {print $2}' "/proc/${PID[$s]}/status")}"
    done
    # Every variant must answer the expected result before it is measured (tools/call first:
    # rss_first is what those calls read in).
    for v in "${VARIANTS[@]}"; do check_sample "$v"; done
    # What the first calls (one per era) read in: code pages, mostly.
    for s in "${SERVERS[@]}"; do
        record http.jsonl "{\"kind\":\"rss_first\",\"server\":\"$s\",\"vmrss_kb\":$(awk '/^VmRSS/ {print $2}' "/proc/${PID[$s]}/status"),\"file_kb\":$(awk '/^RssFile/ {print $2}' "/proc/${PID[$s]}/status")}"
    done
    for v in "${OTHER_VARIANTS[@]:1}"; do check_sample "$v"; done
    log "warm-up and full response check (2 s each, every body checked)"
    for v in "${VARIANTS[@]}" "${OTHER_VARIANTS[@]:1}"; do
        record http.jsonl "{\"kind\":\"verify\",\"variant\":\"$v\",$(run_wrk "$v" 32 2 verify | cut -c2-)"
    done
    # tools/call as before this stage measured anything else, then the other requests.
    run_rounds load 32 "$DURATION" "${VARIANTS[@]}"
    run_rounds latency 1 "$LAT_DURATION" "${VARIANTS[@]}"
    # The memory figures judged are those of the tools/call load, as before.
    record_rss rss
    run_rounds load 32 "$DURATION" "${OTHER_VARIANTS[@]}"
    run_rounds latency 1 "$LAT_DURATION" "${OTHER_VARIANTS[@]}"
    record_rss rss_other
    stop_servers
    trap - EXIT
}

# --------------------------------------------------------------------------------------------
# example

# The example as it ships, alone on its core, on what the http stage does not ask it: every
# variant checked, then load and 1-connection rounds with its tools/call in each.
stage_example() {
    need wrk
    need curl
    need taskset
    [ -x "$BIN/catalog" ] || die "run the build stage first"
    local SERVERS=(catalog) RESULTS=example.jsonl v
    rm -f "$OUT/example.jsonl"
    trap stop_servers EXIT
    start_servers
    for v in "${EX_VARIANTS[@]}"; do check_sample "$v"; done
    log "example: warm-up and full response check (2 s each, every body checked)"
    for v in "${EX_VARIANTS[@]}"; do
        record "$RESULTS" "{\"kind\":\"verify\",\"variant\":\"$v\",$(run_wrk "$v" 32 2 verify | cut -c2-)"
    done
    run_rounds load 32 "$DURATION" "${EX_VARIANTS[@]}"
    run_rounds latency 1 "$LAT_DURATION" "${EX_VARIANTS[@]}"
    record_rss rss
    stop_servers
    trap - EXIT
}

# --------------------------------------------------------------------------------------------
# criterion

stage_criterion() {
    log "building the criterion benches"
    local exe
    exe="$(cargo bench -p benches --features rmcp,criterion --bench inprocess --no-run \
        --message-format=json 2>/dev/null |
        jq -r 'select(.reason == "compiler-artifact" and .executable != null and .target.name == "inprocess") | .executable' |
        tail -1)"
    [ -x "$exe" ] || die "no criterion bench executable"
    log "running the criterion benches on core $SERVER_CPU"
    rm -rf "$OUT/criterion"
    # A private Redis for the Redis limiter against a bare EVALSHA (`rate_limit/redis_*`).
    start_redis "$REDIS_PORT"
    BENCH_REDIS_URL="redis://127.0.0.1:$REDIS_PORT" CRITERION_HOME="$OUT/criterion" \
        taskset -c "$SERVER_CPU" "$exe" --bench >"$OUT/criterion.txt"
    stop_redis
    # The same comparisons with bench-profile, the variants alternating within each round (criterion
    # runs them one after another, so a change in the machine's load lands between them).
    log "in process: 5 alternating rounds (tools/call paths, resources/read, prompts/get, tools/list 10 vs 10 000 tools)"
    rm -f "$OUT/alternating.jsonl"
    local r m k
    for r in 1 2 3 4 5; do
        for m in call:300000 modern:200000 read:200000 prompt:200000 jsonrpc:500000 baseline:300000 \
            list:10:10:1000000 \
            list:10000:10:1000000 list:10:50:1000000 list:10000:50:1000000; do
            k="${m##*:}"
            record alternating.jsonl "{\"round\":$r,$(taskset -c "$SERVER_CPU" "$BIN/bench-profile" \
                "${m%:*}" "$k" 2>/dev/null | sed -n 's/^RESULT {//p')"
        done
    done
}

# --------------------------------------------------------------------------------------------
# compile

COMPILE_DIR="$TARGET/bench-compile"

# gen_crate FRAMEWORK VARIANT PROFILE: writes $COMPILE_DIR/PROFILE/FRAMEWORK-VARIANT (a binary crate).
gen_crate() {
    local fw="$1" variant="$2" profile="$3" dir="$COMPILE_DIR/$3/$1-$2" i
    mkdir -p "$dir/src"
    {
        cat <<EOF
[package]
name = "bc-$fw-$variant"
version = "0.1.0"
edition = "2024"
publish = false

# Its own workspace: built with a target dir of its own, dependencies prebuilt.
[workspace]

[profile.release]
debug = "line-tables-only"

# A touched source must be compiled again, not replayed from the incremental cache.
[profile.dev]
incremental = false

# Only the crate itself is timed: its dependencies are built once, without debug info.
[profile.dev.package."*"]
debug = false

# All four crates of a profile declare the same dependencies (each uses its own framework's),
# so one dependency build per profile serves them all; an unused dependency costs the crate
# nothing. The release profile is the workspace's without its LTO: a user's crate as cargo
# builds it by default (whole-program LTO would time the link of every dependency again with
# each crate).
[dependencies]
serde = { version = "1", features = ["derive"] }
serde_json = { version = "1", features = ["raw_value", "preserve_order"] }
tokio = { version = "1", features = ["rt-multi-thread", "macros", "net", "time", "sync", "signal", "io-util", "io-std"] }
mcp-runtime = { path = "$ROOT/mcp-runtime" }
schemars = { version = "1.2", default-features = false, features = ["derive", "std", "preserve_order"] }
axum = { version = "0.8", default-features = false, features = ["http1", "tokio", "json", "query"] }
rmcp = { version = "3.11", default-features = false, features = ["server", "macros", "transport-streamable-http-server"] }
EOF
    } >"$dir/Cargo.toml"
    # The same versions as the workspace.
    [ -f "$dir/Cargo.lock" ] || cp "$ROOT/Cargo.lock" "$dir/Cargo.lock"
    local main="$dir/src/main.rs"
    case "$fw-$variant" in
        rt-macro)
            {
                # shellcheck disable=SC2016
                echo '//! Generated by scripts/bench.sh: 200 `#[rpc_method]` tools.'
                echo 'use mcp_runtime::prelude::*;'
                echo 'pub const G: ApiGroup = ApiGroup::mcp("gen");'
                for i in $(seq 0 $((METHODS - 1))); do
                    cat <<EOF
/// Adds two integers (tool $i).
#[rpc_method(name = "add_$i", groups = [G])]
pub fn add_$i(
    /// The first addend
    a: i64,
    /// The second addend
    b: i64,
) -> i64 {
    a + b + $i
}
EOF
                done
                cat <<'EOF'
#[tokio::main]
async fn main() {
    let server = Server::builder().build().expect("valid catalog");
    println!("{}", server.registry().catalog("gen", 1).map_or(0, |c| c.methods().len()));
    if std::env::args().len() > 1 {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        server.serve_listener(l, mcp_runtime::shutdown_signal()).await.unwrap();
    }
}
EOF
            } >"$main.new"
            ;;
        rt-plain)
            {
                echo '//! Generated by scripts/bench.sh: the same 200 functions without the macro.'
                echo 'use mcp_runtime::prelude::*;'
                for i in $(seq 0 $((METHODS - 1))); do
                    cat <<EOF
/// Adds two integers (tool $i).
pub fn add_$i(a: i64, b: i64) -> i64 {
    a + b + $i
}
EOF
                done
                printf 'pub static FNS: [fn(i64, i64) -> i64; %d] = [' "$METHODS"
                for i in $(seq 0 $((METHODS - 1))); do printf 'add_%d, ' "$i"; done
                echo '];'
                cat <<'EOF'
#[tokio::main]
async fn main() {
    let server = Server::builder().build().expect("valid catalog");
    let fns = std::hint::black_box(&FNS);
    println!("{}", fns.iter().map(|f| f(2, 3)).sum::<i64>());
    if std::env::args().len() > 1 {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        server.serve_listener(l, mcp_runtime::shutdown_signal()).await.unwrap();
    }
}
EOF
            } >"$main.new"
            ;;
        rmcp-macro | rmcp-plain)
            {
                echo "//! Generated by scripts/bench.sh: rmcp, $variant methods."
                cat <<'EOF'
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServerHandler;
EOF
                if [ "$variant" = macro ]; then
                    cat <<'EOF'
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The result of every tool.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AddResult {
    /// The sum
    pub result: i64,
}
EOF
                    for i in $(seq 0 $((METHODS - 1))); do
                        cat <<EOF
/// The arguments of add_$i.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Add${i}Args {
    /// The first addend
    pub a: i64,
    /// The second addend
    pub b: i64,
}
EOF
                    done
                    cat <<'EOF'
#[derive(Clone)]
pub struct Server {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Server {
    pub fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }
EOF
                    for i in $(seq 0 $((METHODS - 1))); do
                        cat <<EOF
    /// Adds two integers (tool $i).
    #[tool(description = "Adds two integers (tool $i).")]
    async fn add_$i(&self, Parameters(Add${i}Args { a, b }): Parameters<Add${i}Args>) -> Json<AddResult> {
        Json(AddResult { result: a + b + $i })
    }
EOF
                    done
                    cat <<'EOF'
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn work() -> usize {
    Server::new().tool_router.list_all().len()
}
EOF
                else
                    cat <<'EOF'
#[derive(Clone)]
pub struct Server;

impl Server {
    pub fn new() -> Self {
        Self
    }
EOF
                    for i in $(seq 0 $((METHODS - 1))); do
                        cat <<EOF
    /// Adds two integers (tool $i).
    pub fn add_$i(&self, a: i64, b: i64) -> i64 {
        a + b + $i
    }
EOF
                    done
                    echo '}'
                    printf 'pub static FNS: [fn(&Server, i64, i64) -> i64; %d] = [' "$METHODS"
                    for i in $(seq 0 $((METHODS - 1))); do printf 'Server::add_%d, ' "$i"; done
                    echo '];'
                    cat <<'EOF'

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn work() -> usize {
    let s = Server::new();
    std::hint::black_box(&FNS).iter().map(|f| f(&s, 2, 3)).sum::<i64>() as usize
}
EOF
                fi
                cat <<'EOF'

#[tokio::main]
async fn main() {
    println!("{}", work());
    if std::env::args().len() > 1 {
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true);
        let service: StreamableHttpService<Server, LocalSessionManager> =
            StreamableHttpService::new(|| Ok(Server::new()), Default::default(), config);
        let router = axum::Router::new().nest_service("/mcp", service);
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        axum::serve(l, router).await.unwrap();
    }
}
EOF
            } >"$main.new"
            ;;
    esac
    # Only rewrite when changed, so a rerun keeps the crate's own build fingerprint meaningful.
    if cmp -s "$main.new" "$main"; then rm "$main.new"; else mv "$main.new" "$main"; fi
}

# Times `cargo build` of one generated crate alone; prints "wall cpu".
time_build() {
    local dir="$1" profile="$2" flags=() t0 t1 cpu
    [ "$profile" = release ] && flags=(--release)
    # The crate's own artifacts are removed and it is built again, timed (its dependencies are
    # up to date: see prebuild).
    (cd "$dir" && CARGO_TARGET_DIR="$(target_of "$profile")" cargo clean -q "${flags[@]}" \
        -p "bc-$(basename "$dir")") >&2
    t0=$(date +%s.%N)
    cpu=$(cd "$dir" && CARGO_TARGET_DIR="$(target_of "$profile")" /usr/bin/time -f '%U %S' \
        cargo build -q "${flags[@]}" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}')
    t1=$(date +%s.%N)
    # awk, not bc: bc writes ".81" for 0.81, which is not JSON.
    awk -v a="$t0" -v b="$t1" -v c="$cpu" 'BEGIN { printf "%.3f %s\n", b - a, c }'
}

# target_of PROFILE: each profile has a target dir of its own: the build stage's artifacts are
# built with the workspace's LTO profile, which the generated crates do not use. (Building the
# debug dependencies beside the build stage was tried: on 2 cores it made the run 48 s longer.)
target_of() {
    echo "$COMPILE_DIR/target-$1"
}

# gen_crates PROFILE: the four crates of a profile.
gen_crates() {
    local fw variant
    for fw in rt rmcp; do
        for variant in macro plain; do gen_crate "$fw" "$variant" "$1"; done
    done
}

# prebuild PROFILE: the dependencies every generated crate of PROFILE shares, built once
# (untimed) through the cheapest crate.
prebuild() {
    local flags=()
    [ "$1" = release ] && flags=(--release)
    (cd "$COMPILE_DIR/$1/rt-plain" && CARGO_TARGET_DIR="$(target_of "$1")" cargo build -q "${flags[@]}") >&2
}

# The generated crates and their dependencies, for both profiles.
prepare_compile() {
    local profile
    for profile in debug release; do
        gen_crates "$profile"
        prebuild "$profile"
    done
}

# prepare_compile in the background (see the profile stage); stage_compile waits for it.
PREPARE_PID=
start_prepare_compile() {
    log "building the compile stage's dependencies beside the profile stage (log: $OUT/prepare.log)"
    # Its own process group (set -m), so that a failing stage can stop the whole build.
    set -m
    prepare_compile >"$OUT/prepare.log" 2>&1 &
    PREPARE_PID=$!
    set +m
    trap 'kill -- -"$PREPARE_PID" 2>/dev/null || true' EXIT
}

stage_compile() {
    need awk
    local fw variant profile rep res
    if [ -n "$PREPARE_PID" ]; then
        log "waiting for the compile stage's dependency builds"
        wait "$PREPARE_PID" || die "building the compile stage's dependencies failed (see $OUT/prepare.log)"
        PREPARE_PID=
        trap - EXIT
    else
        prepare_compile
    fi
    rm -f "$OUT/compile.jsonl"
    for profile in debug release; do
        for fw in rt rmcp; do
            for rep in $(seq 1 "$COMPILE_REPS"); do
                for variant in macro plain; do
                    res="$(time_build "$COMPILE_DIR/$profile/$fw-$variant" "$profile")"
                    log "compile: $fw-$variant $profile #$rep: ${res% *} s wall, ${res#* } s CPU"
                    record compile.jsonl "{\"fw\":\"$fw\",\"variant\":\"$variant\",\"profile\":\"$profile\",\"rep\":$rep,\"methods\":$METHODS,\"wall_s\":${res% *},\"cpu_s\":${res#* }}"
                done
            done
        done
    done
}

# --------------------------------------------------------------------------------------------
# profile

stage_profile() {
    need valgrind
    need wrk
    [ -x "$BIN/bench-profile" ] || die "run the build stage first"
    local P="$OUT/profile" mode n=10000 f line
    rm -rf "$P" "$OUT/profile.jsonl"
    mkdir -p "$P"
    # In process: only the measured loop is counted (after a warm-up call), so setup drops out.
    for mode in call modern read prompt baseline list:10:50 list:10000:50 list:10:10 list:10000:10 startup; do
        # Per-call counts do not depend on N; the tools/list pages cost more under callgrind.
        case "$mode" in
            startup) f=1 ;;
            list:*) f=2000 ;;
            *) f=$n ;;
        esac
        log "callgrind: bench-profile $mode $f"
        line="$(valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured*' \
            --callgrind-out-file="$P/callgrind.${mode//:/-}.out" \
            "$BIN/bench-profile" "$mode" "$f" 2>"$P/valgrind.${mode//:/-}.log" |
            sed -n 's/^RESULT //p')"
        [ -n "$line" ] || die "bench-profile $mode printed no result"
        callgrind_annotate --inclusive=yes --tree=calling "$P/callgrind.${mode//:/-}.out" \
            >"$P/tree.${mode//:/-}.txt" 2>/dev/null
        record profile.jsonl "$line"
    done
    # Over HTTP: each server under callgrind, 10 s of 1-connection handshake-era tools/call.
    profile_server mcp-runtime 39110
    profile_server axum 39113
    # The example as it ships, beside the minimal server (the diff is in the report).
    profile_server catalog 39114
}

# profile_server SERVER PORT: the server under callgrind while wrk -c1 calls it for 10 s (its
# log, for the example, goes to valgrind's log file).
profile_server() {
    local s="$1" port="$2" P="$OUT/profile" vpid i line
    log "callgrind: $s under wrk -c1 (10 s)"
    env -u RUST_LOG valgrind --tool=callgrind --callgrind-out-file="$P/callgrind.http-$s.out" \
        "$(bin_of "$s")" --listen "127.0.0.1:$port" 2>"$P/valgrind.http-$s.log" &
    vpid=$!
    for i in $(seq 1 100); do
        curl -s -o /dev/null "http://127.0.0.1:$port/" && break
        sleep 0.2
    done
    # Only the requests are counted: the counters are zeroed once the server answers.
    callgrind_control -z "$vpid" >/dev/null || die "callgrind_control could not reach $s"
    line="$(taskset -c "$CLIENT_CPU" wrk -t1 -c1 -d10s -s "$(lua_of "$s/handshake")" \
        "http://127.0.0.1:$port${MCP_PATH[$s]}" | sed -n 's/^RESULT //p')"
    kill "$vpid"
    wait "$vpid" || true
    record profile.jsonl "{\"server\":\"$s\",\"http\":$line}"
    callgrind_annotate --inclusive=yes --tree=calling "$P/callgrind.http-$s.out" \
        >"$P/tree.http-$s.txt" 2>/dev/null
}

# --------------------------------------------------------------------------------------------
# features

FEATURE_PORT=39130
REDIS_PORT=39120
REDIS_PID=

start_redis() {
    need redis-server
    redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no \
        >"$OUT/redis-$1.log" 2>&1 &
    REDIS_PID=$!
    local i
    for i in $(seq 1 50); do
        redis-cli -p "$1" ping >/dev/null 2>&1 && return
        sleep 0.1
    done
    die "redis-server did not start on port $1"
}

stop_redis() {
    [ -n "$REDIS_PID" ] && { kill "$REDIS_PID" 2>/dev/null || true; wait "$REDIS_PID" 2>/dev/null || true; }
    REDIS_PID=
}

# feature_request FEATURE: sets F_URL, F_BODY, F_EXPECT and F_HEADERS (name value ...) from
# `bench-features FEATURE --describe`; with a session, opens it on the running server first.
feature_request() {
    local d
    d="$("$BIN/bench-features" "$1" --describe)"
    F_URL="http://127.0.0.1:$FEATURE_PORT$(jq -r .path <<<"$d")"
    F_BODY="$(jq -r .body <<<"$d")"
    F_EXPECT="$(jq -r .expect <<<"$d")"
    mapfile -t F_HEADERS < <(jq -r '.headers | to_entries[] | .key, .value' <<<"$d")
    F_HEADERS+=(Accept 'application/json, text/event-stream' MCP-Protocol-Version 2025-11-25)
    if [ "$(jq -r .session <<<"$d")" = true ]; then
        local sid
        sid="$(curl -s -D - -o /dev/null "$F_URL" -H 'Content-Type: application/json' \
            -H 'Accept: application/json, text/event-stream' \
            --data '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}' |
            awk -F': ' 'tolower($1) == "mcp-session-id" {print $2}' | tr -d '\r')"
        [ -n "$sid" ] || die "$1: initialize gave no session"
        F_HEADERS+=(Mcp-Session-Id "$sid")
        curl -s -o /dev/null "$F_URL" -H 'Content-Type: application/json' \
            -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-11-25' \
            -H "Mcp-Session-Id: $sid" --data '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    fi
}

# check_feature FEATURE: one request with curl must answer 200 with the expected text.
check_feature() {
    local args=() i out
    for ((i = 0; i < ${#F_HEADERS[@]}; i += 2)); do args+=(-H "${F_HEADERS[i]}: ${F_HEADERS[i + 1]}"); done
    out="$(curl -s -w '\n%{http_code}' "$F_URL" -H 'Content-Type: application/json' "${args[@]}" \
        --data-binary "${F_BODY//__N__/0}")"
    [[ "$out" == *"$F_EXPECT"* && "${out##*$'\n'}" == 200 ]] || die "feature $1 answered: $out"
}

wait_port() {
    local i
    for i in $(seq 1 200); do
        curl -s -o /dev/null "http://127.0.0.1:$1/" && return
        kill -0 "$2" 2>/dev/null || die "the server on port $1 exited"
        sleep 0.1
    done
    die "nothing answers on port $1"
}

FEATURES=(none tracing-info tracing-info-default tracing-warn listeners translations translations-lang auth
    cache-memory cache-redis lock-memory lock-redis rate-memory rate-redis dto20 result10k session progress
    metrics otlp)
# BENCH_FEATURES="none auth ..." measures only those (the report then shows only those rows).
[ -n "${BENCH_FEATURES:-}" ] && read -r -a FEATURES <<<"$BENCH_FEATURES"

# The marginal cost of each feature: the minimal server (`bench-features none`) with one feature
# added, pinned to core 1 like the http stage's servers. Server CPU per request under wrk -c32
# (ROUNDS rounds, features alternating), then instructions per request under callgrind (wrk -c1).
# Once the feature server `$2` of feature `$1` listens: its request described and checked by
# hand, and the wrk script that sends it ($script).
feature_ready() {
    wait_port "$FEATURE_PORT" "$2"
    feature_request "$1"
    check_feature "$1"
    script="$OUT/lua/feature-$1.lua"
    lua_script "$script" "$F_BODY" verify "$F_EXPECT" "${F_HEADERS[@]}"
}

stage_features() {
    need wrk
    need jq
    need valgrind
    [ -x "$BIN/bench-features" ] || die "run the build stage first"
    rm -f "$OUT/features.jsonl" "$OUT/features-server.log"
    start_redis "$REDIS_PORT"
    trap 'stop_redis; [ -n "${FPID:-}" ] && kill "$FPID" 2>/dev/null' EXIT
    local r f line before after script secs="${BENCH_FEATURE_DURATION:-4}" n=${#FEATURES[@]} i
    for r in $(seq 1 "$ROUNDS"); do
        for i in $(seq 0 $((n - 1))); do
            f="${FEATURES[$(((i + r - 1) % n))]}"
            log "features round $r/$ROUNDS: $f"
            taskset -c "$SERVER_CPU" "$BIN/bench-features" "$f" --listen "127.0.0.1:$FEATURE_PORT" \
                --redis "redis://127.0.0.1:$REDIS_PORT" 2>>"$OUT/features-server.log" &
            FPID=$!
            feature_ready "$f" "$FPID"
            # Warm-up (validators compiled, connections to Redis made), then the measured run.
            taskset -c "$CLIENT_CPU" wrk -t1 -c32 -d1s -s "$script" "$F_URL" >/dev/null
            before="$(cpu_ticks "$FPID")"
            line="$(taskset -c "$CLIENT_CPU" wrk -t1 -c32 -d"${secs}s" -s "$script" "$F_URL" |
                sed -n 's/^RESULT //p')"
            after="$(cpu_ticks "$FPID")"
            kill "$FPID"
            wait "$FPID" 2>/dev/null || true
            FPID=
            [ -n "$line" ] || die "wrk printed no result for feature $f"
            record features.jsonl "{\"kind\":\"load\",\"round\":$r,\"feature\":\"$f\",${line:1:-1},\"server_cpu_ticks\":$((after - before)),\"clk_tck\":$(getconf CLK_TCK)}"
        done
    done
    # Not under profile/: the profile stage starts that directory afresh.
    local P="$OUT/features" vpid
    rm -rf "$P"
    mkdir -p "$P"
    for f in "${FEATURES[@]}"; do
        log "features: callgrind of $f under wrk -c1 (${secs} s)"
        valgrind --tool=callgrind --callgrind-out-file="$P/callgrind.feature-$f.out" \
            "$BIN/bench-features" "$f" --listen "127.0.0.1:$FEATURE_PORT" \
            --redis "redis://127.0.0.1:$REDIS_PORT" 2>"$P/valgrind.feature-$f.log" &
        vpid=$!
        FPID=$vpid
        feature_ready "$f" "$vpid"
        # One untimed second first, so the first call's one-off work (a validator compiled,
        # Redis connected) is not counted; then the counters are zeroed.
        taskset -c "$CLIENT_CPU" wrk -t1 -c1 -d1s -s "$script" "$F_URL" >/dev/null
        callgrind_control -z "$vpid" >/dev/null || die "callgrind_control could not reach $f"
        line="$(taskset -c "$CLIENT_CPU" wrk -t1 -c1 -d"$((secs * 2))s" -s "$script" "$F_URL" |
            sed -n 's/^RESULT //p')"
        kill "$vpid"
        wait "$vpid" || true
        FPID=
        [ -n "$line" ] || die "wrk printed no result for feature $f under callgrind"
        record features.jsonl "{\"kind\":\"callgrind\",\"feature\":\"$f\",${line:1:-1}}"
    done
    stop_redis
    trap - EXIT
}

# --------------------------------------------------------------------------------------------
# scaleout

# Three `catalog` instances on one Redis behind HAProxy against one instance, on this machine's
# two cores (nothing pinned: the instances, Redis, HAProxy and wrk share both), 2026-07-28
# tools/call of Catalog.ping at 32 connections.
stage_scaleout() {
    need wrk
    need haproxy
    need redis-server
    [ -x "$BIN/catalog" ] || die "run the build stage first"
    rm -f "$OUT/scaleout.jsonl" "$OUT"/scaleout-*.log
    local rport=39121 hport=39150 ports=(39151 39152 39153) pids=() hpid= r p cfg="$OUT/haproxy.cfg"
    start_redis "$rport"
    trap 'stop_redis; kill ${pids[*]:-} ${hpid:-} 2>/dev/null || true' EXIT
    for p in "${ports[@]}"; do
        env -u RUST_LOG REDIS_URL="redis://127.0.0.1:$rport" CATALOG_REQUEST_STATE_KEY=bench-shared-key \
            "$BIN/catalog" --listen "127.0.0.1:$p" 2>>"$OUT/scaleout-catalog-$p.log" &
        pids+=($!)
        wait_port "$p" "$!"
    done
    # As the scale-out test configures it (examples/tests/scaleout.rs), health checks included.
    {
        printf 'global\n    maxconn 1024\n'
        printf 'defaults\n    mode http\n    timeout connect 1s\n    timeout client 15s\n    timeout server 15s\n'
        printf '    retries 3\n    option redispatch 1\n    retry-on conn-failure empty-response\n'
        printf 'frontend fe\n    bind 127.0.0.1:%s\n    default_backend three\n' "$hport"
        printf 'frontend fe1\n    bind 127.0.0.1:%s\n    default_backend one\n' "$((hport + 10))"
        printf 'backend three\n    balance roundrobin\n'
        for p in "${ports[@]}"; do printf '    server s%s 127.0.0.1:%s check inter 1s\n' "$p" "$p"; done
        printf 'backend one\n    server s 127.0.0.1:%s check inter 1s\n' "${ports[0]}"
    } >"$cfg"
    haproxy -f "$cfg" -db >"$OUT/scaleout-haproxy.log" 2>&1 &
    hpid=$!
    wait_port "$hport" "$hpid"
    local v=catalog/modern script
    script="$(lua_of "$v" verify)"
    declare -A SURL=([direct]="http://127.0.0.1:${ports[0]}/mcp/mcp/v1"
        [haproxy-1]="http://127.0.0.1:$((hport + 10))/mcp/mcp/v1"
        [haproxy-3]="http://127.0.0.1:$hport/mcp/mcp/v1")
    local setups=(direct haproxy-1 haproxy-3) n=3 i set line
    for set in "${setups[@]}"; do
        taskset -c "$CLIENT_CPU" wrk -t1 -c32 -d1s -s "$script" "${SURL[$set]}" >/dev/null
    done
    for r in $(seq 1 "$ROUNDS"); do
        for i in 0 1 2; do
            set="${setups[$(((i + r - 1) % n))]}"
            log "scale-out round $r/$ROUNDS: $set"
            line="$(wrk -t1 -c32 -d"${DURATION}s" -s "$script" "${SURL[$set]}" | sed -n 's/^RESULT //p')"
            [ -n "$line" ] || die "wrk printed no result for $set"
            record scaleout.jsonl "{\"round\":$r,\"setup\":\"$set\",${line:1}"
        done
    done
    kill "${pids[@]}" "$hpid" 2>/dev/null || true
    wait "${pids[@]}" "$hpid" 2>/dev/null || true
    stop_redis
    trap - EXIT
}

# --------------------------------------------------------------------------------------------
# queue

# The durable work queue on Redis (issue 39): one `catalog` (release, pinned to core 1) on a
# private Redis, loaded by wrk (core 0) with 2026-07-28 task-mode calls of `Jobs.run` (one step
# of 1 ms, so each call becomes a task and completes at once), each from a client address of its
# own (X-Forwarded-For from a trusted proxy: the per-caller shares are not what is measured);
# beside it, `redis-benchmark` XADDing entries of the size of a task's work to the same Redis,
# the ceiling of any queue on it. Records tasks accepted per second (the calls answered
# `resultType: "task"`), tasks completed per second (until the last entry left the stream), and
# the Redis commands per accepted task (`INFO commandstats`, before and after).
stage_queue() {
    need wrk
    need redis-server
    need redis-benchmark
    need jq
    [ -x "$BIN/catalog" ] || die "run the build stage first"
    rm -f "$OUT/queue.jsonl" "$OUT"/queue-*.log
    local rport=39131 port=39162 pid= script="$OUT/lua/queue.lua" r line t0 t1 done_at accepted stats0 stats1
    start_redis "$rport"
    trap 'stop_redis; kill ${pid:-} 2>/dev/null || true' EXIT
    local payload
    payload="$(printf 'x%.0s' $(seq 1 300))"
    for r in $(seq 1 "$ROUNDS"); do
        log "queue round $r/$ROUNDS: redis-benchmark XADD"
        redis-cli -p "$rport" DEL bench:ceiling >/dev/null
        line="$(taskset -c "$CLIENT_CPU" redis-benchmark -p "$rport" -c 32 -n 200000 -q \
            XADD bench:ceiling '*' work "$payload" | tr '\r' '\n' | grep 'requests per second' | tail -1)"
        line="$(sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' <<<"$line")"
        [ -n "$line" ] || die "redis-benchmark printed no result"
        record queue.jsonl "{\"round\":$r,\"what\":\"xadd\",\"per_s\":$line}"
    done
    redis-cli -p "$rport" DEL bench:ceiling >/dev/null
    env -u RUST_LOG REDIS_URL="redis://127.0.0.1:$rport" CATALOG_TRUSTED_PROXIES=127.0.0.1 \
        taskset -c "$SERVER_CPU" "$BIN/catalog" --listen "127.0.0.1:$port" 2>>"$OUT/queue-catalog.log" &
    pid=$!
    wait_port "$port" "$pid"
    mkdir -p "$OUT/lua"
    {
        cat <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "Jobs.run"
wrk.body = [==[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Jobs.run","arguments":{"steps":1,"step_ms":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}]==]
local threads = {}
function setup(thread) table.insert(threads, thread) end
local n = 0
function request()
    n = n + 1
    -- A client address of its own per call: 10.x.y.z.
    wrk.headers["X-Forwarded-For"] = string.format("10.%d.%d.%d", math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
    return wrk.format()
end
LUA
        lua_results verify '"resultType":"task"'
    } >"$script"
    # Warm-up (the tool's validator, the connections), then the queue left to drain.
    taskset -c "$CLIENT_CPU" wrk -t1 -c32 -d1s -s "$script" "http://127.0.0.1:$port/mcp/mcp/v1" >/dev/null
    commands() { redis-cli -p "$rport" INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_\([a-z|]*\):calls=\([0-9]*\),.*/\1 \2/p'; }
    drained() {
        local i
        for i in $(seq 1 600); do
            [ "$(redis-cli -p "$rport" XLEN '{mcp:tasks}mcp:work')" = 0 ] && return
            sleep 0.05
        done
        die "the work queue did not drain"
    }
    drained
    for r in $(seq 1 "$ROUNDS"); do
        log "queue round $r/$ROUNDS: tasks of catalog"
        stats0="$(commands)"
        t0="$(date +%s.%N)"
        line="$(taskset -c "$CLIENT_CPU" wrk -t1 -c32 -d"${DURATION}s" -s "$script" "http://127.0.0.1:$port/mcp/mcp/v1" | sed -n 's/^RESULT //p')"
        [ -n "$line" ] || die "wrk printed no result"
        drained
        t1="$(date +%s.%N)"
        stats1="$(commands)"
        accepted="$(jq '.checked - .bad' <<<"$line")"
        # Commands per accepted task, by command (the shares' exchange, once a second, included).
        local per
        per="$(join -a2 <(sort <<<"$stats0") <(sort <<<"$stats1") | awk -v n="$accepted" '
            NF == 3 {d = $3 - $2} NF == 2 {d = $2}
            d > 0 && n > 0 {printf "%s\"%s\":%.3f", sep, $1, d / n; sep = ","}')"
        record queue.jsonl "{\"round\":$r,\"what\":\"tasks\",\"accepted\":$accepted,\"run_s\":$(jq -n "$t1 - $t0"),\"per_task\":{$per},${line:1}"
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    stop_redis
    trap - EXIT
}

# --------------------------------------------------------------------------------------------
# report

stage_report() {
    need python3
    local meta="$OUT/meta.json"
    lock_ver() { awk -v n="$1" '$0 == "name = \"" n "\"" {getline; gsub(/version = |"/, ""); print; exit}' "$ROOT/Cargo.lock"; }
    {
        echo '{'
        echo "\"nproc\": $(nproc),"
        echo "\"cpu\": $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' | jq -Rs 'rtrimstr("\n")'),"
        echo "\"mem_kb\": $(awk '/MemTotal/ {print $2}' /proc/meminfo),"
        echo "\"kernel\": $(uname -r | jq -Rs 'rtrimstr("\n")'),"
        echo "\"rustc\": \"$(rustc -V | awk '{print $2}')\","
        echo "\"wrk\": \"$( (wrk -v 2>&1 || true) | head -1 | awk '{print $2}')\","
        local c
        for c in rmcp axum hyper tokio serde_json schemars jsonschema criterion; do
            echo "\"$c\": \"$(lock_ver "$c")\","
        done
        echo "\"date\": \"$(date -u +%Y-%m-%dT%H:%MZ)\""
        echo '}'
    } >"$meta"
    python3 "$ROOT/benches/report.py" "$OUT" "$ROOT/docs"
}

rm -f "$OUT/stages.jsonl.new"
for stage in "${STAGES[@]}"; do
    case "$stage" in
        build | http | example | features | scaleout | queue | criterion | compile | profile | report) ;;
        *) die "unknown stage $stage" ;;
    esac
done
# A full run starts the stage timings afresh.
[ ${#STAGES[@]} -eq 10 ] && rm -f "$OUT/stages.jsonl"
for i in "${!STAGES[@]}"; do
    stage="${STAGES[$i]}"
    t=$SECONDS
    if [ "$stage" = profile ] && [[ " ${STAGES[*]:$i} " == *" compile "* ]]; then
        start_prepare_compile
    fi
    "stage_$stage"
    [ "$stage" = report ] || stage_time "$stage" $((SECONDS - t))
done
log "done in $((SECONDS - START)) s"
