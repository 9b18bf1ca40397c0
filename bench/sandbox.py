#!/usr/bin/env python3
"""What each way of sandboxing a task costs (issue 16's decision).

Runs the shared generator's `build.js` (one project, 10 source files of
about 4 KB) as a task would run, in turns, under each mechanism vx could
use, and prints the median wall time of each and its overhead over the
plain run:

    plain      fork, exec `node build.js`
    landlock   the same, the child restricted by Landlock before exec: read
               and execute on the system paths (as vx's: no /proc), node, the project's sources
               and build.js; write on dist/ and /dev; no TCP (ABI >= 4)
    netns      the same, the child in a user and network namespace of its
               own (no network but a downed loopback), before exec
    both       landlock and netns together
    bwrap      bubblewrap: the root read-only, the project writable, no
               network (what vx's `sandbox` executor plugin does)

Every variant forks through the same Python `preexec_fn`, so the fork and
exec paths are alike; the Landlock ruleset is built in the parent for
each run, as vx would build one per task, and its cost is counted.

    bench/sandbox.py [--runs N]       (SHARED_BENCH: the generators' dir,
                                       ../shared/bench by default)
    bench/sandbox.py --vx PATH [--projects N] [--runs N]

With `--vx`, it measures vx itself instead: `vx run build --cache off
--concurrency 1` over N projects of the generator (default 30), with and
without `sandbox = true` on their `build`, alternating; the difference
divided by N is the overhead per task, policy and ruleset included.

Needs Linux with Landlock (5.13+), unprivileged user namespaces, node and
bwrap. Whole-process wall time, median of N runs (default 41) each, the
variants alternating.
"""

import argparse
import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# The shared generators, as bench/versus.sh finds them (SHARED_BENCH).
GEN = os.path.join(os.path.realpath(os.environ.get("SHARED_BENCH", "../shared/bench")), "gen_workspace.py")

libc = ctypes.CDLL(None, use_errno=True)
SYS_CREATE, SYS_ADD, SYS_RESTRICT = 444, 445, 446
PR_SET_NO_NEW_PRIVS = 38
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000

# Landlock access rights (uapi/linux/landlock.h).
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
READ = EXECUTE | READ_FILE | READ_DIR
FS_ALL_V1 = (1 << 13) - 1
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2


class RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32)]


def abi():
    return libc.syscall(SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))


def fs_all(version):
    rights = FS_ALL_V1
    if version >= 2:
        rights |= 1 << 13  # REFER
    if version >= 3:
        rights |= 1 << 14  # TRUNCATE
    if version >= 5:
        rights |= 1 << 15  # IOCTL_DEV
    return rights


def ruleset(version, reads, writes):
    """A Landlock ruleset fd: READ beneath `reads`, everything beneath `writes`."""
    everything = fs_all(version)
    attr = RulesetAttr(everything, NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 else 0, 0)
    size = 16 if version < 6 else 24
    fd = libc.syscall(SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    for paths, rights in ((reads, READ), (writes, everything)):
        for path in paths:
            if not os.path.exists(path):
                continue
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            allowed = rights if os.path.isdir(path) else rights & (EXECUTE | READ_FILE | WRITE_FILE | (1 << 14))
            rule = PathBeneath(allowed, pfd)
            if libc.syscall(SYS_ADD, fd, 1, ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            os.close(pfd)
    return fd


def restrict(fd):
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl")
    if libc.syscall(SYS_RESTRICT, fd, ctypes.c_uint32(0)) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")


def enter_netns(uid, gid):
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def setup(base):
    """One project of the shared generator's workspace."""
    out = os.path.join(base, "ws")
    subprocess.run(
        [sys.executable, GEN, out, "--projects", "1", "--files-per-project", "10", "--deps-per-project", "0",
         "--seed", "1", "--no-git"],
        check=True, stdout=subprocess.DEVNULL)
    project = os.path.join(out, "packages", sorted(os.listdir(os.path.join(out, "packages")))[0])
    return project


def vx_overhead(vx, projects, runs):
    base = tempfile.mkdtemp(prefix="vx-sandbox-bench-")
    try:
        dirs = {}
        for variant in ("plain", "sandboxed"):
            out = os.path.join(base, variant)
            subprocess.run(
                [sys.executable, GEN, out, "--projects", str(projects), "--files-per-project", "10",
                 "--deps-per-project", "3", "--seed", "1", "--no-git"],
                check=True, stdout=subprocess.DEVNULL)
            # The generator's tasks read build.js without declaring it,
            # which the sandbox refuses (rightly: an edit to it would not
            # re-key them); both variants declare it.
            for p in os.listdir(os.path.join(out, "packages")):
                path = os.path.join(out, "packages", p, "vx.toml")
                with open(path) as f:
                    text = f.read().replace('inputs = ["src/**"]', 'inputs = ["src/**", "build.js"]')
                if variant == "sandboxed":
                    text = text.replace("[tasks.build]", "[tasks.build]\nsandbox = true", 1)
                with open(path, "w") as f:
                    f.write(text)
            dirs[variant] = out
        times = {v: [] for v in dirs}
        for _ in range(runs):
            for variant, out in dirs.items():
                start = time.perf_counter()
                done = subprocess.run([vx, "-C", out, "run", "build", "--cache", "off", "--concurrency", "1"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                times[variant].append(time.perf_counter() - start)
                if done.returncode != 0:
                    sys.exit(f"{variant}: vx failed: {done.stderr.decode(errors='replace')}")
        plain, boxed = statistics.median(times["plain"]), statistics.median(times["sandboxed"])
        print(f"vx run build, {projects} projects, --concurrency 1, median of {runs}:")
        print(f"  plain {plain:.3f} s, sandboxed {boxed:.3f} s: {(boxed - plain) / projects * 1000:+.2f} ms per task")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--vx", help="measure this vx binary instead of the mechanisms")
    parser.add_argument("--projects", type=int, default=30)
    args = parser.parse_args()
    if args.vx:
        return vx_overhead(args.vx, args.projects, args.runs)
    version = abi()
    if version < 1:
        sys.exit("this kernel has no Landlock")
    node = shutil.which("node")
    bwrap = shutil.which("bwrap")
    base = tempfile.mkdtemp(prefix="vx-sandbox-bench-")
    try:
        project = setup(base)
        dist = os.path.join(project, "dist")
        os.makedirs(dist, exist_ok=True)
        system = ["/usr", "/lib", "/lib64", "/bin", "/etc", "/sys", os.path.realpath(node)]
        reads = system + [os.path.join(project, "src"), os.path.join(project, "build.js"),
                          os.path.join(project, "package.json")]
        writes = [dist, "/dev"]
        uid, gid = os.getuid(), os.getgid()
        argv = [node, "build.js"]

        def plain():
            return argv, lambda: None

        opened = []

        def landlock():
            fd = ruleset(version, reads, writes)
            opened.append(fd)
            return argv, lambda: restrict(fd)

        def netns():
            return argv, lambda: enter_netns(uid, gid)

        def both():
            fd = ruleset(version, reads, writes)
            opened.append(fd)
            return argv, lambda: (enter_netns(uid, gid), restrict(fd))

        def bubblewrap():
            return [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", project, project,
                    "--unshare-net", "--die-with-parent", "--chdir", project] + argv, lambda: None

        # The sandboxes must hold, or the figures mean nothing: a read
        # outside the rules fails under Landlock, and a TCP connection to a
        # listener here fails in the namespace and under Landlock's TCP rules.
        outside = os.path.join(base, "outside.txt")
        with open(outside, "w") as f:
            f.write("secret")
        import socket
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        probes = {
            "read": [node, "-e", f"require('fs').readFileSync({outside!r})"],
            "tcp": [node, "-e", f"require('net').connect({port}, '127.0.0.1').on('error', () => process.exit(3)).on('connect', () => process.exit(0))"],
        }
        for probe, cmd in probes.items():
            for name, make in (("landlock", landlock), ("netns", netns)):
                if probe == "read" and name == "netns":
                    continue
                _, pre = make()
                code = subprocess.run(cmd, cwd=project, preexec_fn=pre, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, close_fds=False).returncode
                if code == 0:
                    sys.exit(f"the {probe} probe succeeded under {name}: the sandbox does not hold")
                while opened:
                    os.close(opened.pop())
        if subprocess.run(probes["tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            sys.exit("the tcp probe fails even unsandboxed")
        listener.close()

        variants = {"plain": plain, "landlock": landlock, "netns": netns, "both": both}
        if bwrap:
            variants["bwrap"] = bubblewrap
        times = {name: [] for name in variants}
        for _ in range(args.runs):
            for name, make in variants.items():
                start = time.perf_counter()
                cmd, pre = make()
                done = subprocess.run(cmd, cwd=project, preexec_fn=pre, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, close_fds=False)
                times[name].append(time.perf_counter() - start)
                while opened:
                    os.close(opened.pop())
                if done.returncode != 0:
                    sys.exit(f"{name} failed: {done.stderr.decode(errors='replace')}")
        plain_median = statistics.median(times["plain"])
        print(f"Landlock ABI {version}; {args.runs} runs each, alternating; node {subprocess.check_output([node, '--version']).decode().strip()}")
        print(f"{'variant':10} {'median':>9} {'overhead':>9}")
        for name, ts in times.items():
            median = statistics.median(ts)
            print(f"{name:10} {median * 1000:7.2f}ms {(median - plain_median) * 1000:+7.2f}ms")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
