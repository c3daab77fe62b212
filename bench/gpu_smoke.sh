#!/usr/bin/env bash
# The first command to run on any machine with a GPU: builds hip-unroll there, compiles every
# shipped launch spec's kernel there (nvcc on NVIDIA, for the GPU's own architecture; hipcc on
# AMD) and runs, per spec: the baseline alone, an A/A comparison (the baseline against itself,
# the noise floor), each candidate loop's unrolled variant with --compare; then the closed loop,
# one `tune --backend bench` (--dry-run) over every spec at once on a scratch copy of
# testdata/bench (each loop judged by the specs of the kernels reaching it). Writes one JSON
# file per run and a
# summary (summary.md) into OUT_DIR, and copies the run's figures into nothing else: put them in
# the README's "what has run on a GPU" by hand, with the machine named.
#
#   bash bench/gpu_smoke.sh [OUT_DIR] [ITERATIONS]
#
# Run from the repository root (or anywhere: it changes to the root). Without a GPU, or on an
# NVIDIA machine without nvcc, it stops at once with one line and exit status 2.
# Environment: NVCC (nvcc to use; else $CUDA_HOME/bin/nvcc, else nvcc on PATH), HIP_UNROLL (a
# built binary to use instead of `cargo build --release`), SPECS (space-separated spec paths
# instead of the shipped ones), GPU_SMOKE_DEV (where the GPU device nodes are; /dev; tests
# point it elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/gpu_lib.sh
out=${1:-gpu-smoke-$(date -u +%Y%m%dT%H%M%SZ)}
iterations=${2:-100}

fail() {
  echo "gpu_smoke: $*" >&2
  exit 2
}

# A GPU, or stop here.
dev=${GPU_SMOKE_DEV:-/dev}
if [ -e "$dev/nvidiactl" ] || [ -e "$dev/nvidia0" ]; then
  vendor=nvidia
elif [ -e "$dev/kfd" ]; then
  vendor=amd
else
  fail "no GPU on this machine (no /dev/nvidia0, no /dev/kfd): run it on one that has a GPU"
fi

# NVIDIA: everything is compiled here, by nvcc.
nvcc_args=()
backend=(--backend hip)
if [ "$vendor" = nvidia ]; then
  backend=(--backend cuda)
  nvcc=$(gpu_nvcc)
  if [ -z "$nvcc" ]; then
    fail "no nvcc on this NVIDIA machine (NVCC, \$CUDA_HOME/bin, PATH): install the CUDA toolkit, or pip install nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85 nvidia-nvvm==13.0.88 into a venv and set NVCC"
  fi
  nvcc_args=(--nvcc "$nvcc")
fi

# hip-unroll, built here.
bin=$(gpu_binary "no cargo here to build hip-unroll: install Rust, or set HIP_UNROLL to a built binary") || exit 2
command -v python3 >/dev/null || fail "python3 is needed to list candidate loops and write the summary"

mkdir -p "$out"
out=$(realpath "$out")
cache="$out/cache"
log="$out/log.txt"
{
  echo "# $(date -u +%FT%TZ) $(uname -n); load: $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ "$vendor" = nvidia ]; then
    if command -v nvidia-smi >/dev/null; then
      nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm --format=csv,noheader || true
    fi
    "$nvcc" --version | tail -2
  else
    if command -v rocm-smi >/dev/null; then rocm-smi --showproductname || true; fi
  fi
} | tee "$out/machine.txt"

if [ -n "${SPECS:-}" ]; then
  read -r -a specs <<<"$SPECS"
elif [ "$vendor" = nvidia ]; then
  specs=(testdata/bench/*.toml testdata/bench/cuda/*.toml)
else
  # The CUDA-source kernels (cooperative groups, __ldcs) are NVIDIA's.
  specs=(testdata/bench/*.toml)
fi

runs=0
failed=0
# run NAME ARGS...: one `hip-unroll` run, its JSON in $out/NAME.json, its stderr in the log.
run() {
  local name=$1
  shift
  runs=$((runs + 1))
  echo "## $name: hip-unroll $*" >>"$log"
  if "$bin" "$@" --format json >"$out/$name.json" 2>>"$log"; then
    echo "ok      $name"
  else
    local rc=$?
    failed=$((failed + 1))
    echo "exit $rc  $name (see $log)"
    echo "{\"exit\": $rc}" >"$out/$name.json.exit"
  fi
}

for spec in "${specs[@]}"; do
  name=$(basename "${spec%.toml}")
  source=$(python3 -c 'import sys, tomllib, os; p = sys.argv[1]; print(os.path.join(os.path.dirname(p), tomllib.load(open(p, "rb"))["source"]))' "$spec" 2>/dev/null ||
    sed -n 's/^source *= *"\(.*\)"/\1/p' "$spec" | head -1 | sed "s|^|$(dirname "$spec")/|")
  common=("${backend[@]}" --iterations "$iterations" --cache-dir "$cache" "${nvcc_args[@]}")
  run "$name.baseline" bench "$spec" "${common[@]}"
  run "$name.aa" bench "$spec" "${common[@]}" --source "$source" --compare --time-same-code
  # Every candidate loop of the kernel's file, unrolled by 4 (pragma), compared.
  "$bin" check "$source" --format json 2>>"$log" |
    python3 -c 'import json, sys
for f in json.load(sys.stdin)["files"]:
    for fn in f["functions"]:
        for l in fn["loops"]:
            if l["verdict"] == "candidate":
                print(l["id"])' >"$out/$name.loops" || true
  i=0
  while read -r loop; do
    i=$((i + 1))
    # The variant replaces the source in a copy of its directory, so that its includes resolve.
    vdir="$out/variants/$name.v$i"
    mkdir -p "$vdir"
    cp -r "$(dirname "$source")/." "$vdir/"
    variant="$vdir/$(basename "$source")"
    if "$bin" unroll "$source" --loop "$loop" --factor 4 --mode pragma -o "$variant" 2>>"$log"; then
      echo "$name.v$i: $loop pragma x4" >>"$out/variants.txt"
      run "$name.v$i" bench "$spec" "${common[@]}" --source "$variant" --compare
    fi
  done <"$out/$name.loops"
done

# The closed loop: one tune over every spec at once (each loop judged by the specs of the
# kernels that reach it), on a scratch copy of testdata/bench. A spec outside testdata/bench is
# left out of it (said in the log).
work=$(mktemp -d)
cp -r testdata/bench/. "$work/"
printf '[compile]\ncache-dir = "%s"\n' "$cache" >"$work/hip-unroll.toml"
tune_specs=()
for spec in "${specs[@]}"; do
  rel=$(python3 -c 'import os, sys; print(os.path.relpath(os.path.abspath(sys.argv[1]), os.path.abspath("testdata/bench")))' "$spec")
  case "$rel" in
    ../*) echo "## $spec is outside testdata/bench: not in the tune" >>"$log" ;;
    *) tune_specs+=(--spec "$rel") ;;
  esac
done
if [ "${#tune_specs[@]}" -gt 0 ]; then
  runs=$((runs + 1))
  echo "## bench.tune: tune . --backend bench ${tune_specs[*]}" >>"$log"
  if (cd "$work" && "$bin" tune . --backend bench "${tune_specs[@]}" \
    "${nvcc_args[@]}" --factors 2,4,8 --mode both --dry-run --format json -o "$out/bench.tune.json" 2>>"$log"); then
    echo "ok      bench.tune"
  else
    rc=$?
    failed=$((failed + 1))
    echo "exit $rc  bench.tune (see $log)"
  fi
fi
rm -rf "$work"

python3 - "$out" <<'EOF' >"$out/summary.md"
import glob, json, os, sys
out = sys.argv[1]
print("# gpu_smoke summary\n")
print("```\n" + open(os.path.join(out, "machine.txt")).read().strip() + "\n```\n")
print("| run | kernel | target | launches/sample | baseline median ms | rel. MAD | variant median ms | ratio | same code | outputs |")
print("|---|---|---|---:|---:|---:|---:|---:|---|---|")
for p in sorted(glob.glob(os.path.join(out, "*.json"))):
    name = os.path.basename(p)[:-5]
    if name.endswith(".tune"):
        continue
    try:
        r = json.load(open(p))
    except ValueError:
        print(f"| {name} | (no report) | | | | | | | | |")
        continue
    ks = r.get("kernels", [])
    med = lambda k: f"{k['summary']['median']:.4f}" if k.get("summary") else ""
    base = med(ks[0]) if ks else ""
    var = med(ks[1]) if len(ks) > 1 else ""
    ratio = f"{r['ratio']:.4f}" if r.get("ratio") is not None else ""
    diffs = r.get("differences")
    outputs = "" if diffs is None else ("agree" if not diffs else "DIFFER")
    kernel = (ks[0].get("demangled") or ks[0].get("symbol")) if ks else ""
    mad = f"{100 * ks[0]['summary']['rel_spread']:.1f}%" if ks and ks[0].get("summary") else ""
    batch = r.get("launches_per_sample", "")
    print(f"| {name} | {kernel} | {r.get('target', {}).get('arch', '')} | {batch} | {base} | {mad} | {var} | {ratio} | {r.get('same_code', '')} | {outputs} |")
# A tune of several specs has a baseline and a final per spec (the table after this one); its
# speedup is the joint one of the specs that judged the applied loops.
print("\n| tune | baseline | final | speedup | candidates | applied |")
print("|---|---:|---:|---:|---|---|")
for p in sorted(glob.glob(os.path.join(out, "*.tune.json"))):
    try:
        r = json.load(open(p))
    except ValueError:
        continue
    counts = {}
    for c in r["candidates"]:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    shown = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    applied = ", ".join(f"{a['loop']} {a['mode']} " + ("full" if a.get("full") else f"x{a['factor']}") for a in r.get("applied", []))
    b, f = r["baseline"], r["final"]
    if len(r.get("specs") or []) > 1:
        base, fin, speed = "per spec, below", "per spec, below", f"{f['speedup']:.3f} (joint)"
    else:
        base, fin, speed = f"{b['figure']:.2f} {b['unit']}", f"{f['figure']:.2f}", f"{f['speedup']:.3f}"
    print(f"| {os.path.basename(p)[:-10]} | {base} | {fin} | {speed} | {shown} | {applied} |")
# The tune's specs: whether each could be used, the loops it judged and how many it accepted.
for p in sorted(glob.glob(os.path.join(out, "*.tune.json"))):
    try:
        r = json.load(open(p))
    except ValueError:
        continue
    if not r.get("specs"):
        continue
    print("\n| spec | kernel | status | baseline | final | loops judged | variants accepted |")
    print("|---|---|---|---:|---:|---:|---:|")
    for s in r["specs"]:
        judged = [c for c in r["candidates"] if any(j["spec"] == s["spec"] for j in c.get("judged_by", []))]
        loops = len({(c["file"], c["loop"]) for c in judged})
        accepted = sum(1 for c in judged if c["status"] == "accepted")
        status = s["status"] + (": " + s["reason"] if s.get("reason") else "")
        b, f = s.get("baseline"), s.get("final")
        base = f"{b['figure']:.2f} {b['unit']}" if b else ""
        fin = f"{f['figure']:.2f} ({f['speedup']:.3f}x)" if f else ""
        print(f"| {s['spec']} | {s['kernel']} | {status} | {base} | {fin} | {loops} | {accepted} |")
# Each tune's timing line, as its human report ends (where the wall time went).
lines = []
for p in sorted(glob.glob(os.path.join(out, "*.tune.json"))):
    try:
        t = json.load(open(p)).get("timing")
    except ValueError:
        continue
    if t:
        lines.append(f"{os.path.basename(p)[:-10]}: timing: {t['wall']:.2f} s wall = measure {t['measure']:.2f} + compile {t['compile']:.2f} + prepare {t['prepare']:.2f} + gates {t['gates']:.2f} + waiting {t['waiting']:.2f} + other {t['other']:.2f} (samples' own time {t['work']['samples']:.2f} s, {t['counts']['samples']} samples)")
if lines:
    print("\n```\n" + "\n".join(lines) + "\n```")
EOF
echo "$runs runs, $failed failed; JSON, log and summary in $out (summary.md)"
[ "$failed" -eq 0 ]
