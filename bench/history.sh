#!/usr/bin/env bash
# A fully cached run's cost against the length of its history (issue 38):
# the shared 500-project workspace with 10 runs recorded, then with RECORD
# runs, each recorded by `vx run build` itself (the real recorder, nothing
# inserted behind its back). With OLD set, a vx from before `[history]
# keep` gets its own copy of the workspace and the two are timed
# alternately in one session (whole-process wall time, median of RUNS), so
# their ratio holds on a noisy machine.
#
#   NEW=path/to/vx [OLD=path/to/old/vx] bench/history.sh
#
# Settings: NEW (required), OLD, KEEP (a `[history] keep` value written to
# NEW's vx.toml; unset leaves the default), RECORD [1000], RUNS [21],
# WORK [a temp dir], SHARED_BENCH [../shared/bench].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
NEW=$(realpath "${NEW:?set NEW to the vx binary to measure}")
OLD=${OLD:+$(realpath "$OLD")}
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
RECORD=${RECORD:-1000}
RUNS=${RUNS:-21}
WORK=${WORK:-$(mktemp -d)}
TIMER="python3 $SHARED_BENCH/timecmd.py"
sides=(new)
[[ -n "$OLD" ]] && sides+=(old)
bin() { if [[ "$1" == new ]]; then echo "$NEW"; else echo "$OLD"; fi; }

for side in "${sides[@]}"; do
  ws="$WORK/$side"
  python3 "$SHARED_BENCH/gen_workspace.py" "$ws" --projects 500 --files-per-project 10 \
    --deps-per-project 3 --seed 1 >/dev/null
  if [[ "$side" == new && -n "${KEEP:-}" ]]; then printf '\n[history]\nkeep = %s\n' "$KEEP" >>"$ws/vx.toml"; fi
  # The cold run, then nine fully cached ones: ten runs recorded.
  for _ in $(seq 10); do (cd "$ws" && "$(bin "$side")" run build --output-logs none >/dev/null); done
done

# history.db's size with its log, and the runs and task rows it holds.
size() {
  python3 - "$WORK/$1/.vx/history.db" <<'PY'
import os, sqlite3, sys
db = sys.argv[1]
bytes_ = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
c = sqlite3.connect(db)
runs, rows = (c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("invocations", "task_runs"))
print(f"   history: {runs} runs, {rows} task rows, {bytes_ / 1e6:.1f} MB with its log")
PY
}

timed() { # timed LABEL
  echo "== $1 (median of $RUNS; A = new${OLD:+, B = old})"
  if [[ -n "$OLD" ]]; then
    $TIMER -n "$RUNS" --warmup 1 --vs "sh -c 'cd $WORK/old && exec $OLD run build --output-logs none'" \
      -- sh -c "cd $WORK/new && exec $NEW run build --output-logs none" | grep ' wall '
  else
    $TIMER -n "$RUNS" --warmup 1 -- sh -c "cd $WORK/new && exec $NEW run build --output-logs none" | grep ' wall '
  fi
  for side in "${sides[@]}"; do echo "  $side:"; size "$side"; done
}

timed "10 runs recorded"
for side in "${sides[@]}"; do
  done_runs=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT MAX(id) FROM invocations').fetchone()[0])" "$WORK/$side/.vx/history.db")
  for _ in $(seq $((RECORD - done_runs))); do
    (cd "$WORK/$side" && "$(bin "$side")" run build --output-logs none >/dev/null)
  done
done
timed "$RECORD runs recorded"
