#!/usr/bin/env bash
# Remote cache benchmark: a fully cached 500-project run restored from
# turborepo-remote-cache through the http-cache plugin with an empty local
# cache (A), beside the same run restored from the local cache alone (B).
# Both start with every `dist/` removed, so both restore 500 outputs; A also
# downloads each entry and writes it to the local store. Runs alternate A, B,
# A, … in one session. Whole-process wall time, median of RUNS runs.
#
#   bench/http-cache.sh                      (VX defaults to target/release/vx)
#   VX=path/to/vx RUNS=5 bench/http-cache.sh
#
# Settings: VX, RUNS [5], PROJECTS [500], WORK [a temp dir], SHARED_BENCH
# [../shared/bench], TRC [turborepo-remote-cache's dist/cli.js; default
# where scripts/test installs it], PLUGIN [plugins/dist/http-cache.wasm,
# built by scripts/build-plugins].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VX=$(realpath "${VX:-${CARGO_TARGET_DIR:-target}/release/vx}")
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
PLUGIN=$(realpath "${PLUGIN:-plugins/dist/http-cache.wasm}")
TRC=${TRC:-${VX_TEST_TURBO_CACHE:-$HOME/.cache/vx/turborepo-remote-cache-2.12.0/node_modules/turborepo-remote-cache/dist/cli.js}}
RUNS=${RUNS:-5}
PROJECTS=${PROJECTS:-500}
WORK=${WORK:-$(mktemp -d)}
TIMER="python3 $SHARED_BENCH/timecmd.py"
[[ -x "$VX" ]] || { echo "no vx binary at $VX: cargo build --release -p vx" >&2; exit 2; }
[[ -f "$PLUGIN" ]] || { echo "no $PLUGIN: run scripts/build-plugins" >&2; exit 2; }
[[ -f "$TRC" ]] || { echo "no turborepo-remote-cache at $TRC: run scripts/test (it installs it) or set TRC" >&2; exit 2; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$WORK/trc-storage"
HOST=127.0.0.1 PORT=$port STORAGE_PROVIDER=local STORAGE_PATH="$WORK/trc-storage" STORAGE_PATH_USE_TMP_FOLDER=false \
  TURBO_TOKEN=bench-token LOG_LEVEL=warn node "$TRC" >"$WORK/trc.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.05
done

ws="$WORK/ws$PROJECTS"
python3 "$SHARED_BENCH/gen_workspace.py" "$ws" --projects "$PROJECTS" \
  --files-per-project 10 --deps-per-project 3 --seed 1 >/dev/null
cd "$ws"
printf '\n[cache]\nremote = "http-cache"\n' >>vx.toml
"$VX" plugin add "$PLUGIN" --env TURBO_TOKEN --allow-host "http://127.0.0.1:$port" >/dev/null
printf '\n[plugins.http-cache.config]\nurl = "http://127.0.0.1:%s"\nteam-id = "bench"\n' "$port" >>vx.toml
export TURBO_TOKEN=bench-token

echo "== filling the remote: one cold run of $PROJECTS tasks"
"$VX" run build | tail -n 1
echo "remote holds $(find "$WORK/trc-storage" -type f | wc -l) artifacts"
rm -rf .vx/cache packages/*/dist
"$VX" run build | tail -n 1

echo "== $PROJECTS fully cached tasks: remote with an empty local cache (A) vs local only (B), median of $RUNS, alternating"
$TIMER -n "$RUNS" --warmup 1 --timeout 3600 \
  --vs "sh -c 'rm -rf packages/*/dist && exec \"$VX\" run build --cache local:rw'" \
  -- sh -c "rm -rf .vx/cache packages/*/dist && exec '$VX' run build" | tee "$WORK/http-cache.txt" | grep -E 'exit 0|wall'
python3 - "$WORK/http-cache.txt" <<'PY'
import sys
rows = {l.split()[0]: float(l.split()[4]) for l in open(sys.argv[1]) if " wall s " in l}
print("ratio remote/local (median wall): %.2f" % (rows["A"] / rows["B"]))
PY
