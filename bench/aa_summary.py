#!/usr/bin/env python3
"""Summary of bench/aa_false_accepts.sh runs: the accept rate per comparison (with a one-sided
95% Clopper-Pearson upper bound), per tune, the rejections by reason, and each accept.
Usage: bench/aa_summary.py OUT [OUT...] (several result directories are pooled)."""
import csv
import math
import sys


def upper(k, n, conf=0.95):
    if n == 0:
        return float("nan")

    def tail(p):  # P(X <= k)
        return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1))

    lo, hi = k / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if tail(mid) > 1 - conf:
            lo = mid
        else:
            hi = mid
    return hi


rows, tunes = [], []
for out in sys.argv[1:]:
    rows += [dict(r, out=out) for r in csv.DictReader(open(f"{out}/comparisons.tsv"), delimiter="\t")]
    tunes += [l.rstrip("\n").split("\t") for l in open(f"{out}/tunes.tsv") if l.strip()]
ok = [t for t in tunes if t[1] == "rc=0"]
acc = [r for r in rows if r["status"] == "accepted"]
n, k = len(rows), len(acc)
print(f"tunes: {len(tunes)} ({len(ok)} finished, {len(tunes) - len(ok)} refused the baseline)")
print(f"comparisons: {n}, accepted: {k} ({100 * k / max(n, 1):.2f}%, 95% upper bound {100 * upper(k, n):.2f}%)")
print(f"tunes with an accept: {len({(r['out'], r['tune']) for r in acc})} of {len(ok)}")
reasons = {}
for r in rows:
    if r["status"] == "rejected":
        key = r["reason"].split(":")[0]
        reasons[key] = reasons.get(key, 0) + 1
print("rejections:", ", ".join(f"{a} {b}" for a, b in sorted(reasons.items())))
sp = sorted(float(r["speedup"]) for r in rows if r["speedup"] not in ("", "None"))
if sp:
    print(f"speedups: median {sp[len(sp) // 2]:.4f}, min {sp[0]:.4f}, max {sp[-1]:.4f}")
for r in acc:
    print(f"  accepted: {r['out']} tune {r['tune']} {r['mode']} x{r['factor']} {float(r['speedup']):.3f}x p={r['p_value']} after {r['runs']} pairs")
