#!/usr/bin/env python3
"""Safety property of `hip-unroll unroll` on a third-party corpus (issue 9).

Usage: safety_corpus.py [--bin target/release/hip-unroll] [--corpus /work/corpus]
                        [--jobs 2] [--chunk 400] [--json OUT.json] [--limit N]
                        [--execute N [--factor 4] [--spans target/release/examples/spans]
                         [--cxx g++] [--keep DIR]]

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

`--execute N` also runs manual rewrites against their originals on the host, for up to N
rewrites of candidate loops in kernels, files visited round-robin:

  * a file is built on the host when it compiles as C++ with `testdata/transforms/hip_host.h`
    and `bench/host_shim.h` force-included, its host functions blanked (their bytes turned to
    spaces, lines kept; spans from the frontend example `spans`), the system headers the shim
    does not provide stubbed empty (created on demand from the compiler's "No such file"), its
    directory and its config's `include-dirs` on the include path; `main` is the script's;
  * a kernel is driven when it is no template and every parameter is an arithmetic scalar or a
    pointer to an arithmetic type: pointers get 65,536-element buffers of deterministic
    pseudo-random values (integers in 0..15, so that they index safely; floats in -1..1),
    integer scalars 16, floating scalars 0.75; every drivable kernel of the file runs on two
    grids (1x32 and 2x64 threads, one thread after the other) and the bytes of every buffer are
    hashed after each launch;
  * `unroll --mode manual --factor F` rewrites one candidate loop of a driven kernel; the
    variant is built and run the same way; its hashes must equal the original's (a variant that
    crashes or times out where the original did not is a violation too). Files whose original
    does not build, or crashes, are counted and skipped; transform refusals are counted by id.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ARITH = {"float", "double", "int", "unsigned", "unsigned int", "signed", "signed int", "long",
         "long int", "unsigned long", "long long", "unsigned long long", "size_t", "int64_t",
         "uint64_t", "int32_t", "uint32_t", "short", "unsigned short", "char", "signed char",
         "unsigned char", "int8_t", "uint8_t", "int16_t", "uint16_t", "bool", "uint",
         "long unsigned int", "ptrdiff_t"}
FLOATS = {"float", "double"}

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


def blank(text, functions):
    """`text` (bytes) with every host function's bytes turned to spaces (newlines kept)."""
    b = bytearray(text)
    for f in functions:
        if f["kind"] != "host":
            continue
        for i in range(f["start"], min(f["end"], len(b))):
            if b[i] not in (10, 13):
                b[i] = 32
    return bytes(b)


def spans(spans_bin, path):
    p = subprocess.run([spans_bin, path], capture_output=True, text=True, timeout=120)
    return json.loads(p.stdout.splitlines()[0])


def param_kind(p):
    """('ptr'|'scalar', base type) for a drivable parameter, else None."""
    text = p["text"]
    if "&" in text or "[" in text or "(" in text:
        return None
    stars = text.count("*")
    base = re.sub(r"\b(const|volatile|__restrict__|__restrict|restrict)\b", " ", p["type"])
    base = " ".join(base.replace("*", " ").split())
    if base not in ARITH or stars > 1:
        return None
    return ("ptr" if stars == 1 else "scalar", base)


def drivable(functions):
    out = []
    for f in functions:
        if f["kind"] != "kernel" or f["template"] or f["recovered"]:
            continue
        kinds = [param_kind(p) for p in f["params"]]
        if all(kinds) and kinds:
            out.append((f["name"], kinds))
    names = collections.Counter(n for n, _ in out)
    return [k for k in out if names[k[0]] == 1]  # overloads: ambiguous to call by name


def driver(kernels):
    lines = ["#include <vector>", "#include <cstdio>",
             "static unsigned long long hu_hash(const void* p, size_t n, unsigned long long h) {",
             "    const unsigned char* b = (const unsigned char*)p;",
             "    for (size_t i = 0; i < n; ++i) { h ^= b[i]; h *= 1099511628211ull; }",
             "    return h;", "}",
             "template <class T> static void hu_fill(std::vector<T>& v, unsigned seed, bool fl) {",
             "    unsigned long long x = 0x9E3779B97F4A7C15ull * (seed + 1);",
             "    for (auto& e : v) {",
             "        x ^= x << 13; x ^= x >> 7; x ^= x << 17;",
             "        e = fl ? (T)((double)(x % 2001) / 1000.0 - 1.0) : (T)(x % 16);",
             "    }", "}",
             "int main() {", "    const size_t N = 1 << 16;",
             "    const hu_dim3 grids[2][2] = {{{1, 1, 1}, {32, 1, 1}}, {{2, 1, 1}, {64, 1, 1}}};",
             "    for (int c = 0; c < 2; ++c) {"]
    for k, (name, kinds) in enumerate(kernels):
        lines.append("        {")
        args = []
        bufs = []
        for j, (kind, base) in enumerate(kinds):
            fl = "true" if base in FLOATS else "false"
            if kind == "ptr":
                lines.append(f"            std::vector<{base}> b{j}(N); hu_fill(b{j}, {k * 31 + j}, {fl});")
                args.append(f"b{j}.data()")
                bufs.append(f"b{j}")
            else:
                args.append(f"({base})0.75" if base in FLOATS else f"({base})16")
        lines.append(f"            hu_launch(grids[c][0], grids[c][1], {name}, {', '.join(args)});")
        h = "1469598103934665603ull"
        for b in bufs:
            h = f"hu_hash({b}.data(), {b}.size() * sizeof({b}[0]), {h})"
        lines.append(f'            std::printf("{name} %d %016llx\\n", c, (unsigned long long)({h}));')
        lines.append("        }")
    lines += ["    }", "    return 0;", "}"]
    return "\n".join(lines) + "\n"


def include_dirs(path):
    """The file's directory and the `include-dirs` of the nearest hip-unroll.toml."""
    out = [os.path.dirname(os.path.abspath(path))]
    d = os.path.dirname(os.path.abspath(path))
    while True:
        cfg = os.path.join(d, "hip-unroll.toml")
        if os.path.exists(cfg):
            text = open(cfg).read()
            m = re.search(r"include-dirs\s*=\s*\[(.*?)\]", text, re.S)
            if m:
                out += [os.path.join(d, x) for x in re.findall(r'"([^"]+)"', m.group(1))]
            break
        up = os.path.dirname(d)
        if up == d:
            break
        d = up
    return out


class Host:
    """Builds and runs corpus files on the host (see the module doc)."""

    def __init__(self, a, work):
        self.a = a
        self.work = work
        self.stubs = os.path.join(work, "stubs")
        os.makedirs(self.stubs, exist_ok=True)
        self.n = 0

    def build(self, text, dirs, drv):
        self.n += 1
        src = os.path.join(self.work, f"t{self.n}.cpp")
        exe = os.path.join(self.work, f"t{self.n}")
        argv = [self.a.cxx, "-std=c++17", "-O1", "-fwrapv", "-ffp-contract=off", "-w",
                "-fpermissive", "-x", "c++",
                "-include", os.path.join(HERE, "../testdata/transforms/hip_host.h"),
                "-include", os.path.join(HERE, "host_shim.h"), "-Dmain=hu_user_main",
                "-I", self.stubs]
        for d in dirs:
            argv += ["-iquote", d, "-I", d]
        argv += [src, "-o", exe]
        # `main` of the file is renamed away; the driver's own comes after the #define.
        with open(src, "wb") as f:
            f.write(text + b"\n#undef main\n" + drv.encode())
        for _ in range(12):
            try:
                p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                return None, "compile timeout"
            if p.returncode == 0:
                return exe, None
            m = re.search(r"fatal error: ([^:\s]+): No such file or directory", p.stderr)
            if not m:
                return None, p.stderr.strip().splitlines()[0][:200] if p.stderr.strip() else "?"
            stub = os.path.join(self.stubs, m.group(1))
            if os.path.exists(stub):
                return None, "stub " + m.group(1)
            os.makedirs(os.path.dirname(stub), exist_ok=True)
            open(stub, "w").close()
        return None, "too many missing headers"

    def run(self, exe):
        try:
            p = subprocess.run([exe], capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            return None, "timeout"
        if p.returncode != 0:
            return None, f"exit {p.returncode}"
        return p.stdout, None


def execute(a, reports, stats, violations):
    """Run manual rewrites of candidate loops against their originals (see the module doc)."""
    work = a.keep or tempfile.mkdtemp(prefix="hu-exec-")
    os.makedirs(work, exist_ok=True)
    host = Host(a, work)
    per_file = collections.OrderedDict()
    for f in reports:
        if not f.get("parsed", True):
            continue
        for fn in f["functions"]:
            if fn["kind"] != "kernel":
                continue
            for l in fn["loops"]:
                if l["verdict"] == "candidate" and l.get("unroll_pragma") is None:
                    per_file.setdefault(f["path"], []).append((fn["name"], l["id"], l["line"]))
    files = {}
    queue = collections.deque(per_file.items())
    while queue and stats["rewrites executed"] < a.execute:
        path, loops = queue.popleft()
        if path not in files:
            files[path] = prepare(a, host, path, stats)
        prep = files[path]
        if prep is None or not loops:
            continue
        fname, lid, line = loops.pop(0)
        if loops:
            queue.append((path, loops))
        drivers, dirs, want = prep
        if fname not in drivers:
            stats["loops outside a driven kernel"] += 1
            continue
        var = os.path.join(work, f"v{host.n}_{os.path.basename(path)}")
        p = subprocess.run([a.bin, "unroll", path, "--loop", lid, "--factor", str(a.factor),
                            "--mode", "manual", "-o", var], capture_output=True, text=True)
        if p.returncode != 0:
            m = re.search(r"\[([a-z-]+)\]\s*$", p.stderr.strip())
            stats["manual refused: " + (m.group(1) if m else f"exit {p.returncode}")] += 1
            continue
        vtext = open(var, "rb").read()
        vfun = spans(a.spans, var)["functions"]
        exe, err = host.build(blank(vtext, vfun), dirs, drivers[fname][1])
        if exe is None:
            violations.append(f"{path} --loop {lid}: the original builds, the variant not: {err}")
            continue
        got, err = host.run(exe)
        stats["rewrites executed"] += 1
        if got is None:
            violations.append(f"{path} --loop {lid}: the variant fails ({err}), the original not")
        elif got != want[fname]:
            violations.append(f"{path} --loop {lid}: outputs differ:\n{want[fname]}{got}")
        else:
            stats["rewrites with identical outputs"] += 1
        os.remove(exe)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


def prepare(a, host, path, stats):
    """Build and run the original once per kernel: {kernel: (kinds, driver)}, dirs, outputs."""
    info = spans(a.spans, path)
    funcs = info.get("functions", [])
    kernels = drivable(funcs)
    if not kernels:
        stats["files without a drivable kernel"] += 1
        return None
    text = open(path, "rb").read()
    dirs = include_dirs(path)
    drivers, want = {}, {}
    for name, kinds in kernels:
        drv = driver([(name, kinds)])
        exe, err = host.build(blank(text, funcs), dirs, drv)
        if exe is None:
            stats["files not buildable on the host"] += 1
            return None
        out, err = host.run(exe)
        os.remove(exe)
        if out is None:
            stats["kernels whose original fails on the host"] += 1
            continue
        drivers[name] = (kinds, drv)
        want[name] = out
    if not drivers:
        return None
    stats["files built and run on the host"] += 1
    stats["kernels driven"] += len(drivers)
    return drivers, dirs, want


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__),
                                                  "../target/release/hip-unroll"))
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--chunk", type=int, default=400)
    ap.add_argument("--json")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--execute", type=int, default=0)
    ap.add_argument("--factor", type=int, default=4)
    ap.add_argument("--spans", default=os.path.join(HERE, "../target/release/examples/spans"))
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--keep")
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
        stats["functions"] += len(f["functions"])
        stats["kernels"] += sum(1 for fn in f["functions"] if fn["kind"] == "kernel")
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

    if a.execute:
        execute(a, reports, stats, violations)
    head = ["files", "parsed files", "files with unique ids", "functions", "kernels", "loops",
            "loops sharing their line", "blocked loops", "unroll invocations",
            "refusals with guard-blocked", "ambiguous lines refused with candidates"]
    for k in head:
        print(f"{k}: {stats[k]}")
    for k in sorted(x for x in stats if x not in head):
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
