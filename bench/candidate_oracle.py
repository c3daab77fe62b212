#!/usr/bin/env python3
"""A crude independent oracle for `check`'s `candidate` verdicts (bench/README.md, "Type
resolution on header-only template libraries").

Usage: candidate_oracle.py BIN DIR [--closure]

Runs `BIN check --format json --no-ignore` on each directory under DIR (one repository each,
as `corpus_extract.py` writes them), then for every `candidate` loop extracts its text by
brace matching (comments blanked) and looks for barrier and atomic tokens in it (`DIRECT`:
a candidate that writes one is a guard bug unless the token is in a string or a dead branch),
and with `--closure` through the functions it calls by name: every definition of that name in
the repository, transitively (`CLOSURE`: an over-approximation by name only, no types, no
scopes; each hit is to be checked by hand). Definitions are found by a regular expression, so
expect artefacts (function-style casts, other classes' methods of the same name).
"""
import json, os, re, subprocess, sys
from collections import defaultdict

BIN, DIR = sys.argv[1], sys.argv[2]
CLOSURE = "--closure" in sys.argv

BLOCK = re.compile(
    r"\b(__syncthreads\w*|__syncwarp|__barrier_sync\w*|__builtin_amdgcn_s_barrier\w*|"
    r"atomic[A-Z]\w*|__hip_atomic\w*|__atomic_\w+|unsafeAtomicAdd|gpuAtomic\w*|"
    r"cp\.async\.bulk|bar\.sync|bar\.arrive|barrier\.sync|barrier\.arrive|mbarrier\.\w+|"
    r"atom\.\w+|red\.\w+|s_barrier)\b|\.\s*sync\s*\(\s*\)|arrive_and_wait")


def strip(text):
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif c == '"' and not (i > 0 and text[i - 1] == "'"):
            # keep asm strings (they matter), drop nothing
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return "".join(out)


def match(text, i, open_c, close_c):
    depth = 0
    n = len(text)
    while i < n:
        if text[i] == open_c:
            depth += 1
        elif text[i] == close_c:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n


def loop_text(text, offset):
    kw = re.match(r"(for|while|do)\b", text[offset:])
    if not kw:
        return None
    i = offset + kw.end()
    if kw.group(1) != "do":
        p = text.find("(", i)
        if p < 0:
            return None
        i = match(text, p, "(", ")") + 1
    while i < len(text) and text[i].isspace():
        i += 1
    if i < len(text) and text[i] == "{":
        j = match(text, i, "{", "}")
    else:
        j = text.find(";", i)
    if kw.group(1) == "do":
        j2 = text.find(";", j)
        j = j2 if j2 > 0 else j
    return text[offset:j + 1]


DEF = re.compile(r"\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*(?:const\s*)?(?:noexcept\s*)?\{")
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;{}()]*>)?\s*\(")
KEYWORDS = {"constexpr", "if", "for", "while", "switch", "return", "sizeof", "do", "else", "catch", "decltype", "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "defined", "__launch_bounds__", "alignas", "alignof", "static_assert", "noexcept"}


def defs_of(texts):
    defs = defaultdict(list)
    for t in texts:
        for m in DEF.finditer(t):
            name = m.group(1)
            if name in KEYWORDS:
                continue
            b = m.end() - 1
            e = match(t, b, "{", "}")
            defs[name].append(t[b:e + 1])
    return defs


def reaching(defs):
    direct = {n for n, bs in defs.items() if any(BLOCK.search(b) for b in bs)}
    callees = {n: {c.group(1) for b in bs for c in CALL.finditer(b)} & defs.keys() for n, bs in defs.items()}
    reach = set(direct)
    changed = True
    while changed:
        changed = False
        for n, cs in callees.items():
            if n not in reach and cs & reach:
                reach.add(n)
                changed = True
    return reach


def main():
    for repo in sorted(os.listdir(DIR)):
        root = os.path.join(DIR, repo)
        if not os.path.isdir(root):
            continue
        r = subprocess.run([BIN, "check", "--format", "json", "--no-ignore", root], capture_output=True, text=True)
        try:
            out = json.loads(r.stdout)
        except Exception:
            print(f"{repo}: check exit {r.returncode}: {r.stderr[:200]}")
            continue
        texts = {}
        for dp, _, fs in os.walk(root):
            for f in fs:
                p = os.path.join(dp, f)
                try:
                    texts[p] = strip(open(p, encoding="utf-8", errors="replace").read())
                except Exception:
                    pass
        reach = set()
        if CLOSURE:
            reach = reaching(defs_of(texts.values()))
        ncand = 0
        for f in out["files"]:
            path = f["path"]
            t = texts.get(path) or texts.get(os.path.join(root, path))
            if t is None:
                continue
            starts = [0]
            for k, c in enumerate(t):
                if c == "\n":
                    starts.append(k + 1)
            for fn in f.get("functions", []):
                for lp in fn.get("loops", []):
                    if lp["verdict"] != "candidate":
                        continue
                    ncand += 1
                    off = starts[lp["line"] - 1] + lp["column"] - 1
                    body = loop_text(t, off)
                    if body is None:
                        print(f"NOLOOP {path}:{lp['line']} {lp['id']}")
                        continue
                    m = BLOCK.search(body)
                    if m:
                        print(f"DIRECT {path}:{lp['line']} {lp['id']} {m.group(0)!r}")
                        continue
                    if CLOSURE:
                        hit = sorted({c.group(1) for c in CALL.finditer(body)} & reach)
                        if hit:
                            print(f"CLOSURE {path}:{lp['line']} {lp['id']} via {hit[:5]}")
        print(f"# {repo}: {ncand} candidate loops, check exit {r.returncode}")


main()
