#!/usr/bin/env bash
# Foundation benchmarks: planning speed and the cold-run overhead of vx over
# plain process spawning. Whole-process wall time, median of RUNS runs, with
# the two commands of a comparison run alternately in the same session so
# that their ratio holds on a noisy machine.
#
#   bench/foundation.sh                     (VX defaults to target/release/vx)
#   VX=path/to/vx RUNS=10 bench/foundation.sh
#
# Settings: VX, RUNS [10], COLD_RUNS [5], WORK [a temp dir], SHARED_BENCH
# [../shared/bench: gen_workspace.py and timecmd.py].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VX=$(realpath "${VX:-${CARGO_TARGET_DIR:-target}/release/vx}")
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
RUNS=${RUNS:-10}
COLD_RUNS=${COLD_RUNS:-5}
WORK=${WORK:-$(mktemp -d)}
TIMER="python3 $SHARED_BENCH/timecmd.py"
[[ -x "$VX" ]] || { echo "no vx binary at $VX: cargo build --release -p vx" >&2; exit 2; }

gen() { # gen N DIR
  [[ -d "$2" ]] || python3 "$SHARED_BENCH/gen_workspace.py" "$2" --projects "$1" \
    --files-per-project 10 --deps-per-project 3 --seed 1 >/dev/null
}

echo "== plan: vx run build --dry=json, 500 projects (median of $RUNS)"
gen 500 "$WORK/ws500"
(cd "$WORK/ws500" && $TIMER -n "$RUNS" --warmup 2 -- "$VX" run build --dry=json) | grep 'A wall'

echo "== cold: vx run build vs the floor, 200 projects, 2 at a time (median of $COLD_RUNS, alternating)"
gen 200 "$WORK/ws200"
each='find packages -mindepth 1 -maxdepth 1 -type d | sort | xargs -P2 -I{} sh -c "cd {} && exec node build.js >/dev/null"'
cd "$WORK/ws200"
$TIMER -n "$COLD_RUNS" --warmup 1 \
  --vs "sh -c 'rm -rf packages/*/dist && $each'" \
  -- sh -c "rm -rf packages/*/dist .vx && exec '$VX' run build --concurrency 2" | tee "$WORK/cold.txt" | grep 'wall'
python3 - "$WORK/cold.txt" <<'PY'
import sys
rows = {l.split()[0]: float(l.split()[4]) for l in open(sys.argv[1]) if " wall s " in l}
print("ratio vx/floor (median wall): %.3f" % (rows["A"] / rows["B"]))
PY
