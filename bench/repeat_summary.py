#!/usr/bin/env python3
"""The summary of bench/gpu_repeat_tune.sh: reads OUT_DIR/round.N.json (`tune --format json`
reports of the same tune, each with a fresh ledger) and prints one Markdown row per variant with
its status (and speedup) in every round, then what flipped: the variants whose status is not the
same in every round, and the loops whose kept (accepted) variant is not the same in every round.
A tune that decides the same way every run has no flip.

Usage: repeat_summary.py OUT_DIR
"""
import glob, json, os, re, sys

out = sys.argv[1]
rounds = []
for p in glob.glob(os.path.join(out, "round.*.json")):
    m = re.fullmatch(r"round\.(\d+)\.json", os.path.basename(p))
    if not m:
        continue
    try:
        rounds.append((int(m.group(1)), json.load(open(p))))
    except ValueError:
        print(f"round {m.group(1)}: no report")
rounds.sort()
if not rounds:
    print("no round reports")
    sys.exit(0)


def variant(c):
    if c.get("mode") is None:
        return f"{c['loop']} (loop)"
    shown = "full" if c.get("full") else f"x{c.get('factor')}"
    return f"{c['loop']} {c['mode']} {shown}"


table = {}
for n, r in rounds:
    for c in r["candidates"]:
        s = c["status"]
        if c.get("speedup") is not None:
            s += f" {c['speedup']:.3f}x"
        table.setdefault(variant(c), {})[n] = (c["status"], s)
names = [n for n, _ in rounds]
print("| variant | " + " | ".join(f"round {n}" for n in names) + " |")
print("|---|" + "---|" * len(names))
for v, by in table.items():
    print(f"| {v} | " + " | ".join(by.get(n, ("", ""))[1] for n in names) + " |")
flipped = [v for v, by in table.items() if len({by.get(n, ("", ""))[0] for n in names}) > 1]
kept = {}
for n, r in rounds:
    for c in r["candidates"]:
        if c["status"] == "accepted":
            kept.setdefault(c["loop"], {})[n] = variant(c)
loops = sorted({c["loop"] for _, r in rounds for c in r["candidates"] if c.get("mode")})
kept_flips = [l for l in loops if len({kept.get(l, {}).get(n) for n in names}) > 1]
print()
for n, r in rounds:
    acc = sorted(variant(c) for c in r["candidates"] if c["status"] == "accepted")
    t = r.get("timing", {})
    print(f"- round {n}: accepted {', '.join(acc) if acc else 'nothing'}" + (f"; {t['wall']:.1f} s wall" if "wall" in t else ""))
print(f"\n{len(rounds)} rounds; status differs between rounds for {len(flipped)} of {len(table)} variants"
      + (f" ({', '.join(flipped)})" if flipped else "")
      + f"; the kept variant differs for {len(kept_flips)} of {len(loops)} loops"
      + (f" ({', '.join(kept_flips)})" if kept_flips else ""))
