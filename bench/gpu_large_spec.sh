#!/usr/bin/env bash
# The real-GPU check of issue 27's host-work figures: a bench session of a 2 x 1.6 GB spec
# (bench/large/large.toml: 400 M floats in, 400 M out) on the machine's GPU. Runs, each as its
# own process, timed (wall) and with its peak resident memory (max RSS) read by the parent:
#   1. `bench` with a cold compile cache (compile + session open + launches + output read);
#   2. `bench` again, the compile cached (session open + launches + output read);
#   3. `tune --backend bench --factors 2 --mode pragma --dry-run` (few variants);
#   4. `tune --backend bench --factors 2,4,8,full --mode both --dry-run` (many variants);
# and writes each tune's JSON report, a log and summary.md (the runs' wall and peak memory, each
# tune's `timing` line, its candidates' statuses, and its prepare time per prepared variant) into
# OUT_DIR. Peak memory of 3 against 4 says whether host memory grows with the variants.
#
#   bash bench/gpu_large_spec.sh [OUT_DIR]
#
# Environment as bench/gpu_smoke.sh: NVCC, HIP_UNROLL, GPU_SMOKE_DEV. NVIDIA only (the kernel
# includes CUDA's headers); without a GPU or nvcc it stops at once with one line, exit 2.
# Needs about 10 GB of host memory and 4 GB of GPU memory.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/gpu_lib.sh
out=${1:-gpu-large-$(date -u +%Y%m%dT%H%M%SZ)}

fail() {
  echo "gpu_large_spec: $*" >&2
  exit 2
}

nvcc=$(gpu_nvidia ": run it on one that has one") || exit 2
command -v python3 >/dev/null || fail "python3 is needed to time the runs and write the summary"
bin=$(gpu_binary "no cargo here to build hip-unroll: set HIP_UNROLL to a built binary") || exit 2

mkdir -p "$out"
out=$(realpath "$out")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp bench/large/large.cu bench/large/large.toml "$work/"
cache="$work/cache"
printf '[compile]\ncache-dir = "%s"\n' "$cache" >"$work/hip-unroll.toml"
log="$out/log.txt"
{
  echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader || true
  fi
  "$nvcc" --version | tail -2
} | tee "$out/machine.txt"

# timed NAME ARGS...: one hip-unroll run in $work; its wall time and peak resident memory
# appended to $out/runs.tsv, its stdout to $out/NAME.out, its stderr to the log.
timed() {
  local name=$1
  shift
  echo "## $name: hip-unroll $*" >>"$log"
  (cd "$work" && python3 - "$out/runs.tsv" "$name" "$out/$name.out" "$bin" "$@" 2>>"$log") <<'PY'
import resource, subprocess, sys, time
tsv, name, stdout, *cmd = sys.argv[1:]
t = time.monotonic()
with open(stdout, "wb") as f:
    rc = subprocess.run(cmd, stdout=f).returncode
wall = time.monotonic() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1e6  # kB -> GB
with open(tsv, "a") as f:
    f.write(f"{name}\t{rc}\t{wall:.2f}\t{rss:.2f}\n")
print(f"{name}: exit {rc}, {wall:.2f} s wall, peak resident memory {rss:.2f} GB")
PY
}

common=(--nvcc "$nvcc" --cache-dir "$cache")
timed bench-cold bench large.toml --backend cuda --iterations 10 "${common[@]}" --format json
timed bench-warm bench large.toml --backend cuda --iterations 10 "${common[@]}" --format json
timed tune-few tune . --backend bench --spec large.toml --nvcc "$nvcc" --factors 2 --mode pragma --dry-run --format json -o "$out/tune-few.json"
timed tune-many tune . --backend bench --spec large.toml --nvcc "$nvcc" --factors 2,4,8,full --mode both --dry-run --format json -o "$out/tune-many.json"

python3 - "$out" <<'EOF' >"$out/summary.md"
import json, os, sys
out = sys.argv[1]
print("# gpu_large_spec summary\n")
print("```\n" + open(os.path.join(out, "machine.txt")).read().strip() + "\n```\n")
print("| run | exit | wall s | peak resident memory GB |")
print("|---|---:|---:|---:|")
for line in open(os.path.join(out, "runs.tsv")):
    name, rc, wall, rss = line.split()
    print(f"| {name} | {rc} | {wall} | {rss} |")
for name in ("tune-few", "tune-many"):
    try:
        r = json.load(open(os.path.join(out, name + ".json")))
    except (OSError, ValueError):
        print(f"\n{name}: no report")
        continue
    counts = {}
    for c in r["candidates"]:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    t = r["timing"]
    print(f"\n{name}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    print(f"\n    timing: {t['wall']:.2f} s wall = measure {t['measure']:.2f} + compile {t['compile']:.2f} + prepare {t['prepare']:.2f} + gates {t['gates']:.2f} + waiting {t['waiting']:.2f} + other {t['other']:.2f}")
    print(f"    work: {json.dumps(t['work'])}; counts: {json.dumps(t['counts'])}")
    for c in r["candidates"]:
        full = "full" if c.get("full") else f"x{c.get('factor')}"
        speed = f" {c['speedup']:.3f}x" if c.get("speedup") is not None else ""
        occ = f" occupancy {json.dumps(c['occupancy'])}" if c.get("occupancy") else ""
        print(f"    {c['loop']} {c.get('mode')} {full}: {c['status']}{speed}{occ}" + (f" ({c['reason']})" if c.get("reason") else ""))
EOF
cat "$out/summary.md"
