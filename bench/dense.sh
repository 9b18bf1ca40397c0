#!/usr/bin/env bash
# The original vx's headline workload (issue 18): a dense graph of 1,090
# packages in 100 layers, 3,270 tasks (../shared/bench/gen_layers.py),
# `vx run build test installDeps` fully cached. Whole-process wall time,
# median of RUNS, each pair alternating in one session: NEW against OLD
# (when set), and NEW against Turborepo (when TURBO is set).
#
#   NEW=target/release/vx [OLD=old/vx] [TURBO=path/to/turbo] bench/dense.sh
#
# Each side gets its own copy of the workspace, so caches and histories
# never meet. Turborepo's cold run is 2,180 `npm run`s: about 25 minutes
# on two cores; WORK keeps the filled workspaces for the next time.
#
# Settings: NEW (required), OLD, TURBO, RUNS [15], WORK [a temp dir],
# SHARED_BENCH [../shared/bench].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
NEW=$(realpath "${NEW:?set NEW to the vx binary to measure}")
OLD=${OLD:+$(realpath "$OLD")}
TURBO=${TURBO:+$(realpath "$TURBO")}
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
RUNS=${RUNS:-15}
WORK=${WORK:-$(mktemp -d)}
TIMER="python3 $SHARED_BENCH/timecmd.py"
TASKS="build test installDeps"

# gen SIDE: the workspace of one side, generated once.
gen() {
  local ws="$WORK/$1"
  [[ -d "$ws" ]] && return
  python3 "$SHARED_BENCH/gen_layers.py" "$ws" >/dev/null
}
# fill_vx SIDE BINARY: one cold run, then five cached ones, so history
# holds rows before the measured runs add theirs.
fill_vx() {
  [[ -f "$WORK/$1/.vx/history.db" ]] && return
  for _ in 1 2 3 4 5 6; do "$2" -C "$WORK/$1" run $TASKS >/dev/null; done
}

gen new && fill_vx new "$NEW"
"$NEW" -C "$WORK/new" run $TASKS | tail -1

compare() { # compare NAME B-CMD
  echo "== NEW against $1 (median of $RUNS, alternating; A = new, B = $1)"
  $TIMER -n "$RUNS" --warmup 1 --vs "$2" -- "$NEW" -C "$WORK/new" run $TASKS | tee "$WORK/$1.txt" | grep ' wall '
  python3 - "$WORK/$1.txt" <<'PY'
import sys
rows = {l.split()[0]: float(l.split()[4]) for l in open(sys.argv[1]) if " wall s " in l}
print("   new/B (median wall): %.3f" % (rows["A"] / rows["B"]))
PY
}

if [[ -n "$OLD" ]]; then
  gen old && fill_vx old "$OLD"
  compare old "$OLD -C $WORK/old run $TASKS"
fi
if [[ -n "$TURBO" ]]; then
  if gen turbo && [[ ! -d "$WORK/turbo/.turbo/cache" ]]; then
    echo "== filling Turborepo's cache (slow: one npm run per task)"
    (cd "$WORK/turbo" && "$TURBO" run $TASKS --output-logs=errors-only >/dev/null)
  fi
  (cd "$WORK/turbo" && "$TURBO" run $TASKS --output-logs=hash-only | tail -3)
  compare turbo "sh -c 'cd $WORK/turbo && exec $TURBO run $TASKS'"
fi
