#!/usr/bin/env bash
# The share of `#pragma unroll N` variants whose gfx90a machine code is the baseline's
# (`same-code`), with the tuner's own discovery, rewrite and gates (tuner/examples/same_code_share.rs),
# over the corpus files hipcc compiles alone (LIST, from bench/corpus_compiles.py).
# Usage: bench/same_code_share.sh LIST [FACTORS]   (FACTORS default 2,4,8)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run -q --release -p tuner --example same_code_share -- "$@"
