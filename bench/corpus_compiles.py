#!/usr/bin/env python3
"""List corpus files that hipcc compiles as-is for gfx90a (input for transform/measurement work).

Usage: corpus_compiles.py [--corpus /work/corpus] [--out /work/corpus/compiles_gfx90a.txt]
                          [--want 40] [--timeout 60]

Candidates are corpus files that define a `__global__` kernel containing a loop and include only
angle-bracket headers (no local `#include "..."`), tried smallest first, round-robin over the
repositories so that no single project dominates. Each is compiled alone, one at a time, with
`hipcc --offload-arch=gfx90a --genco -O3 FILE -o TMP.hsaco` (60 s limit); those that succeed are
appended to --out (one path per line) until --want of them compile. Failures go to OUT.failed.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_stats import EXTS, blank  # noqa: E402


def candidates(corpus):
    by_repo = collections.defaultdict(list)
    for root, dirs, names in os.walk(corpus):
        dirs.sort()
        for nm in sorted(names):
            if not nm.endswith(EXTS):
                continue
            path = os.path.join(root, nm)
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
            if "__global__" not in text or re.search(r'^\s*#\s*include\s*"', text, re.M):
                continue
            code, _ = blank(text)
            if not re.search(r"\b__global__\b", code) or not re.search(r"\b(for|while)\s*\(", code):
                continue
            repo = os.path.relpath(path, corpus).split(os.sep)[0]
            by_repo[repo].append((len(text), path))
    for v in by_repo.values():
        v.sort()
    order = []
    queues = [collections.deque(v) for _, v in sorted(by_repo.items())]
    while any(queues):
        for q in queues:
            if q:
                order.append(q.popleft()[1])
    return order


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--out", default="/work/corpus/compiles_gfx90a.txt")
    ap.add_argument("--want", type=int, default=40)
    ap.add_argument("--timeout", type=int, default=60)
    args = ap.parse_args()
    cands = candidates(args.corpus)
    print(f"{len(cands)} self-contained candidates", file=sys.stderr)
    ok = 0
    with tempfile.TemporaryDirectory() as tmp, open(args.out, "w") as out, \
            open(args.out + ".failed", "w") as failed:
        for path in cands:
            if ok >= args.want:
                break
            hsaco = os.path.join(tmp, "x.hsaco")
            try:
                p = subprocess.run(["hipcc", "--offload-arch=gfx90a", "--genco", "-O3", path, "-o", hsaco],
                                   capture_output=True, timeout=args.timeout)
                good = p.returncode == 0 and os.path.exists(hsaco) and os.path.getsize(hsaco) > 0
                why = p.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
            except subprocess.TimeoutExpired:
                good, why = False, ["timeout"]
            if good:
                ok += 1
                out.write(path + "\n")
                out.flush()
            else:
                failed.write(f"{path}\t{why[0] if why else ''}\n")
                failed.flush()
            if os.path.exists(hsaco):
                os.remove(hsaco)
            print(f"{'OK ' if good else 'no '} {ok:3d} {path}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
