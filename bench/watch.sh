#!/usr/bin/env bash
# Watch benchmarks on a 200-project workspace: (a) the latency from a saved
# edit to the start of the task it re-runs, median over EDITS edits, and
# (b) the idle CPU of `vx watch build` (vx and its guard) once the first run
# has settled, over IDLE_SECS seconds, with the OS watcher and with polling.
#
# The edited project is the generator's `touch_project` (a leaf: nothing
# depends on it), whose `build` is overridden to append `date +%s%N` to a
# file before `node build.js`: that line is the task's start. The edit time
# is taken right before the file is written; each edit appends a new line,
# so every edit is a cache miss and an execution.
#
#   bench/watch.sh                          (VX defaults to target/release/vx,
#                                            built with cargo if missing)
#   VX=path/to/vx EDITS=20 IDLE_SECS=30 bench/watch.sh
#
# Settings: VX, EDITS [20], IDLE_SECS [30], POLL_MS [500, the poll interval
# of the idle measurement with polling; 0 skips it], WORK [a temp dir],
# SHARED_BENCH [../shared/bench: gen_workspace.py].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VX=${VX:-${CARGO_TARGET_DIR:-target}/release/vx}
if [[ ! -x "$VX" ]]; then
  echo "building $VX" >&2
  cargo build --release --quiet -p vx
fi
VX=$(realpath "$VX")
SHARED_BENCH=$(realpath "${SHARED_BENCH:-../shared/bench}")
EDITS=${EDITS:-20}
IDLE_SECS=${IDLE_SECS:-30}
POLL_MS=${POLL_MS:-500}
WORK=${WORK:-$(mktemp -d)}

ws="$WORK/ws200"
[[ -d "$ws" ]] || python3 "$SHARED_BENCH/gen_workspace.py" "$ws" --projects 200 \
  --files-per-project 10 --deps-per-project 3 --seed 1 >/dev/null

python3 - "$VX" "$ws" "$WORK" "$EDITS" "$IDLE_SECS" "$POLL_MS" <<'PY'
import atexit, json, os, statistics, subprocess, sys, time

vx, ws, work, edits, idle_secs, poll_ms = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:])
meta = json.load(open(os.path.join(ws, "bench-meta.json")))
leaf, touch = meta["touch_project"], os.path.join(ws, meta["touch_file"])
starts = os.path.join(work, "starts.txt")
debounce_ms = int(os.environ.get("VX_WATCH_DEBOUNCE_MS", "50"))
tick = os.sysconf("SC_CLK_TCK")

# The leaf's build records when it starts (outside the workspace).
toml = os.path.join(ws, "packages", leaf, "vx.toml")
old = open(toml).read()
new = old.replace('command = "node build.js"', f'command = "date +%s%N >> {starts}; node build.js"')
if new != old:
    open(toml, "w").write(new)
running = []  # stopped on any exit, so no vx outlives the script


def start_watch(extra_env):
    env = dict(os.environ, NO_COLOR="1", **extra_env)
    out = open(os.path.join(work, "watch.out"), "w")
    proc = subprocess.Popen([vx, "watch", "build"], cwd=ws, env=env, stdout=out, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    running.append(proc)
    return proc


def settled(n):
    """Waits until `n` cycles have ended (bounded)."""
    deadline = time.time() + 600
    while time.time() < deadline:
        text = open(os.path.join(work, "watch.out")).read()
        if text.count("watching for changes\n") >= n:
            return
        time.sleep(0.005)
    sys.exit("vx watch did not settle:\n" + text[-2000:])


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def guards(pid):
    found = []
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
            if ppid == pid and b"__guard" in open(f"/proc/{p}/cmdline", "rb").read().split(b"\0"):
                found.append(int(p))
        except OSError:
            pass
    return found


def idle_cpu(label, extra_env):
    proc = start_watch(extra_env)
    settled(1)
    time.sleep(2)  # the first run's last events judged
    pids = [proc.pid] + guards(proc.pid)
    before, t0 = sum(cpu_ticks(p) for p in pids), time.monotonic()
    time.sleep(idle_secs)
    after, t1 = sum(cpu_ticks(p) for p in pids), time.monotonic()
    proc.terminate()
    proc.wait()
    share = (after - before) / tick / (t1 - t0) * 100
    print(f"idle CPU, {label}: {share:.2f}% of a core over {t1 - t0:.0f} s "
          f"({after - before} ticks of 1/{tick} s; vx and {len(pids) - 1} guard)")


def stop_all():
    for proc in running:
        if proc.poll() is None:
            proc.terminate()
            proc.wait()


atexit.register(stop_all)

# (a) latency, with the OS watcher.
if os.path.exists(starts):
    os.remove(starts)
proc = start_watch({})
settled(1)
time.sleep(1)
read_starts = lambda: open(starts).read().split() if os.path.exists(starts) else []
base = len(read_starts())  # the first run's start, unless it was a cache hit
latencies = []
for i in range(1, edits + 1):
    t_edit = time.time_ns()
    with open(touch, "a") as f:
        f.write(f"// edit {i} {t_edit}\n")
    settled(i + 1)
    lines = read_starts()
    if len(lines) != base + i:
        sys.exit(f"expected {base + i} starts of {leaf}#build, found {len(lines)}")
    latencies.append((int(lines[-1]) - t_edit) / 1e6)
    time.sleep(0.3)  # a pause between saves, as a person makes
proc.terminate()
proc.wait()
med = statistics.median(latencies)
print(f"latency, edit to task start (median of {edits}): {med:.1f} ms; minus the {debounce_ms} ms debounce: "
      f"{med - debounce_ms:.1f} ms (min {min(latencies):.1f}, max {max(latencies):.1f})")

# (b) idle CPU.
idle_cpu("OS watcher", {})
if poll_ms > 0:
    idle_cpu(f"polling every {poll_ms} ms", {"VX_WATCH_POLL": str(poll_ms)})
PY
