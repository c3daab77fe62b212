#!/usr/bin/env python3
"""Counts of `check --format json` for two binaries on one corpus, and every file where a count
goes down (issue 26: "no kernel or loop count goes down").

Usage: ab_counts.py BASE_BIN NEW_BIN CORPUS_DIR [--chunk 400] [--show 40]

Per binary: files, parsed files, files with parse errors, kernels, functions (kernel and
`__device__` ones as reported), loops, candidates, blocked loops and loops per blocker, and the
loops whose `unresolved` list is not empty. Then the files where kernels, functions or loops
went down, and the loops whose verdict changed (candidate -> blocked and back), by blocker.
Files are every .cu .cuh .hip .cpp .hpp .h under CORPUS_DIR, sorted, named on the command line
in chunks (includes are followed as `check` follows them).
"""
import argparse
import collections
import json
import os
import subprocess
import sys

EXTS = (".cu", ".cuh", ".hip", ".cpp", ".hpp", ".h")


def run(binary, files, chunk):
    out = {}
    for i in range(0, len(files), chunk):
        part = files[i:i + chunk]
        p = subprocess.run([binary, "check", "--format", "json", "--no-ignore", "--fail-on",
                            "error", *part], capture_output=True)
        if p.returncode not in (0, 1):
            sys.exit(f"{binary}: exit {p.returncode} on files {i}..: "
                     f"{p.stderr.decode('utf-8', 'replace')[:400]}")
        for f in json.loads(p.stdout)["files"]:
            out[f["path"]] = f
        print(f"  {binary}: {len(out)}/{len(files)}", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    return out


def totals(files):
    t = collections.Counter()
    for f in files.values():
        t["files"] += 1
        t["parsed"] += f["parsed"]
        t["parse-error files"] += f["parse_errors"] > 0
        for fn in f["functions"]:
            t["functions"] += 1
            t["kernels"] += fn["kind"] == "kernel"
            for l in fn["loops"]:
                t["loops"] += 1
                t["candidates" if l["verdict"] == "candidate" else "blocked"] += 1
                for b in l["blockers"]:
                    t["blocker " + b] += 1
                t["with unresolved"] += bool(l.get("unresolved"))
    return t


def per_file(f):
    k = sum(fn["kind"] == "kernel" for fn in f["functions"])
    n = len(f["functions"])
    l = sum(len(fn["loops"]) for fn in f["functions"])
    return k, n, l


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("corpus")
    ap.add_argument("--chunk", type=int, default=400)
    ap.add_argument("--show", type=int, default=40)
    a = ap.parse_args()
    files = []
    for root, dirs, names in os.walk(a.corpus):
        dirs.sort()
        files += [os.path.join(root, n) for n in sorted(names) if n.endswith(EXTS)]
    base, new = run(a.base, files, a.chunk), run(a.new, files, a.chunk)
    tb, tn = totals(base), totals(new)
    print(f"corpus {a.corpus}: {len(files)} files")
    print(f"{'':24}{'base':>10}{'new':>10}{'diff':>8}")
    for key in sorted(set(tb) | set(tn), key=lambda k: (k.startswith("blocker"), k)):
        print(f"{key:24}{tb[key]:>10}{tn[key]:>10}{tn[key] - tb[key]:>+8}")
    drops = []
    for p in files:
        if p not in base or p not in new:
            continue
        b, n = per_file(base[p]), per_file(new[p])
        if any(y < x for x, y in zip(b, n)):
            drops.append((p, b, n))
    print(f"files where kernels, functions or loops went down: {len(drops)}")
    for p, b, n in drops[: a.show]:
        print(f"  {p}: (kernels, functions, loops) {b} -> {n}")
    # Verdict changes of loops found by both (same file, function name and line).
    changes = collections.Counter()
    examples = collections.defaultdict(list)
    for p in files:
        if p not in base or p not in new:
            continue
        def loops(f):
            return {(fn["name"], l["line"], l["column"]): l for fn in f["functions"]
                    for l in fn["loops"]}
        lb, ln = loops(base[p]), loops(new[p])
        for key in lb.keys() & ln.keys():
            x, y = sorted(lb[key]["blockers"]), sorted(ln[key]["blockers"])
            if x != y:
                c = f"{','.join(x) or 'candidate'} -> {','.join(y) or 'candidate'}"
                changes[c] += 1
                if len(examples[c]) < 3:
                    examples[c].append(f"{p}:{key[1]}")
    print("verdict changes of loops both report:")
    for c, n in changes.most_common():
        print(f"  {n:6}  {c}   e.g. {'; '.join(examples[c])}")


if __name__ == "__main__":
    main()
