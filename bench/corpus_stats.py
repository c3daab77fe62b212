#!/usr/bin/env python3
"""Corpus quality report for `hip-unroll check --format json` (issue 2's "Done when").

Usage: corpus_stats.py [--bin target/release/hip-unroll] [--corpus /work/corpus]
                       [--misses /work/notes/recall_misses.txt] [--json OUT.json] [--chunk 400]

It runs `check --format json` over every corpus file (.cu .cuh .hip .cpp .hpp .h, sorted), in
chunks of files named on the command line; a chunk that exits 2 or crashes is split until the
single files at fault are known. It reports:

  * files, exit-2 files and crashes (panic, signal or an exit status other than 0/1/2), with
    their stderr;
  * kernel recall: kernels in check's JSON (functions with kind "kernel") against an
    independent count of `__global__` function definitions made here in Python (see
    `independent_kernels`), per file and overall, matched by name;
  * the share of files with parse errors (`parse_errors > 0`);
  * loops, candidates and blocked loops, and how often each blocker occurs.

The worst files for recall are written to --misses with short excerpts of the missed kernels.

Independent count: comments, string and character literals are blanked (offsets and lines are
kept), preprocessor lines (with their continuations) are set aside, then each remaining
`__global__` token is followed forward: a definition is a `__global__` whose first `(...)`
parameter list (after the name; `__launch_bounds__(...)`, `__attribute__((...))` and
`template<...>` arguments skipped) is followed by `{` before any `;`. A `;` first means a
declaration, which is not counted. Imprecision: it does not run the preprocessor, so kernels in
both branches of an `#if`/`#else` are both counted (tree-sitter also sees both), kernels made by
expanding a function-like macro are not counted (they are reported apart as `__global__` inside
`#define` bodies), and a kernel whose signature itself comes from a macro is counted only if the
word `__global__` is written out. Names are compared after dropping `ns::` qualifiers and
template arguments.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

EXTS = (".cu", ".cuh", ".hip", ".cpp", ".hpp", ".h")


# ---------------------------------------------------------------------------------------------
# Independent kernel count
# ---------------------------------------------------------------------------------------------

def blank(text):
    """Blank comments, string and char literals (keeping newlines); return (code, directive_mask).

    directive_mask[i] is True when offset i lies on a preprocessor line (or its continuation).
    """
    out = list(text)
    n = len(text)
    i = 0
    directive = [False] * n
    line_start = True
    in_directive = False
    while i < n:
        c = text[i]
        if c == "\n":
            # A directive ends at a newline not preceded by a backslash.
            if in_directive and not (i > 0 and text[i - 1] == "\\" or
                                     i > 1 and text[i - 1] == "\r" and text[i - 2] == "\\"):
                in_directive = False
            line_start = True
            i += 1
            continue
        if line_start and c in " \t":
            if in_directive:
                directive[i] = True
            i += 1
            continue
        if line_start and c == "#":
            in_directive = True
        line_start = False
        if in_directive:
            directive[i] = True
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = i
            while j < n and text[j] != "\n":
                # A backslash-newline continues a line comment.
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    out[j] = " "
                    j += 2
                    continue
                out[j] = " "
                if in_directive:
                    directive[j] = True
                j += 1
            i = j
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
                if in_directive:
                    directive[k] = True
            i = j
            continue
        if c == '"':
            # Raw string R"delim( ... )delim"
            if i > 0 and text[i - 1] == "R" and (i < 2 or not (text[i - 2].isalnum() or text[i - 2] == "_") or text[i - 2] in "uUL8"):
                m = re.match(r'"([^()\\\s]{0,16})\(', text[i:])
                if m:
                    end = text.find(")" + m.group(1) + '"', i + m.end())
                    j = n if end < 0 else end + len(m.group(1)) + 2
                    for k in range(i, j):
                        if out[k] != "\n":
                            out[k] = " "
                    i = j
                    continue
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
                if in_directive:
                    directive[k] = True
            i = j
            continue
        if c == "'":
            # C++14 digit separator (1'000'000): the quote sits inside a number literal.
            k = i - 1
            while k >= 0 and (text[k].isalnum() or text[k] in "_."):
                k -= 1
            if k + 1 < i and text[k + 1].isdigit():
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
            continue
        i += 1
    return "".join(out), directive


IDENT = re.compile(r"[A-Za-z_]\w*")
SKIP_CALL = {"__launch_bounds__", "__attribute__", "__declspec", "alignas", "decltype",
             "__amdgpu_waves_per_eu__", "__amdgpu_flat_work_group_size__", "noexcept"}


def skip_balanced(code, i, open_c, close_c):
    """code[i] == open_c; return the index after the matching close_c (or len(code))."""
    depth = 0
    n = len(code)
    while i < n:
        c = code[i]
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        elif c in ";{}" and open_c != "(":
            return i  # a '<' that was a comparison, not a template argument list
        i += 1
    return n


QUALIFIERS = {"const", "volatile", "noexcept", "override", "final", "throw", "try", "requires",
              "mutable", "__restrict__", "__restrict", "restrict"}


def follow(code, directive, start):
    """From just after a `__global__` token: return (name, is_definition).

    Preprocessor lines are skipped. `NAME(...)` followed by another identifier is taken as an
    attribute-like macro (`LAUNCH_BOUNDS(256, 2) kern(...)`) and the walk goes on.
    """
    i = start
    n = len(code)
    last_ident = None
    while i < n:
        c = code[i]
        if c.isspace() or directive[i]:
            i += 1
            continue
        m = IDENT.match(code, i)
        if m:
            word = m.group(0)
            i = m.end()
            if word in SKIP_CALL:
                j = i
                while j < n and code[j].isspace():
                    j += 1
                if j < n and code[j] == "(":
                    i = skip_balanced(code, j, "(", ")")
                continue
            last_ident = word
            continue
        if c == "[" and code.startswith("[[", i):
            end = code.find("]]", i)
            i = n if end < 0 else end + 2
            continue
        if c == "<":
            i = skip_balanced(code, i, "<", ">")
            continue
        if c == "(":
            # The parameter list follows the name.
            name = last_ident
            i = skip_balanced(code, i, "(", ")")
            j = i
            while j < n and (code[j].isspace() or directive[j]):
                j += 1
            m2 = IDENT.match(code, j)
            if m2 and m2.group(0) not in QUALIFIERS and m2.group(0) not in SKIP_CALL:
                # NAME(...) was a macro standing for an attribute; the signature goes on.
                i = j
                continue
            # After the parameters: qualifiers/attributes, then `{` (definition) or `;`.
            while i < n:
                c2 = code[i]
                if directive[i]:
                    i += 1
                    continue
                if c2 == "{":
                    return name, True
                if c2 == ";" or c2 == "}":
                    return name, False
                if c2 == "(":
                    i = skip_balanced(code, i, "(", ")")
                    continue
                if c2 == "=":  # `= delete` or an initialiser: not a definition with a body
                    return name, False
                i += 1
            return name, False
        if c in ";{}=":
            return last_ident, False
        i += 1
    return last_ident, False


def independent_kernels(text):
    """Return (definitions [(name, line)], kernels_in_defines)."""
    code, directive = blank(text)
    defs = []
    in_defines = 0
    for m in re.finditer(r"\b__global__\b", code):
        if directive[m.start()]:
            in_defines += 1
            continue
        name, is_def = follow(code, directive, m.end())
        if is_def:
            defs.append((name or "?", code.count("\n", 0, m.start()) + 1))
    return defs, in_defines


def norm(name):
    name = re.sub(r"<.*", "", name or "")
    return name.split("::")[-1].strip()


# ---------------------------------------------------------------------------------------------
# Running check
# ---------------------------------------------------------------------------------------------

EXTRA_ARGS = []


def run_check(binary, files, timeout):
    try:
        p = subprocess.run([binary, "check", "--format", "json", "--no-ignore", *EXTRA_ARGS, *files],
                           capture_output=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", b"", f"timed out after {timeout}s"


def crashed(rc, stderr):
    return rc not in (0, 1) or "panicked" in stderr


def check_all(binary, files, chunk, timeout, reports, failures):
    """Run check on `files`; fill reports {path: file-json}; failures [(path, rc, stderr)]."""
    stack = [files[i:i + chunk] for i in range(0, len(files), chunk)]
    while stack:
        part = stack.pop(0)
        rc, out, err = run_check(binary, part, timeout)
        if crashed(rc, err):
            if len(part) == 1:
                failures.append((part[0], rc, err.strip()))
                continue
            half = len(part) // 2
            stack[:0] = [part[:half], part[half:]]
            continue
        try:
            doc = json.loads(out)
        except ValueError as e:
            if len(part) == 1:
                failures.append((part[0], rc, f"invalid JSON: {e}; stderr: {err.strip()}"))
            else:
                half = len(part) // 2
                stack[:0] = [part[:half], part[half:]]
            continue
        for f in doc.get("files", []):
            reports[f["path"]] = f
        print(f"  checked {len(reports)}/{len(files)}", file=sys.stderr, end="\r")
    print(file=sys.stderr)


# ---------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release/hip-unroll")
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--misses", default="/work/notes/recall_misses.txt")
    ap.add_argument("--json", help="write the per-file figures here")
    ap.add_argument("--chunk", type=int, default=400)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--worst", type=int, default=30)
    ap.add_argument("--parse-all", action="store_true",
                    help="pass --parse-all to check (parse errors of files without GPU code too)")
    args = ap.parse_args()
    if args.parse_all:
        EXTRA_ARGS.append("--parse-all")

    files = []
    for root, dirs, names in os.walk(args.corpus):
        dirs.sort()
        for nm in sorted(names):
            if nm.endswith(EXTS):
                files.append(os.path.join(root, nm))
    total_bytes = sum(os.path.getsize(f) for f in files)
    print(f"corpus: {args.corpus}: {len(files)} files, {total_bytes} bytes")

    reports, failures = {}, []
    check_all(args.bin, files, args.chunk, args.timeout, reports, failures)

    exit2 = [f for f in failures if f[1] == 2]
    crashes = [f for f in failures if f[1] != 2]
    print(f"check: {len(reports)} files reported; exit 2: {len(exit2)}; crashes/panics/timeouts: {len(crashes)}")
    for path, rc, err in failures:
        print(f"  FAIL rc={rc} {path}\n    " + "\n    ".join(err.splitlines()[:8]))
    missing_reports = [f for f in files if f not in reports and f not in {x[0] for x in failures}]
    if missing_reports:
        print(f"  {len(missing_reports)} files got no report entry, e.g. {missing_reports[:3]}")

    # Recall, parse errors, loops.
    exp_total = found_total = matched_total = 0
    kernels_in_defines = 0
    files_with_kernels = 0
    parse_err_files = 0
    parsed_files = 0
    loops = cands = blocked = 0
    by_blocker = collections.Counter()
    per_file = []
    extra_total = 0
    for path in files:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
        defs, in_defs = independent_kernels(text)
        kernels_in_defines += in_defs
        rep = reports.get(path)
        ck_names = []
        if rep is not None:
            if rep.get("parsed", True):
                parsed_files += 1
            if rep.get("parse_errors", 0) > 0:
                parse_err_files += 1
            for fn in rep.get("functions", []):
                if fn.get("kind") == "kernel":
                    ck_names.append(norm(fn.get("name")))
                for lp in fn.get("loops", []):
                    loops += 1
                    if lp.get("verdict") == "candidate":
                        cands += 1
                    elif lp.get("verdict") == "blocked":
                        blocked += 1
                    by_blocker.update(lp.get("blockers", []))
        exp = collections.Counter(norm(n) for n, _ in defs)
        got = collections.Counter(ck_names)
        matched = sum(min(c, got[k]) for k, c in exp.items())
        # A kernel check found under another name (e.g. a macro-made name) still counts once
        # per file up to the expected number, but only by count, never twice.
        by_count = min(sum(exp.values()), sum(got.values()))
        exp_total += sum(exp.values())
        found_total += sum(got.values())
        matched_total += matched
        extra_total += max(0, sum(got.values()) - sum(exp.values()))
        if defs:
            files_with_kernels += 1
        missed = []
        rest = got.copy()
        for n, line in defs:
            k = norm(n)
            if rest[k] > 0:
                rest[k] -= 1
            else:
                missed.append((n, line))
        per_file.append({"path": path, "expected": sum(exp.values()), "found": sum(got.values()),
                         "matched": matched, "by_count": by_count, "missed": missed,
                         "parse_errors": (rep or {}).get("parse_errors"),
                         "reported": rep is not None})

    print(f"kernels (independent count of __global__ definitions): {exp_total} in {files_with_kernels} files"
          f" (+{kernels_in_defines} `__global__` inside #define bodies, not counted)")
    print(f"kernels found by check: {found_total}; matched by name: {matched_total}")
    if exp_total:
        by_count_total = sum(p["by_count"] for p in per_file)
        print(f"recall by name: {100.0 * matched_total / exp_total:.2f}%   "
              f"recall by count per file: {100.0 * by_count_total / exp_total:.2f}%   (target >= 95%)")
    print(f"check kernels beyond the independent count (macro-made, #define, ...): {extra_total}")
    print(f"files parsed by check: {parsed_files}/{len(reports)} (the rest have no GPU code; "
          f"--parse-all parses them too)")
    print(f"files with parse errors: {parse_err_files}/{parsed_files} parsed "
          f"({100.0 * parse_err_files / max(1, parsed_files):.1f}%); "
          f"{100.0 * parse_err_files / max(1, len(reports)):.1f}% of all {len(reports)} files")
    print(f"loops: {loops}; candidate: {cands}; blocked: {blocked}")
    for b, c in by_blocker.most_common():
        print(f"  blocker {b}: {c}")

    worst = sorted((p for p in per_file if p["missed"]),
                   key=lambda p: (p["matched"] / p["expected"], -len(p["missed"])))[:args.worst]
    if args.misses:
        os.makedirs(os.path.dirname(args.misses), exist_ok=True)
        with open(args.misses, "w") as fh:
            fh.write("# Files where `hip-unroll check` found fewest of the __global__ kernels that an\n"
                     "# independent Python count finds (bench/corpus_stats.py). Per file: matched/expected,\n"
                     "# check's kernel count, parse_errors, then each missed kernel with 3 lines from its\n"
                     "# `__global__` line. Corpus files are local copies of public repositories.\n\n")
            for p in worst:
                with open(p["path"], "rb") as src:
                    lines = src.read().decode("utf-8", "replace").splitlines()
                fh.write(f"== {p['path']}: matched {p['matched']}/{p['expected']}, check found "
                         f"{p['found']}, parse_errors={p['parse_errors']}\n")
                for name, line in p["missed"][:5]:
                    fh.write(f"  missed {name} at line {line}:\n")
                    for ln in lines[line - 1:line + 2]:
                        fh.write(f"    | {ln[:160]}\n")
                if len(p["missed"]) > 5:
                    fh.write(f"  ... and {len(p['missed']) - 5} more\n")
                fh.write("\n")
        print(f"worst {len(worst)} files written to {args.misses}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"files": per_file, "failures": failures}, fh, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
