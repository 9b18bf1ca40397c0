#!/usr/bin/env python3
"""How fast `vx mcp` answers once started: the round trip of a tools/call,
from writing the request on the server's stdin to reading the answer on
its stdout, over newline-delimited JSON-RPC (no SDK in between).

    python3 bench/mcp.py VX WORKSPACE [RUNS]

Prints the median and the slowest of RUNS calls (default 31) of
`list_projects` (brief, then with `detail`) and of `show_task` (a child vx
that plans). Generate the 500-project workspace with
`python3 ../shared/bench/gen_workspace.py DIR --projects 500 --files-per-project 10 --deps-per-project 3 --seed 1`.
"""

import json
import statistics
import subprocess
import sys
import time


def main():
    vx, workspace = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 31
    server = subprocess.Popen([vx, "mcp"], cwd=workspace, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    ids = iter(range(1, 1_000_000))

    def call(method, params):
        message = {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}
        start = time.perf_counter()
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()
        line = server.stdout.readline()
        elapsed = time.perf_counter() - start
        answer = json.loads(line)
        if "error" in answer or answer.get("result", {}).get("isError"):
            sys.exit(f"{method} failed: {line[:300]!r}")
        return elapsed, len(line)

    call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
    server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    first_project = None
    for name, args in [
        ("list_projects", {}),
        ("list_projects", {"detail": True}),
        ("show_task", {"task": "p0250#build"}),
    ]:
        times = []
        size = 0
        for _ in range(runs):
            elapsed, size = call("tools/call", {"name": name, "arguments": args})
            times.append(elapsed * 1000)
        label = name + (" detail" if args.get("detail") else "")
        print(f"{label:22} median {statistics.median(times):7.1f} ms   max {max(times):7.1f} ms   answer {size / 1024:7.0f} KiB")
    server.stdin.close()
    server.wait()


if __name__ == "__main__":
    main()
