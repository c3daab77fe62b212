#!/usr/bin/env python3
"""Extract HIP kernel sources from fetched bare git mirrors into a local corpus.

Usage: corpus_extract.py CORPUS_DIR MIRROR_GIT_DIR[::INCLUDE_REGEX]...

An optional INCLUDE_REGEX (Python `re.search` on the path) restricts a mirror to some paths,
e.g. `/work/.mirror/zjin-lcf+HeCBench/repo::-hip/` keeps only the HIP ports of HeCBench.

For each bare mirror (e.g. /work/.mirror/ROCm+rocPRIM/repo) every blob at HEAD whose name
ends in one of the extensions a `check` walk takes (.cu .cuh .hip .cpp .cc .cxx .h .hpp ...)
and that contains `__global__` (or is a .cu/.hip file) is
written to CORPUS_DIR/<owner>+<repo>/<path>, and a row (repo, commit, path, bytes) is appended
to CORPUS_DIR/MANIFEST.tsv (rows of the same repo are replaced). The corpus is for local
measurement only and is never committed.
"""
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


def extract(corpus, gitdir, include):
    name = os.path.basename(os.path.dirname(os.path.abspath(gitdir)))  # owner+repo
    commit = git(gitdir, "rev-parse", "HEAD").decode().strip()
    rows = []
    listing = git(gitdir, "ls-tree", "-r", "-l", "HEAD").decode("utf-8", "replace")
    wanted = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        mode, typ, sha, size = meta.split()
        if typ != "blob" or not path.lower().endswith(EXTS) or not size.isdigit():
            continue
        if int(size) > MAX_BYTES or mode == "120000":
            continue
        if include and not re.search(include, path):
            continue
        wanted.append((sha, path))
    if not wanted:
        return rows
    proc = subprocess.Popen(["git", "--git-dir", gitdir, "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    def feed():
        proc.stdin.write("".join(sha + "\n" for sha, _ in wanted).encode())
        proc.stdin.close()

    threading.Thread(target=feed, daemon=True).start()
    for sha, path in wanted:
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)
        low = path.lower()
        if b"__global__" not in data and not low.endswith((".cu", ".hip")):
            continue
        out = os.path.join(corpus, name, path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(data)
        rows.append((name, commit, path, size))
    proc.wait()
    return rows


def main():
    corpus = sys.argv[1]
    os.makedirs(corpus, exist_ok=True)
    manifest = os.path.join(corpus, "MANIFEST.tsv")
    old = []
    if os.path.exists(manifest):
        with open(manifest) as f:
            old = [l.rstrip("\n").split("\t") for l in f if not l.startswith("repo\t")]
    for arg in sys.argv[2:]:
        gitdir, _, include = arg.partition("::")
        rows = extract(corpus, gitdir, include or None)
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
