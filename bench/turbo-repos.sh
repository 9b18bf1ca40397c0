#!/usr/bin/env bash
# vx against turbo on the Turborepo fixtures of tests/fixtures/turbo-repos
# (pnpm + tsc -b, npm + tsup, yarn berry + tsdown), each installed once
# with its frozen install (scripts/install-turbo-repo) in two copies, one
# per tool. Per workspace and tool, the whole-process wall time of
# `run build`, median of RUNS runs:
#   cold    no cache and no dist/ (turbo: .turbo/ removed; vx: .vx/ removed)
#   cached  every task a hit (after one run that fills the cache)
#
#   bench/turbo-repos.sh                 (VX defaults to target/release/vx,
#                                         built with cargo if missing)
#   VX=path/to/vx RUNS=5 REPOS="pnpm npm" bench/turbo-repos.sh
#
# Settings: VX, TURBO [$HOME/.cache/vx/turbo-2.11.11/node_modules/.bin/turbo],
# RUNS [5], REPOS [pnpm npm yarn], WORK [a temp dir, removed at the end].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VX=${VX:-${CARGO_TARGET_DIR:-target}/release/vx}
if [[ ! -x "$VX" ]]; then
  echo "building $VX" >&2
  cargo build --release --quiet -p vx
fi
VX=$(realpath "$VX")
TURBO=${TURBO:-$HOME/.cache/vx/turbo-2.11.11/node_modules/.bin/turbo}
RUNS=${RUNS:-5}
REPOS=${REPOS:-pnpm npm yarn}
WORK=${WORK:-$(mktemp -d)}
trap 'rm -rf "$WORK"' EXIT
export TURBO_TELEMETRY_DISABLED=1 TURBO_NO_UPDATE_NOTIFIER=1 DO_NOT_TRACK=1 NO_COLOR=1

# Milliseconds one command takes, its output discarded; a failure stops the bench.
wall_ms() {
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; "$@" >&2; exit 1; }
  end=$(date +%s%N)
  echo $(((end - start) / 1000000))
}

# The median of RUNS timings of `PREPARE; COMMAND` (PREPARE not timed).
median_ms() { # PREPARE COMMAND...
  local prepare="$1" times=()
  shift
  for _ in $(seq "$RUNS"); do
    eval "$prepare"
    times+=("$(wall_ms "$@")")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((RUNS + 1) / 2))p"
}

clear_dist() { find . -name node_modules -prune -o -type d -name dist -print | xargs rm -rf; }

printf '%-6s %-6s %10s %10s\n' repo tool cold_ms cached_ms
for repo in $REPOS; do
  for tool in turbo vx; do
    dir="$WORK/$repo-$tool/ws"
    tools=$(scripts/install-turbo-repo "$repo" "$dir")
    (
      cd "$dir"
      export PATH="$tools:$PATH"
      if [[ $tool == turbo ]]; then
        run=("$TURBO" run build) cache=.turbo
      else
        run=("$VX" run build) cache=.vx
      fi
      cold=$(median_ms "rm -rf $cache; clear_dist" "${run[@]}")
      "${run[@]}" >/dev/null 2>&1
      cached=$(median_ms ":" "${run[@]}")
      printf '%-6s %-6s %10s %10s\n' "$repo" "$tool" "$cold" "$cached"
    )
  done
done
