#!/usr/bin/env bash
# Two vx binaries side by side, for "before and after" figures of a change
# that must not move them (or must move them the right way): the cached,
# change, dry and cold scenarios of the shared 500-project workspace. Each
# scenario alternates the two binaries in one session (whole-process wall
# time, median of RUNS), so their ratio holds on a noisy machine.
#
#   OLD=path/to/old/vx NEW=path/to/new/vx bench/versus.sh
#
# The 500-project workspace also gets a 2,000-package package-lock.json
# (bench/gen_lockfile.py), which dependency-aware keys read.
#
# Settings: OLD, NEW (required), RUNS [11], COLD_RUNS [3], WORK [a temp
# dir], SHARED_BENCH [../shared/bench], LOCKFILE [1; 0 leaves it out].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OLD=$(realpath "${OLD:?set OLD to the vx binary before the change}")
NEW=$(realpath "${NEW:?set NEW to the vx binary after the change}")
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
RUNS=${RUNS:-11}
COLD_RUNS=${COLD_RUNS:-3}
WORK=${WORK:-$(mktemp -d)}
LOCKFILE=${LOCKFILE:-1}
TIMER="python3 $SHARED_BENCH/timecmd.py"

gen() { # gen DIR N
  [[ -d "$1" ]] && return
  python3 "$SHARED_BENCH/gen_workspace.py" "$1" --projects "$2" \
    --files-per-project 10 --deps-per-project 3 --seed 1 >/dev/null
  if [[ "$LOCKFILE" == 1 && "$2" == 500 ]]; then python3 bench/gen_lockfile.py "$1"; fi
}

# Each binary gets its own copy of the workspace, so their caches and
# histories never meet.
for side in old new; do gen "$WORK/$side/ws500" 500; gen "$WORK/$side/ws200" 200; done
(cd "$WORK/old/ws500" && "$OLD" run build >/dev/null)
(cd "$WORK/new/ws500" && "$NEW" run build >/dev/null)

compare() { # compare NAME OLD-CMD NEW-CMD
  echo "== $1 (median of ${4:-$RUNS}, alternating; A = new, B = old)"
  $TIMER -n "${4:-$RUNS}" --warmup 1 --vs "$2" -- sh -c "$3" | tee "$WORK/$1.txt" | grep ' wall '
  python3 - "$WORK/$1.txt" <<'PY'
import sys
rows = {l.split()[0]: float(l.split()[4]) for l in open(sys.argv[1]) if " wall s " in l}
print("   new/old (median wall): %.3f" % (rows["A"] / rows["B"]))
PY
}

compare cached "sh -c 'cd $WORK/old/ws500 && exec $OLD run build'" "cd $WORK/new/ws500 && exec $NEW run build"
leaf() { ls -d "$1"/packages/* | sort | tail -1; }
edit="f=\$(ls src/*.js | head -1); echo \"// \$(date +%s%N)\" >> \$f"
compare change \
  "sh -c 'cd $(leaf "$WORK/old/ws500") && $edit && cd $WORK/old/ws500 && exec $OLD run build'" \
  "cd $(leaf "$WORK/new/ws500") && $edit && cd $WORK/new/ws500 && exec $NEW run build"
compare dry "sh -c 'cd $WORK/old/ws500 && exec $OLD run build --dry=json'" \
  "cd $WORK/new/ws500 && exec $NEW run build --dry=json"
compare cold \
  "sh -c 'cd $WORK/old/ws200 && rm -rf packages/*/dist .vx && exec $OLD run build --concurrency 2'" \
  "cd $WORK/new/ws200 && rm -rf packages/*/dist .vx && exec $NEW run build --concurrency 2" "$COLD_RUNS"
