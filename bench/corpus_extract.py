#!/usr/bin/env python3
"""Extract HIP kernel sources from fetched bare git mirrors into a local corpus.

Usage: corpus_extract.py [--headers] CORPUS_DIR MIRROR_GIT_DIR[::INCLUDE_REGEX]...

An optional INCLUDE_REGEX (Python `re.search` on the path) restricts a mirror to some paths,
e.g. `/work/.mirror/zjin-lcf+HeCBench/repo::-hip/` keeps only the HIP ports of HeCBench.

For each bare mirror (e.g. /work/.mirror/ROCm+rocPRIM/repo) every blob at HEAD whose name
ends in one of the extensions a `check` walk takes (.cu .cuh .hip .cpp .cc .cxx .h .hpp ...)
and that contains `__global__` (or is a .cu/.hip file) is
written to CORPUS_DIR/<owner>+<repo>/<path>, and a row (repo, commit, path, bytes) is appended
to CORPUS_DIR/MANIFEST.tsv (rows of the same repo are replaced). The corpus is for local
measurement only and is never committed.

`--headers` also keeps the headers those files reach through `#include "..."`, transitively
(whatever their contents: a header without `__global__` may hold the `__device__` helper or the
macro a kernel's loop uses), resolved as a compiler would: next to the including file, else the
repository path that ends with the spelled name (the shortest); the directories that the second
rule needed (`include/` for `ck/utility/x.hpp` found as `include/ck/utility/x.hpp`) are written
as `[check] include-dirs` to CORPUS_DIR/<owner>+<repo>/hip-unroll.toml, so that `check` follows
the same includes. Headers kept this way are listed in MANIFEST.tsv with a fifth column
`header`.
"""
import json
import os
import re
import subprocess
import threading
import sys

EXTS = (".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c++", ".cp", ".h", ".hh", ".hpp",
        ".hxx", ".h++", ".inl", ".ipp", ".tpp", ".tcc", ".txx")
MAX_BYTES = 4 << 20


def git(gitdir, *args, inp=None):
    return subprocess.run(["git", "--git-dir", gitdir, *args], input=inp,
                          capture_output=True, check=True).stdout


INCLUDE_RE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
MAX_HEADERS = 20000


def normpath(p):
    return os.path.normpath(p).replace(os.sep, "/")


def includes_of(data):
    return [m.group(1).decode("utf-8", "replace") for m in INCLUDE_RE.finditer(data)]


def resolve(path, spelled, paths, by_base):
    """The repository path `#include "spelled"` in `path` names, and the include root it
    needed (None when found next to the including file)."""
    here = normpath(os.path.join(os.path.dirname(path), spelled))
    if here in paths:
        return here, None
    spelled_n = normpath(spelled).lstrip("./")
    cands = [p for p in by_base.get(os.path.basename(spelled_n), ())
             if p == spelled_n or p.endswith("/" + spelled_n)]
    if not cands:
        return None, None
    best = min(cands, key=lambda p: (len(p), p))
    root = best[: len(best) - len(spelled_n)].rstrip("/") or "."
    return best, root


def extract(corpus, gitdir, include, headers=False):
    name = os.path.basename(os.path.dirname(os.path.abspath(gitdir)))  # owner+repo
    commit = git(gitdir, "rev-parse", "HEAD").decode().strip()
    rows = []
    listing = git(gitdir, "ls-tree", "-r", "-l", "HEAD").decode("utf-8", "replace")
    wanted = []
    everything = {}  # path -> sha of every candidate file, whatever INCLUDE_REGEX says
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        mode, typ, sha, size = meta.split()
        if typ != "blob" or not path.lower().endswith(EXTS) or not size.isdigit():
            continue
        if int(size) > MAX_BYTES or mode == "120000":
            continue
        everything[path] = sha
        if include and not re.search(include, path):
            continue
        wanted.append((sha, path))
    if not wanted:
        return rows
    blobs = dict(cat(gitdir, wanted))
    kept = set()
    for sha, path in wanted:
        data = blobs.get(path)
        if data is None:
            continue
        low = path.lower()
        if b"__global__" not in data and not low.endswith((".cu", ".hip")):
            continue
        kept.add(path)
        rows.append((name, commit, path, len(data)))
    roots = {}
    if headers:
        # Headers may live outside INCLUDE_REGEX (a HIP port's `../common/x.h`): search them all.
        paths = set(everything)
        by_base = {}
        for p in paths:
            by_base.setdefault(os.path.basename(p), []).append(p)
        frontier = sorted(kept)
        seen = set(kept)
        while frontier and len(seen) < MAX_HEADERS:
            found = []
            for path in frontier:
                for spelled in includes_of(blobs.get(path, b"")):
                    hit, root = resolve(path, spelled, paths, by_base)
                    if hit is None:
                        continue
                    if root is not None:
                        roots[root] = roots.get(root, 0) + 1
                    if hit not in seen:
                        seen.add(hit)
                        found.append(hit)
            missing = [(everything[h], h) for h in found if h not in blobs]
            blobs.update(cat(gitdir, missing))
            for h in found:
                if h in blobs:
                    rows.append((name, commit, h, len(blobs[h]), "header"))
            frontier = found
        kept = {p for p in seen if p in blobs}
        if roots:
            top = sorted(roots, key=lambda r: (-roots[r], r))[:32]
            os.makedirs(os.path.join(corpus, name), exist_ok=True)
            with open(os.path.join(corpus, name, "hip-unroll.toml"), "w") as f:
                f.write("# Written by bench/corpus_extract.py --headers: where this repository's\n"
                        "# quoted includes were found.\n[check]\ninclude-dirs = [\n")
                for r in top:
                    f.write(f"    {json.dumps(r)},\n")
                f.write("]\n")
    for path in sorted(kept):
        out = os.path.join(corpus, name, path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(blobs[path])
    return rows


def cat(gitdir, wanted):
    """(path, bytes) of every wanted blob, through one `git cat-file --batch`."""
    proc = subprocess.Popen(["git", "--git-dir", gitdir, "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def feed():
        proc.stdin.write("".join(sha + "\n" for sha, _ in wanted).encode())
        proc.stdin.close()

    threading.Thread(target=feed, daemon=True).start()
    out = []
    for sha, path in wanted:
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)
        out.append((path, data))
    proc.wait()
    return out


def main():
    args = sys.argv[1:]
    headers = "--headers" in args
    args = [a for a in args if a != "--headers"]
    corpus = args[0]
    os.makedirs(corpus, exist_ok=True)
    manifest = os.path.join(corpus, "MANIFEST.tsv")
    old = []
    if os.path.exists(manifest):
        with open(manifest) as f:
            old = [l.rstrip("\n").split("\t") for l in f if not l.startswith("repo\t")]
    for arg in args[1:]:
        gitdir, _, include = arg.partition("::")
        rows = extract(corpus, gitdir, include or None, headers)
        name = rows[0][0] if rows else None
        if name:
            old = [r for r in old if r[0] != name]
        old.extend([list(map(str, r)) for r in rows])
        print(f"{gitdir}: {len(rows)} files", file=sys.stderr)
    with open(manifest, "w") as f:
        f.write("repo\tcommit\tpath\tbytes\n")
        for r in sorted(old):
            f.write("\t".join(r) + "\n")


if __name__ == "__main__":
    main()
