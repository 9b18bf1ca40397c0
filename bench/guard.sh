#!/usr/bin/env bash
# Guard benchmark: the cost of the guard process on spawning. 500 projects
# whose only task `noop` is `true`, run two at a time, with the guard (the
# default) and without it (VX_GUARD=off), alternating in the same session so
# the ratio holds on a noisy machine. Whole-process wall time, median of
# RUNS runs.
#
#   bench/guard.sh                          (VX defaults to target/release/vx,
#                                            built with cargo if missing)
#   VX=path/to/vx RUNS=10 bench/guard.sh
#
# Settings: VX, RUNS [10], PROJECTS [500], WORK [a temp dir], SHARED_BENCH
# [../shared/bench: timecmd.py].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VX=${VX:-${CARGO_TARGET_DIR:-target}/release/vx}
if [[ ! -x "$VX" ]]; then
  echo "building $VX" >&2
  cargo build --release --quiet -p vx
fi
VX=$(realpath "$VX")
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
RUNS=${RUNS:-10}
PROJECTS=${PROJECTS:-500}
WORK=${WORK:-$(mktemp -d)}
TIMER="python3 $SHARED_BENCH/timecmd.py"

ws="$WORK/noop$PROJECTS"
if [[ ! -d "$ws" ]]; then
  mkdir -p "$ws/packages"
  printf '[workspace]\nprojects = ["packages/*"]\n' >"$ws/vx.toml"
  for i in $(seq -w 1 "$PROJECTS"); do
    mkdir -p "$ws/packages/p$i"
    printf '[project]\nname = "p%s"\n\n[tasks.noop]\ncommand = "true"\n' "$i" >"$ws/packages/p$i/vx.toml"
  done
fi
cd "$ws"
# A sanity run: every task must run (none cached, none failed).
"$VX" run noop --concurrency 2 | tail -n 1

echo "== $PROJECTS no-op tasks, 2 at a time: guard (A) vs VX_GUARD=off (B), median of $RUNS, alternating"
$TIMER -n "$RUNS" --warmup 1 \
  --vs "env VX_GUARD=off '$VX' run noop --concurrency 2" \
  -- env VX_GUARD=on "$VX" run noop --concurrency 2 | tee "$WORK/guard.txt" | grep -E 'exit 0|wall'
python3 - "$WORK/guard.txt" <<'PY'
import sys
rows = {l.split()[0]: float(l.split()[4]) for l in open(sys.argv[1]) if " wall s " in l}
print("ratio guard/off (median wall): %.3f" % (rows["A"] / rows["B"]))
PY
