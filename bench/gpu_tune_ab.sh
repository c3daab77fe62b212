#!/usr/bin/env bash
# Two hip-unroll binaries, one tune each, on the same GPU in one run: the multi-spec tune of
# bench/gpu_smoke.sh (`tune . --backend bench --spec ... --factors 2,4,8 --mode both --dry-run`
# over every shipped spec, on a scratch copy of testdata/bench), each binary with a fresh
# compile cache of its own, one after the other (BASE first, then NEW, then BASE and NEW again
# when ROUNDS=2). Writes each tune's JSON report into OUT_DIR and prints each tune's timing
# line, its wall time and its compile counts: the figures to compare a change of the closed
# loop's overhead against the binary before it.
#
#   bash bench/gpu_tune_ab.sh BASE_BINARY NEW_BINARY [OUT_DIR]
#
# Environment: NVCC (else $CUDA_HOME/bin/nvcc, else nvcc on PATH), ROUNDS (1 or 2; 1),
# GPU_SMOKE_DEV (as bench/gpu_smoke.sh). NVIDIA only; without a GPU or nvcc it stops at once
# with one line, exit 2.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/gpu_lib.sh
fail() {
  echo "gpu_tune_ab: $*" >&2
  exit 2
}
[ $# -ge 2 ] || fail "usage: bash bench/gpu_tune_ab.sh BASE_BINARY NEW_BINARY [OUT_DIR]"
base=$(realpath "$1")
new=$(realpath "$2")
out=${3:-gpu-tune-ab-$(date -u +%Y%m%dT%H%M%SZ)}
rounds=${ROUNDS:-1}
nvcc=$(gpu_nvidia) || exit 2
[ -x "$base" ] && [ -x "$new" ] || fail "BASE_BINARY and NEW_BINARY must be executables"
command -v python3 >/dev/null || fail "python3 is needed to read the reports"
mkdir -p "$out"
out=$(realpath "$out")
gpu_machine "$nvcc" "$out/machine.txt"
# The compiler's own files into the page cache first, so that neither binary pays for that.
warm=$(mktemp -d)
"$nvcc" -cubin -arch=sm_90 testdata/bench/dot.cu -o "$warm/w.cubin" >/dev/null 2>&1 || true
"$nvcc" -ptx -arch=sm_90 testdata/bench/dot.cu -o "$warm/w.ptx" >/dev/null 2>&1 || true
rm -rf "$warm"

specs=()
for spec in testdata/bench/*.toml testdata/bench/cuda/*.toml; do
  specs+=(--spec "${spec#testdata/bench/}")
done

# tune NAME BINARY: one tune on a fresh copy with a fresh cache.
tune() {
  local name=$1 bin=$2 work
  work=$(mktemp -d)
  cp -r testdata/bench/. "$work/"
  printf '[compile]\ncache-dir = "%s"\n' "$work/.cache" >"$work/hip-unroll.toml"
  local t0 t1
  t0=$(date +%s.%N)
  if (cd "$work" && "$bin" tune . --backend bench "${specs[@]}" --nvcc "$nvcc" \
    --factors 2,4,8 --mode both --dry-run --format json -o "$out/$name.json" 2>>"$out/log.txt"); then
    t1=$(date +%s.%N)
    python3 - "$out/$name.json" "$name" "$t0" "$t1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["timing"]
counts = {}
for c in r["candidates"]:
    counts[c["status"]] = counts.get(c["status"], 0) + 1
print(f"{sys.argv[2]}: process {float(sys.argv[4]) - float(sys.argv[3]):.2f} s; timing: {t['wall']:.2f} s wall = measure {t['measure']:.2f} + compile {t['compile']:.2f} + prepare {t['prepare']:.2f} + gates {t['gates']:.2f} + waiting {t['waiting']:.2f} + other {t['other']:.2f}; work compile {t['work']['compile']:.2f} prepare {t['work']['prepare']:.2f}; counts {json.dumps(t['counts'])}; " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
PY
  else
    echo "$name: exit $? (see $out/log.txt)"
  fi
  rm -rf "$work"
}

for round in $(seq 1 "$rounds"); do
  tune "base.$round" "$base" | tee -a "$out/summary.txt"
  tune "new.$round" "$new" | tee -a "$out/summary.txt"
done
