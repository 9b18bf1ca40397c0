#!/usr/bin/env bash
# Hashing benchmark: vx keying a task whose inputs are a 100,000-file tree,
# cold (no stat index: every file read and hashed) and warm (stat index:
# files unchanged since last time are not read), against b3sum over the
# same files; then with a watchman daemon watching the tree, and with
# git's index (`[cache] monitor`). Whole-process wall time, median of RUNS
# runs; the page cache is warm for every command (one uncounted warm-up
# each).
#
#   bench/hash.sh                    (VX defaults to target/release/vx)
#   FILES=100000 RUNS=5 bench/hash.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VX=$(realpath "${VX:-${CARGO_TARGET_DIR:-target}/release/vx}")
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
FILES=${FILES:-100000}
RUNS=${RUNS:-5}
WORK=${WORK:-$(mktemp -d)}
TIMER="python3 $SHARED_BENCH/timecmd.py"
command -v b3sum >/dev/null || { echo "b3sum is needed (apt-get install b3sum, or cargo install b3sum)" >&2; exit 2; }
[[ -x "$VX" ]] || { echo "no vx binary at $VX: cargo build --release -p vx" >&2; exit 2; }

ws="$WORK/hash-ws"
if [[ ! -d "$ws" ]]; then
  mkdir -p "$ws/big"
  printf '[workspace]\nprojects = ["big"]\n' > "$ws/vx.toml"
  printf '[tasks.hash]\ncommand = "true"\noutputs = ["out/**"]\n' > "$ws/big/vx.toml"
  python3 - "$ws/big/src" "$FILES" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(1)
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 1000))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.txt" % i), "wb") as f:
        f.write(rng.randbytes(rng.randint(200, 2000)))
PY
fi
cd "$ws"
# A git repository of the tree (vx.toml and .vx/ outside it), made first so
# that every step below keys the very same files, the root .gitignore
# included.
if [[ ! -d .git ]]; then
  printf '.vx/\nvx.toml\n' > .gitignore
  git init -q && git add -A && git -c user.email=b@b -c user.name=bench commit -qm tree
fi
# `[cache] monitor` for the steps below: "off" walks, "auto" asks watchman
# first, "git" keys clean files from git's index (docs/cache.md).
set_monitor() { printf '[workspace]\nprojects = ["big"]\n\n[cache]\nmonitor = "%s"\n' "$1" > vx.toml; }
set_monitor off
bytes=$(du -sb big/src | cut -f1)
echo "== tree: $FILES files, $((bytes / 1024 / 1024)) MiB"

echo "== b3sum over every file"
$TIMER -n "$RUNS" --warmup 1 -- sh -c 'find big/src -type f -print0 | xargs -0 b3sum > /dev/null' | grep 'A wall'
echo "== vx cold (no stat index): vx run big#hash --dry=json"
$TIMER -n "$RUNS" --warmup 1 -- sh -c "rm -f .vx/stat-index && exec '$VX' run big#hash --dry=json > /dev/null" | grep 'A wall'
echo "== vx warm (stat index): vx run big#hash --dry=json"
"$VX" run big#hash --dry=json > /dev/null
# The stat index skips files modified within the last second; let them age.
sleep 2
"$VX" run big#hash --dry=json > /dev/null
$TIMER -n "$RUNS" --warmup 1 -- "$VX" run big#hash --dry=json | grep 'A wall'

# With a file-system monitor (`[cache] monitor`, docs/cache.md): a watchman
# daemon of this script's own, watching the workspace; the run keeps its
# lists and the next one asks watchman what changed instead of walking.
if command -v watchman >/dev/null; then
  sock="$WORK/watchman.sock"
  watchman --foreground --sockname="$sock" --logfile="$WORK/watchman.log" \
    --statefile="$WORK/watchman.state" --pidfile="$WORK/watchman.pid" >/dev/null 2>&1 &
  watchman_pid=$!
  trap 'kill "$watchman_pid" 2>/dev/null' EXIT
  for _ in $(seq 100); do
    watchman --sockname="$sock" --no-spawn watch-list >/dev/null 2>&1 && break
    sleep 0.05
  done
  watchman --sockname="$sock" watch-project "$ws" >/dev/null
  export WATCHMAN_SOCK="$sock"
  set_monitor auto
  echo "== vx with watchman watching (monitor = \"auto\"): vx run big#hash --dry=json"
  "$VX" run big#hash --dry=json > /dev/null
  $TIMER -n "$RUNS" --warmup 1 -- "$VX" run big#hash --dry=json | grep 'A wall'
  unset WATCHMAN_SOCK
  set_monitor off
else
  echo "== (no watchman: apt-get install watchman to measure the monitor)"
fi

# Git's index: written again more than a second after the files (a plain
# `git status`) so that no entry is racily clean, one run to fill
# .vx/oid-map, then the timed runs.
sleep 1.1
git status --porcelain > /dev/null
echo "== git status alone (git's own look at an unchanged tree, for comparison; preloaded index, every core)"
$TIMER -n "$RUNS" --warmup 1 -- git --no-optional-locks -c core.excludesFile=/dev/null status --porcelain=v1 -z \
  --untracked-files=all --ignored=matching --no-renames | grep 'A wall'
set_monitor git
echo "== vx with git's index (monitor = \"git\"): vx run big#hash --dry=json"
"$VX" run big#hash --dry=json > /dev/null
$TIMER -n "$RUNS" --warmup 1 -- "$VX" run big#hash --dry=json | grep 'A wall'
echo "== vx with git's index, no stat index (deleted, or a new checkout with .vx/oid-map carried): compare with cold"
$TIMER -n "$RUNS" --warmup 1 -- sh -c "rm -f .vx/stat-index && exec '$VX' run big#hash --dry=json > /dev/null" | grep 'A wall'
set_monitor off
