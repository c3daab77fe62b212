#!/usr/bin/env python3
"""Interleaved A/B timing of `check --format json` for two binaries on one corpus.

Usage: ab_check.py BASE_BIN NEW_BIN [--corpus /work/corpus] [--pairs 20] [--warmup 2]
                   [--args "check --format json --no-ignore"]

Runs A B A B ... (the order inside each pair alternates, so drift on a shared machine hits
both), measures each run's wall time and its CPU time (user + system of the child, from
wait4), and prints per binary the median and min of both, the median of the per-pair ratios
NEW/BASE (wall and CPU), the core count and the load average before and after. On a loaded
machine the CPU ratio is the steadier figure; hyperfine (bench/check_vs_parse.sh) gives the
same medians on a quiet one.
"""
import argparse
import os
import statistics
import subprocess
import time


def once(argv):
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{argv[0]} exited {code}")
    return wall, ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--args", default="check --format json --no-ignore")
    a = ap.parse_args()
    argv = {k: [b, *a.args.split(), a.corpus] for k, b in (("base", a.base), ("new", a.new))}
    load_before = open("/proc/loadavg").read().split()[:3]
    for _ in range(a.warmup):
        once(argv["base"])
        once(argv["new"])
    res = {"base": [], "new": []}
    for i in range(a.pairs):
        order = ("base", "new") if i % 2 == 0 else ("new", "base")
        for k in order:
            res[k].append(once(argv[k]))
    load_after = open("/proc/loadavg").read().split()[:3]
    print(f"corpus {a.corpus}; {a.pairs} interleaved pairs after {a.warmup} warm-up pairs; "
          f"{os.cpu_count()} cores; load before {' '.join(load_before)}, after {' '.join(load_after)}")
    for k in ("base", "new"):
        w = [x[0] for x in res[k]]
        c = [x[1] for x in res[k]]
        print(f"{k:4s} wall median {statistics.median(w):.3f} s (min {min(w):.3f}); "
              f"CPU median {statistics.median(c):.3f} s (min {min(c):.3f})")
    wr = [n[0] / b[0] for b, n in zip(res["base"], res["new"])]
    cr = [n[1] / b[1] for b, n in zip(res["base"], res["new"])]
    print(f"new/base per pair: wall median {statistics.median(wr):.3f}, "
          f"CPU median {statistics.median(cr):.3f}; ratio of medians: wall "
          f"{statistics.median([x[0] for x in res['new']]) / statistics.median([x[0] for x in res['base']]):.3f}, "
          f"CPU {statistics.median([x[1] for x in res['new']]) / statistics.median([x[1] for x in res['base']]):.3f}; "
          f"ratio of minima: wall {min(x[0] for x in res['new']) / min(x[0] for x in res['base']):.3f}, "
          f"CPU {min(x[1] for x in res['new']) / min(x[1] for x in res['base']):.3f}")


if __name__ == "__main__":
    main()
