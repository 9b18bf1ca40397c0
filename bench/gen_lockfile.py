#!/usr/bin/env python3
"""Adds external dependencies and an npm `package-lock.json` (v3) to a
workspace made by the shared `gen_workspace.py`, for the benchmarks of
dependency-aware keys: 2,000 packages `ext-0` ... `ext-1999`, each
depending on up to three later-numbered ones, and every project depending
on five of them beside its workspace dependencies. Integrity hashes are
made up but well-formed (vx hashes them; nothing installs them).

    bench/gen_lockfile.py WORKSPACE [--packages 2000] [--per-project 5] [--seed 1]

Deterministic for a seed. Run it again after `--bump K` to move package
`ext-K` to version 1.0.1, as an upgrade would (the lockfile changes, and
only the projects whose slice holds `ext-K` should rebuild).
"""

import argparse
import base64
import hashlib
import json
import os
import random


def integrity(name, version):
    digest = hashlib.sha512(f"{name}@{version}".encode()).digest()
    return "sha512-" + base64.b64encode(digest).decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workspace")
    ap.add_argument("--packages", type=int, default=2000)
    ap.add_argument("--per-project", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bump", type=int, default=None, help="give ext-K version 1.0.1")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    n = args.packages
    deps = [sorted(set(rng.randrange(i + 1, n) for _ in range(rng.randint(0, 3)))) if i + 1 < n else [] for i in range(n)]
    version = ["1.0.1" if i == args.bump else "1.0.0" for i in range(n)]

    root = args.workspace
    pkgs_dir = os.path.join(root, "packages")
    projects = sorted(os.listdir(pkgs_dir))
    lock = {
        "name": "bench-root",
        "version": "0.0.0",
        "lockfileVersion": 3,
        "requires": True,
        "packages": {"": {"name": "bench-root", "version": "0.0.0", "workspaces": ["packages/*"]}},
    }
    for p in projects:
        path = os.path.join(pkgs_dir, p, "package.json")
        with open(path) as f:
            pkg = json.load(f)
        ext = sorted(set(rng.randrange(n) for _ in range(args.per_project)))
        pkg.setdefault("dependencies", {}).update({f"ext-{i}": "^1.0.0" for i in ext})
        with open(path, "w") as f:
            f.write(json.dumps(pkg, indent=2) + "\n")
        lock["packages"][f"packages/{p}"] = {
            "name": pkg["name"],
            "version": pkg["version"],
            "dependencies": pkg["dependencies"],
        }
        lock["packages"][f"node_modules/{pkg['name']}"] = {"resolved": f"packages/{p}", "link": True}
    for i in range(n):
        name = f"ext-{i}"
        entry = {
            "version": version[i],
            "resolved": f"https://registry.npmjs.org/{name}/-/{name}-{version[i]}.tgz",
            "integrity": integrity(name, version[i]),
        }
        if deps[i]:
            entry["dependencies"] = {f"ext-{j}": "^1.0.0" for j in deps[i]}
        lock["packages"][f"node_modules/{name}"] = entry
    with open(os.path.join(root, "package-lock.json"), "w") as f:
        f.write(json.dumps(lock, indent=2) + "\n")


if __name__ == "__main__":
    main()
