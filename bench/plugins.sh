#!/usr/bin/env bash
# Plugin benchmarks (issue 5, "Performance"): the in-process figures of
# `cargo bench -p vx --bench plugins` (warm start of three plugins, the
# per-call overhead of `info` on a fresh instance and of a cache backend's
# `exists` on a pooled one, junit rendering a 1,000-task run; see
# host/benches/plugins.rs), then what a reporter plugin adds to a whole vx
# invocation: `vx run build --report junit --report-file /dev/null` (A)
# against `vx run build` (B) on a small, fully cached workspace, alternating
# A, B, A, … in one session, whole-process wall time, median of RUNS runs.
#
#   bench/plugins.sh                        (VX defaults to target/release/vx)
#   VX=path/to/vx RUNS=30 bench/plugins.sh
#   SKIP_CARGO_BENCH=1 bench/plugins.sh     (the whole-process figure only)
#
# Settings: VX, RUNS [30], PROJECTS [10], WORK [a temp dir], SHARED_BENCH
# [../shared/bench: gen_workspace.py and timecmd.py], SKIP_CARGO_BENCH,
# VX_BENCH_ROUNDS and VX_BENCH_PROCESSES (passed to the cargo bench).
# Components missing from plugins/dist or tests/plugins/dist are built with
# scripts/build-plugins first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
RUNS=${RUNS:-30}
PROJECTS=${PROJECTS:-10}
WORK=${WORK:-$(mktemp -d)}
TIMER="python3 $SHARED_BENCH/timecmd.py"

for c in junit http-cache sandbox; do
  [[ -f plugins/dist/$c.wasm ]] || { scripts/build-plugins; break; }
done
for c in testkit testcache; do
  [[ -f tests/plugins/dist/$c.wasm ]] || { scripts/build-plugins tests/plugins; break; }
done

if [[ -z "${SKIP_CARGO_BENCH:-}" ]]; then
  echo "== cargo bench -p vx --bench plugins"
  cargo bench --quiet -p vx --bench plugins
fi

VX=${VX:-${CARGO_TARGET_DIR:-target}/release/vx}
if [[ ! -x "$VX" ]]; then
  echo "building $VX" >&2
  cargo build --release --quiet -p vx
fi
VX=$(realpath "$VX")
JUNIT=$(realpath plugins/dist/junit.wasm)

ws="$WORK/ws$PROJECTS"
if [[ ! -d "$ws" ]]; then
  python3 "$SHARED_BENCH/gen_workspace.py" "$ws" --projects "$PROJECTS" \
    --files-per-project 10 --deps-per-project 3 --seed 1 >/dev/null
  (cd "$ws" && "$VX" plugin add "$JUNIT" >/dev/null)
fi
cd "$ws"
# Fill the cache, then check that both commands are fully cached and work.
"$VX" run build >/dev/null
"$VX" run build | tail -n 1
"$VX" run build --report junit --report-file "$WORK/report.xml" | tail -n 1
echo "junit report: $(grep -c '<testcase' "$WORK/report.xml") testcases"

echo "== whole process, $PROJECTS fully cached tasks: --report junit (A) vs no report (B), median of $RUNS, alternating"
$TIMER -n "$RUNS" --warmup 2 \
  --vs "'$VX' run build" \
  -- "$VX" run build --report junit --report-file /dev/null | tee "$WORK/plugins.txt" | grep -E 'exit 0|wall'
python3 - "$WORK/plugins.txt" <<'PY'
import sys
rows = {l.split()[0]: float(l.split()[4]) for l in open(sys.argv[1]) if " wall s " in l}
print("the junit plugin's cost per invocation (median A - median B): %.1f ms" % ((rows["A"] - rows["B"]) * 1e3))
PY
