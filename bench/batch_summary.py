#!/usr/bin/env python3
"""The summary of bench/gpu_batch_ab.sh: reads OUT_DIR/NAME.MODE.ROUND.json (`bench --compare
--format json` reports) and prints one Markdown row per spec and mode (single: launch by
launch; auto: the runner's batch): launches per sample, the baseline's median (us) and relative
MAD (medians over the rounds), each round's A/A ratio of medians and the range of its per-pair
ratios (variant / baseline sample by sample), and the runner's note when it would not batch.

Usage: batch_summary.py OUT_DIR
"""
import glob, json, os, statistics, sys
out = sys.argv[1]
rows = {}
for p in sorted(glob.glob(os.path.join(out, "*.json"))):
    name, mode, _round, _ = os.path.basename(p).rsplit(".", 3)
    try:
        r = json.load(open(p))
    except ValueError:
        continue
    ks = r.get("kernels", [])
    if len(ks) != 2:
        continue
    a, b = ks[0]["samples_ms"], ks[1]["samples_ms"]
    pairs = [y / x for x, y in zip(a, b) if x > 0]
    if not pairs:
        continue
    rows.setdefault((name, mode), []).append({
        "batch": r.get("launches_per_sample", 1),
        "note": r.get("launches_per_sample_note"),
        "median_us": 1000 * ks[0]["summary"]["median"],
        "rel_mad": ks[0]["summary"]["rel_spread"],
        "ratio": r.get("ratio"),
        "lo": min(pairs), "hi": max(pairs),
    })
print("| spec | mode | launches/sample | baseline median | rel. MAD | A/A ratio | per-pair ratios |")
print("|---|---|---:|---:|---:|---:|---|")
for (name, mode), rs in sorted(rows.items()):
    med = statistics.median
    print(f"| {name} | {mode} | {rs[0]['batch']} | {med([x['median_us'] for x in rs]):.2f} us | "
          f"{100 * med([x['rel_mad'] for x in rs]):.1f}% | "
          + ", ".join("n/a" if x["ratio"] is None else f"{x['ratio']:.3f}" for x in rs) + " | "
          + ", ".join(f"{x['lo']:.2f}-{x['hi']:.2f}" for x in rs) + " |")
    for x in rs:
        if x["note"]:
            print(f"|  | note | {x['note']} | | | | |")
            break
