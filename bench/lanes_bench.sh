#!/usr/bin/env bash
# Lane scaling of `tune` with a simulated backend (tuner/examples/lanes_bench.rs): decisions per
# hour and parallel efficiency for 1, 2, 4, 8, 16, 32 and 64 local lanes over a synthetic
# repository of 200 loops in 40 kernels. Sleep-based latency (no CPU), time-scaled: SAMPLE_MS per
# sample and per build (default 10; the figures in bench/README.md use 20: about 12 minutes with
# both modes).
# Usage: bench/lanes_bench.sh [SAMPLE_MS] [LANES,...] [off|on|both] (overlap of builds and
# measurement: off as the CPU's command backend, on as a GPU backend; default both)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run -q --release -p tuner --example lanes_bench -- "$@"
