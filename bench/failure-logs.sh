#!/usr/bin/env bash
# What keeping the output of failed attempts in history (issue 39) costs:
# two vx binaries side by side, whole-process wall time and CPU time (user
# + system, of vx and its tasks), alternating in one session (median of
# RUNS), on
#
#   cached   the shared 500-project workspace, fully cached `vx run build`
#            (nothing fails: nothing may be kept, and nothing may slow);
#   failing  FAILING projects whose `test` writes LINES lines and exits 1,
#            all run with `--continue` (a failure is never cached, so every
#            run is cold): every attempt's output is kept by the new binary;
#   huge     8 projects whose `test` writes about 7 MB and exits 1: each
#            log is cut to its first and last MiB and compressed.
#
#   OLD=path/to/old/vx NEW=path/to/new/vx bench/failure-logs.sh
#
# Settings: OLD, NEW (required), RUNS [11], FAILING [100], LINES [2000],
# SCENARIOS ["cached failing huge"], WORK [a temp dir], SHARED_BENCH
# [../shared/bench]. Each binary gets its
# own copy of every workspace, so their caches and histories never meet.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OLD=$(realpath "${OLD:?set OLD to the vx binary before the change}")
NEW=$(realpath "${NEW:?set NEW to the vx binary after the change}")
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
RUNS=${RUNS:-11}
FAILING=${FAILING:-100}
LINES=${LINES:-2000}
SCENARIOS=${SCENARIOS:-cached failing huge}
WORK=${WORK:-$(mktemp -d)}
TIMER="python3 $SHARED_BENCH/timecmd.py"

failing_ws() { # failing_ws DIR N COMMAND
  [[ -d "$1" ]] && return
  mkdir -p "$1"
  printf '[workspace]\nprojects = ["packages/*"]\n' > "$1/vx.toml"
  for i in $(seq 1 "$2"); do
    mkdir -p "$1/packages/p$i"
    printf '[project]\nname = "p%s"\n\n[tasks.test]\ncommand = "%s"\n' "$i" "$3" > "$1/packages/p$i/vx.toml"
  done
}

for side in old new; do
  [[ -d "$WORK/$side/ws500" ]] || python3 "$SHARED_BENCH/gen_workspace.py" "$WORK/$side/ws500" --projects 500 \
    --files-per-project 10 --deps-per-project 3 --seed 1 >/dev/null
  failing_ws "$WORK/$side/failing" "$FAILING" "seq -f 'error %g: expected 1, got 2 in a test with a long name' 1 $LINES; exit 1"
  failing_ws "$WORK/$side/huge" 8 "seq -f 'line %.0f of a build that writes far too much' 1 150000; exit 1"
done
(cd "$WORK/old/ws500" && "$OLD" run build >/dev/null)
(cd "$WORK/new/ws500" && "$NEW" run build >/dev/null)

compare() { # compare NAME OLD-CMD NEW-CMD
  echo "== $1 (median of $RUNS, alternating; A = new, B = old)"
  $TIMER -n "$RUNS" --warmup 1 --vs "$2" -- sh -c "$3" | tee "$WORK/$1.txt" | grep -E ' (wall|cpu) s |peak MiB'
  python3 - "$WORK/$1.txt" <<'PY'
import sys
rows = {(l.split()[0], l.split()[1]): float(l.split()[4]) for l in open(sys.argv[1]) if " s " in l}
for what in ("wall", "cpu"):
    print("   new/old (median %s): %.3f" % (what, rows[("A", what)] / rows[("B", what)]))
PY
}

run() { # run SIDE WS ARGS: the command line that runs vx there, output dropped
  local bin=$OLD; [[ "$1" == new ]] && bin=$NEW
  echo "cd $WORK/$1/$2 && $bin run $3 >/dev/null; true"
}
failed="test --continue --output-logs none"
for scenario in $SCENARIOS; do
  case $scenario in
    cached) compare cached "sh -c '$(run old ws500 build)'" "$(run new ws500 build)" ;;
    failing | huge) compare "$scenario" "sh -c '$(run old "$scenario" "$failed")'" "$(run new "$scenario" "$failed")" ;;
  esac
done
ls -l "$WORK"/*/*/.vx/history.db
