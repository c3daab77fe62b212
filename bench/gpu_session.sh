#!/usr/bin/env bash
# One device call for a session lent a GPU (the device time is short: 15 minutes, start
# included): the machine's description, then bench/gpu_smoke.sh, bench/gpu_occupancy.sh,
# bench/gpu_repeat_tune.sh testdata/bench/dot.toml, bench/gpu_batch_ab.sh and
# bench/gpu_large_spec.sh (about 10 GB of host memory), each under its
# own time limit (so that a slow step leaves the others their share), each into its own folder
# of OUT_DIR/reports.tar.gz with its output (step.log) and its reports (JSON, summaries; one archive: the
# device tool returns at most 8 files; the run folders with the scratch copies stay behind), and the wall time and exit status of every step in OUT_DIR/steps.txt.
#
#   HIP_UNROLL=target/gpu/hip-unroll bash bench/gpu_session.sh OUT_DIR
#
# HIP_UNROLL is required (a stripped release binary carried to the machine: it has no cargo
# registry). Environment: LIMITS ("smoke occupancy repeat batch large" seconds; "140 130 110 150
# 150"), STEPS (which of smoke occupancy repeat batch large to run; all). Exit status: 2 without HIP_UNROLL,
# else 0 (each step's own status is in steps.txt: the figures of the steps that finished are
# kept when another fails).
set -u
out=${1:?usage: gpu_session.sh OUT_DIR}
[ -x "${HIP_UNROLL:-}" ] || { echo "gpu_session.sh: HIP_UNROLL must name a built hip-unroll binary" >&2; exit 2; }
cd "$(dirname "$0")/.."
mkdir -p "$out"
read -r l_smoke l_occ l_rep l_batch l_large <<<"${LIMITS:-140 130 110 150 150}"
steps=${STEPS:-smoke occupancy repeat batch large}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  command -v nvcc && nvcc --version | tail -2
  nproc
  "$HIP_UNROLL" --version
} > "$out/machine.txt" 2>&1
: > "$out/steps.txt"
runs=$(mktemp -d)
keep=$(mktemp -d)
step() {
  local name=$1 limit=$2; shift 2
  local start=$SECONDS rc f
  mkdir -p "$keep/$name"
  timeout -k 5 "$limit" "$@" > "$keep/$name/step.log" 2>&1
  rc=$?
  # The step's reports, flattened (the device tool returns no deep folders; the scratch copies
  # of the specs' sources stay behind).
  (cd "$runs/$name" 2>/dev/null && find . -maxdepth 3 -type f \( -name '*.json' -o -name '*.md' -o -name '*.txt' \) -size -8M) |
    while read -r f; do f=${f#./}; cp "$runs/$name/$f" "$keep/$name/$(echo "$f" | tr / _)"; done
  echo "$name rc=$rc wall=$((SECONDS - start))s limit=${limit}s" >> "$out/steps.txt"
}
for s in $steps; do
  case $s in
    smoke) step smoke "$l_smoke" bash bench/gpu_smoke.sh "$runs/smoke" 50 ;;
    occupancy) step occupancy "$l_occ" bash bench/gpu_occupancy.sh "$runs/occupancy" ;;
    repeat) step repeat "$l_rep" bash bench/gpu_repeat_tune.sh testdata/bench/dot.toml "$runs/repeat" ;;
    batch) step batch "$l_batch" bash bench/gpu_batch_ab.sh "$runs/batch" ;;
    large) step large "${l_large:-150}" bash bench/gpu_large_spec.sh "$runs/large" ;;
    *) echo "gpu_session.sh: unknown step $s" >&2 ;;
  esac
done
cp "$out/machine.txt" "$out/steps.txt" "$keep/"
tar -czf "$out/reports.tar.gz" -C "$keep" .
for s in $steps; do tail -n 25 "$keep/$s/step.log" 2>/dev/null; done
cat "$out/steps.txt"
exit 0
