#!/usr/bin/env python3
"""Checks `testdata/check` fixtures against a hip-unroll *binary* (not the guards library the
`fixtures` test links): `check --format json` on each fixture, compared with the inline
expectations (`// ~^ blockers: ...`, `unresolved:`, `pragma:`, `trip:`, `diag:`,
`hip-unroll-test: parse-errors N`; see
testdata/check/README.md), both ways as guards/tests/fixtures.rs does.

Usage: fixture_check.py BINARY FIXTURE... ; prints one line per fixture (PASS, or FAIL with the
count and the first mismatches) and exits 1 when any fails. Used by fixture_mutation.sh to show
that each new fixture fails with the binary built before its fix.
"""
import json
import os
import subprocess
import sys


def expectations(text):
    e = {"loops": {}, "diags": [], "trips": {}, "unresolved": {}, "pragmas": {},
         "dirs": [], "hints": False, "parse_errors": None}
    for i, line in enumerate(text.splitlines()):
        n = i + 1
        if "hip-unroll-test: hints" in line:
            e["hints"] = True
        if "hip-unroll-test: include-dir " in line:
            e["dirs"].append(line.split("hip-unroll-test: include-dir ", 1)[1].strip())
        if "hip-unroll-test: parse-errors " in line:
            e["parse_errors"] = int(line.split("hip-unroll-test: parse-errors ", 1)[1].strip())
        pos = line.find("// ~")
        if pos < 0:
            continue
        rest = line[pos + 4:]
        carets = len(rest) - len(rest.lstrip("^"))
        rest = rest[carets:].strip()
        target = n - carets
        if rest.startswith("blockers:"):
            v = sorted(x.strip() for x in rest[9:].split(",") if x.strip() and x.strip() != "none")
            e["loops"][target] = v
        elif rest.startswith("diag:"):
            e["diags"] += [(target, r.strip()) for r in rest[5:].split(",") if r.strip()]
        elif rest.startswith("unresolved:"):
            e["unresolved"][target] = sorted(x.strip() for x in rest[11:].split(",") if x.strip())
        elif rest.startswith("pragma:"):
            p = rest[7:].strip()
            e["pragmas"][target] = None if p == "none" else p
        elif rest.startswith("trip:"):
            t = rest[5:].strip()
            e["trips"][target] = None if t == "?" else int(t)
    return e


def check(binary, path):
    text = open(path, encoding="utf-8", errors="replace").read()
    e = expectations(text)
    d = os.path.dirname(path)
    args = [binary, "check", "--format", "json", "--fail-on", "error"]
    if e["hints"]:
        args.append("--hints")
    for x in e["dirs"]:
        args += ["-I", os.path.join(d, x)]
    p = subprocess.run(args + [path], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        return [f"exit {p.returncode}: {p.stderr.strip()[:200]}"]
    out = json.loads(p.stdout)
    errs = []
    if e["parse_errors"] is not None:
        got_pe = sum(f.get("parse_errors", 0) for f in out["files"])
        if got_pe != e["parse_errors"]:
            errs.append(f"{got_pe} parse errors, expected {e['parse_errors']}")
    seen = set()
    for f in out["files"]:
        for fn in f["functions"]:
            for l in fn["loops"]:
                ln = l["line"]
                seen.add(ln)
                want = e["loops"].get(ln)
                if want is None:
                    errs.append(f"line {ln}: loop {l['id']} not annotated (got {l['blockers']})")
                elif sorted(l["blockers"]) != want:
                    errs.append(f"line {ln}: loop {l['id']} blockers {l['blockers']}, expected {want}")
                got_u = sorted(l.get("unresolved", []))
                if got_u != e["unresolved"].get(ln, []):
                    errs.append(f"line {ln}: loop {l['id']} unresolved {got_u}, expected {e['unresolved'].get(ln, [])}")
                if ln in e["pragmas"] and l["unroll_pragma"] != e["pragmas"][ln]:
                    errs.append(f"line {ln}: loop {l['id']} pragma {l['unroll_pragma']}, expected {e['pragmas'][ln]}")
                if ln in e["trips"] and l["trip_count"] != e["trips"][ln]:
                    errs.append(f"line {ln}: loop {l['id']} trip {l['trip_count']}, expected {e['trips'][ln]}")
    for ln in sorted(set(e["loops"]) | set(e["unresolved"]) | set(e["pragmas"]) | set(e["trips"])):
        if ln not in seen:
            errs.append(f"line {ln}: annotated, but no reported loop starts there")
    got = sorted((x["line"], x["rule"]) for x in out["diagnostics"])
    for w in sorted(e["diags"]):
        if w in got:
            got.remove(w)
        else:
            errs.append(f"line {w[0]}: expected a `{w[1]}` diagnostic, none there")
    errs += [f"line {g[0]}: unexpected `{g[1]}` diagnostic" for g in got]
    return errs


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        sys.exit(2)
    binary, files = sys.argv[1], sys.argv[2:]
    failed = 0
    for path in files:
        errs = check(binary, path)
        if errs:
            failed += 1
            shown = "; ".join(errs[:3]) + (f"; ... ({len(errs)} in all)" if len(errs) > 3 else "")
            print(f"FAIL {path}: {len(errs)} mismatch(es): {shown}")
        else:
            print(f"PASS {path}")
    print(f"{len(files) - failed} passed, {failed} failed, of {len(files)}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
