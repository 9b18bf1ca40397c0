#!/usr/bin/env python3
"""The dashboard's first page with 10,000 recorded runs (issue 17: <= 200 ms).

Makes a workspace whose .vx/history.db has RUNS_IN_DB invocations of
TASKS tasks each (500,000 task rows by default), in the schema vx itself
creates (`vx history` opens the database first, so every column and index
is the real one), starts `vx dashboard --port 0`, and times the first page
as a browser loads it: the HTML, then the three requests its script makes
(`/api/runs`, `/api/stats`, `/api/live`, in parallel as the page does).
Each sample is one whole page load on fresh connections; the very first
(cold: SQLite's pages not yet in memory) is reported apart from the median
of N. Also times one run's document and one task's history.

    bench/dashboard.py                          (VX defaults to target/release/vx)
    VX=path/to/vx N=21 RUNS_IN_DB=10000 TASKS=50 bench/dashboard.py
"""

import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VX = Path(os.environ.get("VX") or Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "vx").resolve()
N = int(os.environ.get("N", "21"))
RUNS_IN_DB = int(os.environ.get("RUNS_IN_DB", "10000"))
TASKS = int(os.environ.get("TASKS", "50"))


def fill(db: Path) -> None:
    """RUNS_IN_DB runs over 60 days, TASKS tasks each: mostly hits, some misses, a few failures."""
    rng = random.Random(1)
    conn = sqlite3.connect(db)
    tasks = [f"p{n // 2}#{'build' if n % 2 == 0 else 'test'}" for n in range(TASKS)]
    base = {t: rng.randint(200, 20000) for t in tasks}
    start = 1_760_000_000_000
    inv_rows, task_rows = [], []
    for i in range(1, RUNS_IN_DB + 1):
        started = start + i * (60 * 86_400_000 // RUNS_IN_DB)
        failed = rng.random() < 0.05
        branch = rng.choice(["main", "main", "main", "feature/a", "feature/b"])
        tags = json.dumps([["ci", "1"]] if rng.random() < 0.5 else [])
        clock, wall = 0, 0
        for n, t in enumerate(tasks):
            hit = rng.random() < 0.8
            duration = rng.randint(1, 5) if hit else int(base[t] * rng.uniform(0.8, 1.3))
            status = "failed" if failed and n == TASKS - 1 else "ok"
            deps = json.dumps([tasks[n - 1]] if n % 2 == 1 else ([tasks[n - 2]] if n >= 2 else []))
            task_rows.append((i, t, f"{i:064x}", status, "local" if hit else "miss", duration,
                              1 if status == "failed" else 0, 1 if hit else rng.choice([1, 1, 1, 2]),
                              None if hit else duration // 2, None if hit else rng.randint(1 << 20, 1 << 28),
                              clock, "local", deps, "exit code 1" if status == "failed" else None))
            clock += duration // 4
            wall = max(wall, clock + duration)
        inv_rows.append((i, f"vx run build test --filter p{i % 25}...", "/w", tags, started, started + wall + 40,
                         1 if failed else 0, json.dumps(["run", "build", "test"]), f"{i:040x}", branch, "strict", wall))
    with conn:
        conn.executemany("INSERT INTO invocations (id, command, cwd, tags, started_ms, ended_ms, exit_code, args,"
                         " git_commit, branch, env_mode, wall_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", inv_rows)
        conn.executemany("INSERT INTO task_runs (invocation, task, key, status, cache, duration_ms, exit_code, attempts,"
                         " cpu_ms, peak_rss_bytes, start_ms, executor, dependencies, reason)"
                         " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", task_rows)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def get(url: str) -> bytes:
    with urllib.request.urlopen(url) as response:
        assert response.status == 200, url
        return response.read()


def page_load(base: str, pool: ThreadPoolExecutor) -> float:
    began = time.perf_counter()
    get(base)
    list(pool.map(get, [base + "api/runs", base + "api/stats", base + "api/live"]))
    return time.perf_counter() - began


def timed(url: str) -> float:
    began = time.perf_counter()
    get(url)
    return time.perf_counter() - began


def main() -> int:
    if not VX.is_file():
        print(f"no vx binary at {VX}: cargo build --release -p vx", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="vx-bench-dashboard-"))
    (work / "vx.toml").write_text('[workspace]\nprojects = []\n')
    subprocess.run([VX, "history"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    began = time.perf_counter()
    fill(work / ".vx" / "history.db")
    size = (work / ".vx" / "history.db").stat().st_size
    print(f"history.db: {RUNS_IN_DB} runs x {TASKS} tasks, {size / 1e6:.0f} MB, filled in {time.perf_counter() - began:.1f} s")
    os.environ.pop("http_proxy", None)
    os.environ.pop("HTTP_PROXY", None)
    server = subprocess.Popen([VX, "dashboard", "--port", "0"], cwd=work, stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        base = line.split(": ", 1)[1].strip()
        with ThreadPoolExecutor(3) as pool:
            cold = page_load(base, pool)
            samples = sorted(page_load(base, pool) for _ in range(N))
        runs = json.loads(get(base + "api/runs"))["runs"]
        doc = statistics.median(timed(base + f"api/runs/{runs[0]['id']}") for _ in range(N))
        task = statistics.median(timed(base + "api/tasks/p3%23build/history") for _ in range(N))
        ms = lambda s: f"{s * 1000:.1f} ms"
        print(f"first page (HTML + /api/runs + /api/stats + /api/live): cold {ms(cold)}; "
              f"min / median / max of {N}: {ms(samples[0])} / {ms(statistics.median(samples))} / {ms(samples[-1])}")
        print(f"a run's document ({TASKS} tasks): median {ms(doc)}; a task's history: median {ms(task)}")
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
