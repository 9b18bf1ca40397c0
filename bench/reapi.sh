#!/usr/bin/env bash
# REAPI benchmarks against a real BuildGrid 0.4.4 on this machine.
#
# 1. Cache: a fully cached PROJECTS-project run restored from the REAPI
#    cache with an empty local cache (A), beside the same run restored from
#    the local cache alone (B); runs alternate A, B, A, … Both start with
#    every dist/ removed. One more run with VX_REMOTE_STATS=1 prints the
#    bytes moved.
# 2. Remote execution: EXEC_PROJECTS projects built cold on two `vx worker`s
#    (R) beside the same cold build run locally (L), alternating, every run
#    with --force --cache off (BuildGrid's action cache is skipped too), so
#    each run executes every task; then again with the client at
#    --concurrency 4, the two workers' capacity. Then one trivial task,
#    remotely and locally, to show the fixed cost of one action.
#
# Whole-process wall time, median of RUNS runs.
#
#   bench/reapi.sh                               (VX defaults to target/release/vx)
#   VX=path/to/vx RUNS=5 bench/reapi.sh
#
# Settings: VX, RUNS [5], PROJECTS [500], EXEC_PROJECTS [200], WORK [a temp
# dir], SHARED_BENCH [../shared/bench]. Needs scripts/install-buildgrid.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)
VX=$(realpath "${VX:-${CARGO_TARGET_DIR:-target}/release/vx}")
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
RUNS=${RUNS:-5}
PROJECTS=${PROJECTS:-500}
EXEC_PROJECTS=${EXEC_PROJECTS:-200}
WORK=${WORK:-$(mktemp -d)}
TIMER="python3 $SHARED_BENCH/timecmd.py"
[[ -x "$VX" ]] || { echo "no vx binary at $VX: cargo build --release -p vx" >&2; exit 2; }
scripts/install-buildgrid

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done; }
trap cleanup EXIT
start_server() { # MODE PORT DIR [PG_PORT]
  setsid "$REPO/scripts/buildgrid-server" "$@" >"$3.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 600); do [[ -f "$3/bgd.pid" ]] && return; sleep 0.05; done
  echo "BuildGrid did not start; see $3.log" >&2; exit 1
}
ratio() { # FILE
  python3 - "$1" <<'PY'
import sys
rows = {l.split()[0]: float(l.split()[4]) for l in open(sys.argv[1]) if " wall s " in l}
print("ratio A/B (median wall): %.2f" % (rows["A"] / rows["B"]))
PY
}
# compare NAME N WARMUP B_CMD -- A_CMD...: A and B alternating, median of N,
# the table into $WORK/NAME.txt, then the ratio A/B.
compare() {
  local name=$1 n=$2 warmup=$3 b=$4
  shift 5
  $TIMER -n "$n" --warmup "$warmup" --timeout 3600 --vs "$b" -- "$@" | tee "$WORK/$name.txt" | grep -E 'exit 0|wall'
  ratio "$WORK/$name.txt"
}

echo "== 1. REAPI cache, $PROJECTS projects"
port=$(free_port)
start_server cache "$port" "$WORK/bg-cache"
ws="$WORK/ws$PROJECTS"
python3 "$SHARED_BENCH/gen_workspace.py" "$ws" --projects "$PROJECTS" \
  --files-per-project 10 --deps-per-project 3 --seed 1 >/dev/null
cd "$ws"
printf '\n[remote]\nendpoint = "grpc://127.0.0.1:%s"\n' "$port" >>vx.toml
"$VX" run build | tail -n 1
rm -rf .vx/cache packages/*/dist
VX_REMOTE_STATS=1 "$VX" run build 2>&1 | tail -n 2
compare reapi-cache "$RUNS" 1 "sh -c 'rm -rf packages/*/dist && exec \"$VX\" run build --cache local:rw'" \
  -- sh -c "rm -rf .vx/cache packages/*/dist && exec '$VX' run build"

echo "== 2. remote execution, $EXEC_PROJECTS projects, two vx workers"
port=$(free_port)
start_server exec "$port" "$WORK/bg-exec" "$(free_port)"
for w in a b; do
  setsid "$VX" worker --endpoint "grpc://127.0.0.1:$port" --bot-id "bench-$w" --work-dir "$WORK/worker-$w" \
    >"$WORK/worker-$w.log" 2>&1 &
  pids+=($!)
done
ws="$WORK/exec$EXEC_PROJECTS"
python3 "$SHARED_BENCH/gen_workspace.py" "$ws" --projects "$EXEC_PROJECTS" \
  --files-per-project 10 --deps-per-project 3 --seed 2 >/dev/null
cd "$ws"
# A remote action sees only what it declares: the build script is an input.
sed -i 's|^inputs = \["src/\*\*"\]|inputs = ["src/**", "build.js"]|' packages/*/vx.toml
printf '\n[remote]\nendpoint = "grpc://127.0.0.1:%s"\n' "$port" >>vx.toml
"$VX" run build --executor remote --force --cache off | tail -n 1
local_cold="sh -c 'rm -rf packages/*/dist && exec \"$VX\" run build --force --cache off'"
compare reapi-exec "$RUNS" 0 "$local_cold" \
  -- sh -c "rm -rf packages/*/dist && exec '$VX' run build --executor remote --force --cache off"
echo "-- the same, remote at --concurrency 4 (the farm's capacity) (A) vs local (B)"
compare reapi-exec4 "$RUNS" 0 "$local_cold" \
  -- sh -c "rm -rf packages/*/dist && exec '$VX' run build --executor remote --force --cache off --concurrency 4"
echo "-- one trivial action (p0000#build alone), remote (A) vs local (B)"
compare reapi-one "$((RUNS * 2))" 1 "sh -c 'exec \"$VX\" run p0000#build --force --cache off'" \
  -- sh -c "exec '$VX' run p0000#build --executor remote --force --cache off"
