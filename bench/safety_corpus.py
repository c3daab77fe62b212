#!/usr/bin/env python3
"""Safety property of `hip-unroll unroll` on a third-party corpus (issue 9).

Usage: safety_corpus.py [--bin target/release/hip-unroll] [--corpus /work/corpus]
                        [--jobs 2] [--chunk 400] [--json OUT.json] [--limit N]

For every corpus file (the files a directory walk of `check` takes), it runs
`check --format json` and then checks, per file:

  * loop ids are unique within the file;
  * every loop `check` reports `blocked` is refused by `unroll`: in pragma mode by its id, and
    in manual mode by its line when no other loop starts on that line (else by id again); the
    refusal must be exit 1 with the reason id `[guard-blocked]`, stdout empty;
  * a loop named by line resolves to the same id as `check` reports (the stderr message names
    the id);
  * a line on which several loops start is refused with exit 2 and the candidates listed.

It prints the number of files, loops, blocked loops, unroll invocations, and every violation
(exit 1 when there is one). `--limit N` stops after N blocked loops (quick runs).
"""
import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys

EXTS = (".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c++", ".cp", ".h", ".hh", ".hpp",
        ".hxx", ".h++", ".inl", ".ipp", ".tpp", ".tcc", ".txx")


def corpus_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for f in sorted(files):
            if f.lower().endswith(EXTS) and not f.startswith("."):
                out.append(os.path.join(d, f))
    return out


def check(binary, files, chunk):
    reports = []
    for i in range(0, len(files), chunk):
        part = files[i:i + chunk]
        p = subprocess.run([binary, "check", "--format", "json", "--no-ignore", *part],
                           capture_output=True, text=True)
        if p.returncode not in (0, 1):
            sys.exit(f"check exited {p.returncode} on a chunk starting at {part[0]}: "
                     f"{p.stderr[:2000]}")
        reports.extend(json.loads(p.stdout)["files"])
    return reports


def unroll(binary, path, ref, mode):
    p = subprocess.run([binary, "unroll", path, "--loop", ref, "--factor", "4", "--mode", mode],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__),
                                                  "../target/release/hip-unroll"))
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--chunk", type=int, default=400)
    ap.add_argument("--json")
    ap.add_argument("--limit", type=int, default=0)
    a = ap.parse_args()

    files = corpus_files(a.corpus)
    reports = check(a.bin, files, a.chunk)
    violations = []
    stats = collections.Counter()
    tasks = []
    for f in reports:
        stats["files"] += 1
        if not f.get("parsed", True):
            continue
        stats["parsed files"] += 1
        loops = [l for fn in f["functions"] for l in fn["loops"]]
        stats["loops"] += len(loops)
        ids = collections.Counter(l["id"] for l in loops)
        dups = [i for i, n in ids.items() if n > 1]
        if dups:
            violations.append(f"{f['path']}: duplicate ids {dups[:5]}")
        else:
            stats["files with unique ids"] += 1
        by_line = collections.Counter(l["line"] for l in loops)
        for l in loops:
            if by_line[l["line"]] > 1:
                stats["loops sharing their line"] += 1
            if l["verdict"] != "blocked":
                continue
            stats["blocked loops"] += 1
            if a.limit and stats["blocked loops"] > a.limit:
                continue
            tasks.append((f["path"], l["id"], l["id"], "pragma", l["blockers"]))
            if by_line[l["line"]] == 1:
                tasks.append((f["path"], str(l["line"]), l["id"], "manual", l["blockers"]))
            else:
                tasks.append((f["path"], l["id"], l["id"], "manual", l["blockers"]))
                tasks.append((f["path"], str(l["line"]), l["id"], "ambiguous-line", None))

    def run(t):
        path, ref, want_id, mode, blockers = t
        m = "pragma" if mode == "ambiguous-line" else mode
        return t, unroll(a.bin, path, ref, m)

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for (path, ref, want_id, mode, blockers), (rc, out, err) in ex.map(run, tasks):
            stats["unroll invocations"] += 1
            where = f"{path} --loop {ref} ({mode})"
            if mode == "ambiguous-line":
                if rc != 2 or want_id not in err:
                    violations.append(f"{where}: exit {rc}, want 2 listing {want_id}: {err[:300]}")
                else:
                    stats["ambiguous lines refused with candidates"] += 1
                continue
            if rc != 1 or out or "[guard-blocked]" not in err:
                violations.append(f"{where}: exit {rc}, want 1 [guard-blocked]: {err[:300]}")
                continue
            if f"loop {want_id} is blocked by" not in err:
                violations.append(f"{where}: refusal names another loop than {want_id}: {err[:300]}")
                continue
            if any(b not in err for b in blockers):
                violations.append(f"{where}: refusal lacks a blocker of {blockers}: {err[:300]}")
                continue
            stats["refusals with guard-blocked"] += 1

    for k in ["files", "parsed files", "files with unique ids", "loops", "loops sharing their line",
              "blocked loops", "unroll invocations", "refusals with guard-blocked",
              "ambiguous lines refused with candidates"]:
        print(f"{k}: {stats[k]}")
    print(f"violations: {len(violations)}")
    for v in violations[:50]:
        print("  " + v)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"stats": stats, "violations": violations}, fh, indent=1)
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()
