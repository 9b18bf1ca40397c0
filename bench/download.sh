#!/usr/bin/env bash
# `--download=all` against `--download=needed` ("build without the bytes")
# on a fully remote-cached run, against a real BuildGrid 0.4.4 here.
#
# The 500-project workspace of bench/reapi.sh, its every task cached on a
# cache-only BuildGrid by one cold run. The timed command builds one leaf,
# the highest-numbered project (TARGET), and everything it depends on,
# from an empty local cache with every dist/ removed (a fresh clone):
#
#   A: vx run TARGET#build --download=all      every hit's outputs restored
#   B: vx run TARGET#build --download=needed   only TARGET's
#
# A and B alternate; whole-process wall time, median of RUNS runs. One more
# run of each with VX_REMOTE_STATS=1 prints the bytes moved, and counts the
# dist/ directories each leaves on disk.
#
#   bench/download.sh                            (VX defaults to target/release/vx)
#   VX=path/to/vx RUNS=5 OUT_KB=64 bench/download.sh
#
# Settings: VX, RUNS [5], PROJECTS [500], OUT_KB [0: each build also writes
# a dist/blob.bin of this many KiB, different per project, so outputs weigh
# what real builds' do; REAPI moves it uncompressed], WORK [a temp dir],
# SHARED_BENCH [../shared/bench].
# Needs scripts/install-buildgrid.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)
VX=$(realpath "${VX:-${CARGO_TARGET_DIR:-target}/release/vx}")
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
RUNS=${RUNS:-5}
PROJECTS=${PROJECTS:-500}
OUT_KB=${OUT_KB:-0}
WORK=${WORK:-$(mktemp -d)}
TIMER="python3 $SHARED_BENCH/timecmd.py"
[[ -x "$VX" ]] || { echo "no vx binary at $VX: cargo build --release -p vx" >&2; exit 2; }
scripts/install-buildgrid

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done; }
trap cleanup EXIT
port=$(free_port)
setsid "$REPO/scripts/buildgrid-server" cache "$port" "$WORK/bg" >"$WORK/bg.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do [[ -f "$WORK/bg/bgd.pid" ]] && break; sleep 0.05; done
[[ -f "$WORK/bg/bgd.pid" ]] || { echo "BuildGrid did not start; see $WORK/bg.log" >&2; exit 1; }

ws="$WORK/ws$PROJECTS"
python3 "$SHARED_BENCH/gen_workspace.py" "$ws" --projects "$PROJECTS" \
  --files-per-project 10 --deps-per-project 3 --seed 1 >/dev/null
cd "$ws"
printf '\n[remote]\nendpoint = "grpc://127.0.0.1:%s"\n' "$port" >>vx.toml
if [[ "$OUT_KB" != 0 ]]; then
  # Each build also writes OUT_KB KiB that differ per project.
  for f in packages/*/build.js; do
    printf '\nfs.writeFileSync(path.join(distDir, "blob.bin"), crypto.createHash("sha256").update(__dirname).digest().toString("hex").repeat(%d));\n' \
      "$((OUT_KB * 1024 / 64))" >>"$f"
  done
fi
TARGET=$(printf 'p%04d#build' "$((PROJECTS - 1))")
echo "== --download, $TARGET of $PROJECTS projects ($("$VX" run "$TARGET" --dry=json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["tasks"]))') tasks), OUT_KB=$OUT_KB"
"$VX" run "$TARGET" | tail -n 1
for mode in all needed; do
  rm -rf .vx/cache packages/*/dist
  echo "-- $mode: $(VX_REMOTE_STATS=1 "$VX" run "$TARGET" --download=$mode 2>&1 | grep 'remote cache:'), $(ls -d packages/*/dist 2>/dev/null | wc -l) dist/ on disk"
done
$TIMER -n "$RUNS" --warmup 1 --timeout 3600 \
  --vs "sh -c 'rm -rf .vx/cache packages/*/dist && exec \"$VX\" run \"$TARGET\" --download=needed'" \
  -- sh -c "rm -rf .vx/cache packages/*/dist && exec '$VX' run '$TARGET' --download=all" | tee "$WORK/download.txt" | grep -E 'exit 0|wall'
python3 - "$WORK/download.txt" <<'PY'
import sys
rows = {l.split()[0]: float(l.split()[4]) for l in open(sys.argv[1]) if " wall s " in l}
print("ratio all/needed (median wall): %.2f" % (rows["A"] / rows["B"]))
PY
