#!/usr/bin/env bash
# What `--summarize` and `--profile` cost: a fully cached run of the shared
# 500-project workspace with both flags on (B) against the same run without
# them (A), alternating in one session so their ratio holds on a noisy
# machine. Whole-process wall time, median of RUNS runs. Issue 17's bound:
# B/A <= 1.10.
#
#   bench/observe.sh                     (VX defaults to target/release/vx)
#   VX=path/to/vx RUNS=21 bench/observe.sh
#
# Settings: VX, RUNS [21], WORK [a temp dir], SHARED_BENCH [../shared/bench:
# gen_workspace.py and timecmd.py].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VX=$(realpath "${VX:-${CARGO_TARGET_DIR:-target}/release/vx}")
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
RUNS=${RUNS:-21}
WORK=${WORK:-$(mktemp -d)}
TIMER="python3 $SHARED_BENCH/timecmd.py"
[[ -x "$VX" ]] || { echo "no vx binary at $VX: cargo build --release -p vx" >&2; exit 2; }

ws="$WORK/ws500"
[[ -d "$ws" ]] || python3 "$SHARED_BENCH/gen_workspace.py" "$ws" --projects 500 \
  --files-per-project 10 --deps-per-project 3 --seed 1 >/dev/null
cd "$ws"
"$VX" run build --output-logs none >/dev/null   # fill the cache: every later run is a hit
echo "== cached, 500 projects: A plain, B --summarize --profile (median of $RUNS, alternating)"
$TIMER -n "$RUNS" --warmup 2 \
  --vs "'$VX' run build --output-logs none --summarize=$WORK/summary.json --profile=$WORK/trace.json" \
  -- "$VX" run build --output-logs none | tee "$WORK/observe.txt" | grep 'wall'
python3 - "$WORK/observe.txt" <<'PY'
import sys
rows = {l.split()[0]: float(l.split()[4]) for l in open(sys.argv[1]) if " wall s " in l}
print("ratio with/without (median wall): %.3f" % (rows["B"] / rows["A"]))
PY
ls -l "$WORK/summary.json" "$WORK/trace.json" | awk '{print $5, $NF}'
