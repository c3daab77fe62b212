#!/usr/bin/env bash
# First run of `hip-unroll bench` and `tune --backend bench` on a machine with a GPU (AMD with ROCm, or NVIDIA with only
# the driver). Run from the repository root (or a copy holding target/release/hip-unroll,
# testdata/bench and, for NVIDIA without clang, the cache prepared below).
#
# Prepare on a machine with clang-19 (the NVIDIA path needs no compiler on the GPU machine):
#   cargo build --release && strip target/release/hip-unroll
#   for s in testdata/bench/dot.toml testdata/bench/stencil.toml; do
#     target/release/hip-unroll bench "$s" --compile-only --backend cuda --arch sm_80 \
#       --source "${s%.toml}.unrolled.cu" --cache-dir bench-cache
#   done
#   # carry: target/release/hip-unroll, testdata/bench/, bench-cache/, bench/gpu_smoke.sh
#
# Then on the GPU machine:  bash bench/gpu_smoke.sh [auto|hip|cuda] [ITERATIONS]
set -euo pipefail
backend=${1:-auto}
iterations=${2:-100}
bin=${HIP_UNROLL:-target/release/hip-unroll}
cache=${CACHE_DIR:-bench-cache}
arch=()
if [ "$backend" = cuda ] || { [ "$backend" = auto ] && [ ! -e /dev/kfd ]; }; then
  arch=(--arch "${CUDA_ARCH:-sm_80}")
fi
echo "# $(date -u +%FT%TZ) $(uname -n); load: $(cut -d' ' -f1-3 /proc/loadavg)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader || true
command -v rocm-smi >/dev/null && rocm-smi --showproductname || true
for spec in testdata/bench/dot.toml testdata/bench/stencil.toml; do
  variant=${spec%.toml}.unrolled.cu
  echo "## $spec (baseline alone)"
  "$bin" bench "$spec" --backend "$backend" "${arch[@]}" --iterations "$iterations" --cache-dir "$cache"
  echo "## $spec --compare $variant (interleaved A B A B)"
  "$bin" bench "$spec" --backend "$backend" "${arch[@]}" --iterations "$iterations" --cache-dir "$cache" \
    --source "$variant" --compare
  echo "## $spec A/A (the noise floor: the baseline against itself)"
  "$bin" bench "$spec" --backend "$backend" "${arch[@]}" --iterations "$iterations" --cache-dir "$cache" \
    --source "${spec%.toml}.cu" --compare
done

# The closed loop on the GPU: `tune --backend bench` over a scratch copy of each spec's kernel.
# It compiles every variant itself (clang-19 for NVIDIA, hipcc for AMD). On a driver-only NVIDIA
# machine, carry the variants' objects instead: on the machine with clang-19, for each loop id L
# of the kernel, factor F in 2 4 8 and mode M in pragma manual,
#   target/release/hip-unroll unroll testdata/bench/dot.cu --loop L --factor F --mode M -o /tmp/v.cu
#   target/release/hip-unroll bench testdata/bench/dot.toml --compile-only --backend cuda \
#     --arch sm_80 --source /tmp/v.cu --cache-dir bench-cache
# (the variants `tune` makes are byte-identical to `unroll`'s: both go through `pipeline`), and
# tune reads the same cache through `[compile] cache-dir` below.
binabs=$(realpath "$bin")
for spec in testdata/bench/dot.toml testdata/bench/stencil.toml; do
  work=$(mktemp -d)
  cp "$spec" "${spec%.toml}.cu" "$work/"
  printf '[compile]\ncache-dir = "%s"\n' "$(realpath "$cache")" > "$work/hip-unroll.toml"
  echo "## tune --backend bench on $spec (scratch copy $work)"
  (cd "$work" && "$binabs" tune . --backend bench --spec "$(basename "$spec")" "${arch[@]}" \
     --factors 2,4,8 --mode both --dry-run --format human) || echo "tune exited $?"
done
