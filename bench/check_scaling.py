#!/usr/bin/env python3
"""Scaling of `check` with the number of loops in one function (issue 21, item 8).

Usage: check_scaling.py BASE_BIN NEW_BIN [--loops 25000,50000,100000] [--oneline-mb 50]
                        [--runs 3] [--dir /tmp/check_scaling]

Generates, per N in --loops, one kernel holding N `for` loops (one a line), and one kernel of
--oneline-mb megabytes written on a single line; runs `check --format json` with both binaries,
interleaved (A B, then B A, ...), and prints per input and binary the median wall time, the
median CPU time (user + system, from wait4) and the peak resident memory (ru_maxrss), plus the
core count and the load average before and after. Both binaries must produce the same JSON.
"""
import argparse
import os
import statistics
import subprocess
import time


def kernel(n, sep):
    body = sep.join(f"for (int i{k} = 0; i{k} < n; i{k}++) a[i{k}] += 1;" for k in range(n))
    return f"__global__ void k(float* a, int n) {{{sep}{body}{sep}}}{sep}"


def once(argv, out):
    t0 = time.perf_counter()
    with open(out, "wb") as f:
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{argv[0]} exited {code}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--loops", default="25000,50000,100000")
    ap.add_argument("--oneline-mb", type=float, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/check_scaling")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    inputs = []
    for n in [int(x) for x in a.loops.split(",") if x]:
        p = os.path.join(a.dir, f"loops{n}.cu")
        with open(p, "w") as f:
            f.write(kernel(n, "\n"))
        inputs.append((f"{n} loops, one a line", p))
    if a.oneline_mb > 0:
        per_loop = len(kernel(2, " ")) - len(kernel(1, " "))
        n = int(a.oneline_mb * 1e6 / per_loop)
        p = os.path.join(a.dir, "oneline.cu")
        with open(p, "w") as f:
            f.write(kernel(n, " ").rstrip())
        inputs.append((f"{os.path.getsize(p) / 1e6:.1f} MB on one line ({n} loops)", p))
    load_before = open("/proc/loadavg").read().split()[:3]
    print(f"{os.cpu_count()} cores; load before {' '.join(load_before)}")
    for label, path in inputs:
        res = {"base": [], "new": []}
        outs = {k: os.path.join(a.dir, f"out.{k}.json") for k in res}
        for i in range(a.runs):
            order = ("base", "new") if i % 2 == 0 else ("new", "base")
            for k in order:
                argv = [getattr(a, k), "check", "--format", "json", path]
                res[k].append(once(argv, outs[k]))
        same = open(outs["base"], "rb").read() == open(outs["new"], "rb").read()
        print(f"{label}: same JSON: {same}")
        for k in ("base", "new"):
            w = statistics.median(x[0] for x in res[k])
            c = statistics.median(x[1] for x in res[k])
            m = max(x[2] for x in res[k])
            print(f"  {k:4s} wall median {w:8.2f} s  CPU median {c:8.2f} s  peak RSS {m:8.0f} MB")
    print(f"load after {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
