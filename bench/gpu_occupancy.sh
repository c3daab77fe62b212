#!/usr/bin/env bash
# Issue 27's occupancy policy on a real GPU: `tune --backend bench --factors 2,4,8 --mode both
# --dry-run` over bench/occupancy/sgemm2d.cu (a 2-D register-tiled SGEMM and a runtime-depth
# register-tile GEMM, two specs), twice on scratch copies sharing one compile cache: with the
# default settings (an occupancy loss is recorded on the candidate and the variant measured) and
# with `[vgpr-pressure] max-occupancy-loss = 0` in hip-unroll.toml (the opt-in veto: such a
# variant is `gated`, unmeasured). Writes both JSON reports, a log and summary.md (each
# variant's status in both runs, its speedup and its predicted occupancy change) into OUT_DIR.
#
#   HIP_UNROLL=target/release/hip-unroll bash bench/gpu_occupancy.sh [OUT_DIR]
#
# Environment as bench/gpu_smoke.sh: NVCC, HIP_UNROLL, GPU_SMOKE_DEV. NVIDIA only; without a GPU
# or nvcc it stops at once with one line, exit 2.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/gpu_lib.sh
fail() {
  echo "gpu_occupancy: $*" >&2
  exit 2
}
out=${1:-gpu-occupancy-$(date -u +%Y%m%dT%H%M%SZ)}
nvcc=$(gpu_nvidia) || exit 2
command -v python3 >/dev/null || fail "python3 is needed to write the summary"
bin=$(gpu_binary "no cargo here to build hip-unroll: set HIP_UNROLL to a built binary") || exit 2
mkdir -p "$out"
out=$(realpath "$out")
gpu_machine "$nvcc" "$out/machine.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cache="$work/cache"
failed=0
for run in default veto; do
  mkdir -p "$work/$run"
  cp bench/occupancy/sgemm2d.cu bench/occupancy/*.toml "$work/$run/"
  printf '[compile]\ncache-dir = "%s"\n' "$cache" >"$work/$run/hip-unroll.toml"
  if [ "$run" = veto ]; then
    printf '\n[vgpr-pressure]\nmax-occupancy-loss = 0\n' >>"$work/$run/hip-unroll.toml"
  fi
  echo "## $run" >>"$out/log.txt"
  start=$(date +%s.%N)
  if ! (cd "$work/$run" && "$bin" tune sgemm2d.cu --backend bench --spec sgemm2d.toml \
    --spec regtile.toml --nvcc "$nvcc" --factors 2,4,8 --mode both --dry-run --format json \
    -o "$out/$run.json" 2>>"$out/log.txt"); then
    failed=$((failed + 1))
    echo "failed: $run (see $out/log.txt)"
  fi
  echo "$run: $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)") s wall"
done

python3 - "$out" <<'PY' | tee "$out/summary.md"
import json, os, sys
out = sys.argv[1]
runs = {}
for run in ("default", "veto"):
    try:
        runs[run] = json.load(open(os.path.join(out, run + ".json")))
    except (OSError, ValueError):
        print(f"{run}: no report")
if not runs:
    sys.exit(0)
print("# gpu_occupancy summary\n")
print("```\n" + open(os.path.join(out, "machine.txt")).read().strip() + "\n```\n")
for run, r in runs.items():
    counts = {}
    for c in r["candidates"]:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    t = r["timing"]
    print(f"- {run}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
          + f"; {t['wall']:.1f} s wall, measure {t['measure']:.1f} s")
def key(c):
    full = "full" if c.get("full") else f"x{c.get('factor')}"
    return f"{c['loop']} {c.get('mode')} {full}"
rows = {}
for run, r in runs.items():
    for c in r["candidates"]:
        rows.setdefault(key(c), {})[run] = c
print("\n| variant | occupancy (predicted) | default | speedup | max-occupancy-loss = 0 |")
print("|---|---|---|---:|---|")
for k, by in rows.items():
    any_c = next(iter(by.values()))
    occ = any_c.get("occupancy")
    occ_s = f"{occ['before']} -> {occ['after']} ({occ['registers']['before']} -> {occ['registers']['after']} regs)" if occ else ""
    d = by.get("default", {})
    v = by.get("veto", {})
    sp = f"{d['speedup']:.3f}x" if d.get("speedup") is not None else ""
    print(f"| {k} | {occ_s} | {d.get('status', '')} | {sp} | {v.get('status', '')} |")
PY
echo "gpu_occupancy: $failed failed; reports in $out"
[ "$failed" -eq 0 ] || exit 1
