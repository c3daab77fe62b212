#!/usr/bin/env bash
# `hip-unroll spec new` (issue 28 item 2) on every kernel of a tree of real repositories, through
# the library (specgen/examples/corpus_drafts.rs): kernels found, drafted and refused (grouped by
# reason), panics, and what the drafts hold (outputs, min-lengths, placeholders, guesses).
# A kernel that no spec can describe (a struct by value, half precision) or a template named
# without an instantiation is refused, as the CLI refuses it. The per-kernel list goes to
# $OUT/kernels.tsv (file, kernel, outcome).
#
# Usage: bench/spec_new_corpus.sh [DIR] (default /work/corpus)   Environment: OUT (default /tmp/spec_new_corpus)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(cd "${1:-/work/corpus}" && pwd)
OUT=${OUT:-/tmp/spec_new_corpus}
mkdir -p "$OUT"
(cd "$ROOT" && cargo build --release -q -p specgen --example corpus_drafts)
"$ROOT/target/release/examples/corpus_drafts" "$DIR" --list > "$OUT/all.txt"
grep -v '^/' "$OUT/all.txt"
grep '^/' "$OUT/all.txt" > "$OUT/kernels.tsv" || true
echo "per kernel: $OUT/kernels.tsv"
