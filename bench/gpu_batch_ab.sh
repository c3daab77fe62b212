#!/usr/bin/env bash
# Launch by launch against batched samples, on one GPU in one run: for every shipped spec
# (testdata/bench/*.toml, testdata/bench/cuda/*.toml), an A/A `bench` (the kernel against its
# own source, `--compare --time-same-code`) with `launches-per-sample = 1` written into a copy
# of the spec, then one with the runner's own choice (`runner::session::auto_batch`: kernels
# under 50 us in batches of at least 100 us), alternating ROUNDS times. Prints per spec and mode
# the launches per sample, the baseline median, its relative MAD, the A/A ratio of medians and
# the range of the per-pair ratios (variant / baseline sample by sample): what decides whether a
# short kernel's accepted speedup can be trusted (on the H200 an 8 us kernel's per-pair ratios
# ran from 0.77 to 1.38 launch by launch).
#
#   HIP_UNROLL=target/release/hip-unroll bash bench/gpu_batch_ab.sh [OUT_DIR] [ITERATIONS]
#
# Environment: HIP_UNROLL (else built here), NVCC (else $CUDA_HOME/bin/nvcc, else nvcc on PATH),
# ROUNDS (2), SPECS (spec names to run, e.g. "dot gelu"; default all), GPU_SMOKE_DEV (as
# bench/gpu_smoke.sh). The summary is bench/batch_summary.py's; exit 1 when a run failed. NVIDIA only; without a GPU or nvcc it stops
# at once with one line, exit 2.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/gpu_lib.sh
fail() {
  echo "gpu_batch_ab: $*" >&2
  exit 2
}
out=${1:-gpu-batch-ab-$(date -u +%Y%m%dT%H%M%SZ)}
iterations=${2:-60}
rounds=${ROUNDS:-2}
nvcc=$(gpu_nvidia) || exit 2
command -v python3 >/dev/null || fail "python3 is needed to write the spec copies and read the reports"
bin=$(gpu_binary "no cargo here to build hip-unroll: set HIP_UNROLL to a built binary") || exit 2
mkdir -p "$out"
out=$(realpath "$out")
gpu_machine "$nvcc" "$out/machine.txt"

# A scratch copy of the specs and their sources; beside each spec its launch-by-launch twin.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r testdata/bench/. "$work/"
cache="$work/.cache"
specs=()
for spec in "$work"/*.toml "$work"/cuda/*.toml; do
  case "$spec" in *.single.toml) continue ;; esac
  [ -e "$spec" ] || continue
  if [ -n "${SPECS:-}" ] && ! [[ " $SPECS " == *" $(basename "${spec%.toml}") "* ]]; then
    continue
  fi
  python3 - "$spec" <<'PY'
import re, sys
p = sys.argv[1]
text = open(p).read()
# A top-level key goes before the first table; the version line is always there.
text = re.sub(r"(?m)^(version *= *1 *)$", r"\1\nlaunches-per-sample = 1", text, count=1)
open(p[:-5] + ".single.toml", "w").write(text)
PY
  specs+=("$spec")
done

failed=0
for round in $(seq 1 "$rounds"); do
  for spec in "${specs[@]}"; do
    name=$(basename "${spec%.toml}")
    source=$(python3 -c 'import sys, tomllib, os; p = sys.argv[1]; print(os.path.join(os.path.dirname(p), tomllib.load(open(p, "rb"))["source"]))' "$spec")
    for mode in single auto; do
      s=$spec
      [ "$mode" = single ] && s=${spec%.toml}.single.toml
      if ! "$bin" bench "$s" --backend cuda --nvcc "$nvcc" --cache-dir "$cache" \
        --iterations "$iterations" --source "$source" --compare --time-same-code \
        --format json >"$out/$name.$mode.$round.json" 2>>"$out/log.txt"; then
        failed=$((failed + 1))
        echo "failed: $name $mode (round $round; see $out/log.txt)"
      fi
    done
  done
done

python3 bench/batch_summary.py "$out" | tee "$out/summary.md"
echo "gpu_batch_ab: $failed failed; reports in $out"
[ "$failed" -eq 0 ] || exit 1
