#!/usr/bin/env bash
# A bench session's host work on a simulated GPU of GPU-like bandwidth, for this tree and for
# the session code before issue 27 in one run (runner/benches/session_host.rs; the model is
# runner::sim::Model::gpu_like): session open, per-variant host work (wall less device time,
# and CPU time less the device's), resident memory after some variants.
#
# The base is an export (`git archive`) of BASE (default: the merge base with main) with this
# tree's simulated device (runner/src/sim.rs) and benchmark copied in, its view of the old API
# from bench/session_host_base_api.rs; it builds into target-session-base/ (not this tree's
# target/: cargo names a workspace crate's artifacts by its path relative to the workspace, so
# the base's runner would overwrite this tree's, and the next build of this tree could take the
# base's for fresh).
#
# Usage: bench/session_host.sh [MB] [VARIANTS] [CHECKPOINTS] [BASE_VARIANTS] [BASE_CHECKPOINTS]
#   defaults: 1600 10 1,5,10 3 1,2,3 (the base holds a copy of the outputs per variant: 1.6 GB
#   each; it is run with fewer variants so that the machine's memory is enough).
# Needs: nvcc (CUDA_HOME) or clang++-19 for the one compile, about 10 GB of free memory at
# 1600 MB (the simulated device's memory is host memory: 3 buffers), more for the base.
set -euo pipefail
MB=${1:-1600}
VARIANTS=${2:-10}
CHECKPOINTS=${3:-1,5,10}
BASE_VARIANTS=${4:-3}
BASE_CHECKPOINTS=${5:-1,2,3}
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
BASE=${BASE:-$(git merge-base HEAD main)}
work=$(mktemp -d "${TMPDIR:-/tmp}/session-host.XXXXXX")
trap 'rm -rf "$work"' EXIT

load() { echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), memory available $(awk '/MemAvailable/ {printf "%.1f GB", $2/1e6}' /proc/meminfo)"; }

# The base: BASE's sources with the simulated device and the benchmark of this tree.
git archive "$BASE" | tar -x -C "$work"
cp runner/src/sim.rs "$work/runner/src/sim.rs"
echo 'pub mod sim;' >> "$work/runner/src/lib.rs"
mkdir -p "$work/runner/benches/session_host"
cp runner/benches/session_host.rs "$work/runner/benches/"
cp bench/session_host_base_api.rs "$work/runner/benches/session_host/api.rs"
# A base before issue 27 lacks the benchmark's dependencies and its [[bench]] entry; a later
# one has them.
for dep in rayon libc; do
  grep -q "^$dep.workspace = true$" "$work/runner/Cargo.toml" ||
    sed -i "s/^blake3.workspace = true$/blake3.workspace = true\n$dep.workspace = true/" "$work/runner/Cargo.toml"
done
grep -q '^name = "session_host"$' "$work/runner/Cargo.toml" ||
  printf '\n[[bench]]\nname = "session_host"\nharness = false\n' >> "$work/runner/Cargo.toml"

echo "== build"
cargo bench -p runner --bench session_host --no-run --quiet
(cd "$work" && CARGO_TARGET_DIR="$repo/target-session-base" cargo bench -p runner --bench session_host --no-run --quiet)

echo "== this tree ($(git rev-parse --short HEAD)$(git diff --quiet || echo ', with changes'))"
load
cargo bench -p runner --bench session_host --quiet -- --mb "$MB" --variants "$VARIANTS" --checkpoints "$CHECKPOINTS" | tee "$work/new.txt"
load
echo "== base ($(git rev-parse --short "$BASE"))"
load
(cd "$work" && CARGO_TARGET_DIR="$repo/target-session-base" cargo bench -p runner --bench session_host --quiet -- --mb "$MB" --variants "$BASE_VARIANTS" --checkpoints "$BASE_CHECKPOINTS") | tee "$work/base.txt"
load
echo "== base / this tree (host seconds: wall less device time; cpu: CPU time less the device's)"
python3 - "$work/new.txt" "$work/base.txt" <<'PY'
import sys
def figures(path):
    line = next(l for l in open(path) if l.startswith("figures "))
    return {k: float(v) for k, v in (w.split("=") for w in line.split()[1:])}
new, base = figures(sys.argv[1]), figures(sys.argv[2])
for k in new:
    print(f"{k:<14} base {base[k]:8.3f} s  this tree {new[k]:8.3f} s  ratio {base[k] / new[k]:6.1f}x")
PY
