#!/usr/bin/env bash
# Benchmark: what `Function::address_uses` (issue 28 item 2, frontend/src/lower/addresses.rs)
# costs the lowering. `frontend::parse` of this tree against the frontend of BASE (default: the
# merge base with main), both built into one benchmark binary (the crates renamed
# frontend_base and frontend_new), parsing the same files single-threaded in alternating order
# (A B B A ...) for ROUNDS rounds; prints the median seconds per round of each, the median of
# the per-round NEW/BASE ratios, and the load average before and after.
#
# Usage: bench/address_uses_cost.sh [CORPUS_DIR] (default /work/corpus)
# Environment: BASE (git revision), ROUNDS (default 11), OUT (default /tmp/address_uses_cost).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=$(cd "${1:-/work/corpus}" && pwd)
BASE=${BASE:-$(git -C "$ROOT" merge-base HEAD main)}
ROUNDS=${ROUNDS:-11}
OUT=${OUT:-/tmp/address_uses_cost}
rm -rf "$OUT/ws" && mkdir -p "$OUT/ws/bench/src"

# The two frontends, renamed.
git -C "$ROOT" archive "$BASE" frontend | tar -x -C "$OUT/ws" && mv "$OUT/ws/frontend" "$OUT/ws/base"
cp -r "$ROOT/frontend" "$OUT/ws/new"
sed -i 's/^name = "frontend"/name = "frontend_base"/' "$OUT/ws/base/Cargo.toml"
sed -i 's/^name = "frontend"/name = "frontend_new"/' "$OUT/ws/new/Cargo.toml"
rm -rf "$OUT/ws/base/tests" "$OUT/ws/new/tests" "$OUT/ws/base/benches" "$OUT/ws/new/benches"

# A workspace with the root's package settings, lints and the dependencies the frontend uses.
{
    echo '[workspace]'
    echo 'members = ["base", "new", "bench"]'
    echo 'resolver = "2"'
    sed -n '/^\[workspace.lints.clippy\]/,/^$/p; /^\[workspace.package\]/,/^$/p' "$ROOT/Cargo.toml"
    echo '[workspace.dependencies]'
    grep -E '^(tree-sitter|tree-sitter-cuda|serde|thiserror|memchr|blake3|libmimalloc-sys|insta|proptest|tempfile|serde_json) = ' "$ROOT/Cargo.toml"
    echo
    echo '[profile.release]'
    echo 'debug = "line-tables-only"'
    echo 'codegen-units = 16'
} > "$OUT/ws/Cargo.toml"
cat > "$OUT/ws/bench/Cargo.toml" <<'EOF'
[package]
name = "parsecost"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
frontend_base = { path = "../base" }
frontend_new = { path = "../new" }
EOF
cat > "$OUT/ws/bench/src/main.rs" <<'EOF'
//! Parses the files of a list with two frontends in alternating order; prints one line per
//! round: seconds of the base, seconds of the new one, and what both found (to keep the work).
use std::time::Instant;
fn main() {
    let mut args = std::env::args().skip(1);
    let list = args.next().expect("file list");
    let rounds: usize = args.next().map_or(11, |r| r.parse().unwrap());
    let files: Vec<Vec<u8>> = std::fs::read_to_string(&list)
        .unwrap()
        .lines()
        .filter_map(|p| std::fs::read(p).ok())
        .collect();
    let base = || {
        let t = Instant::now();
        let n: usize = files.iter().map(|f| frontend_base::parse(f).functions.len()).sum();
        (t.elapsed().as_secs_f64(), n)
    };
    let new = || {
        let t = Instant::now();
        let mut uses = 0;
        let n: usize = files
            .iter()
            .map(|f| {
                let p = frontend_new::parse(f);
                uses += p.functions.iter().map(|x| x.address_uses.len()).sum::<usize>();
                p.functions.len()
            })
            .sum();
        (t.elapsed().as_secs_f64(), n, uses)
    };
    let (_, _) = base();
    let _ = new();
    for r in 0..rounds {
        let (b, n, (w, m, uses)) = if r % 2 == 0 {
            let b = base();
            let w = new();
            (b.0, b.1, w)
        } else {
            let w = new();
            let b = base();
            (b.0, b.1, w)
        };
        println!("{b:.4} {w:.4} {n} {m} {uses}");
    }
}
EOF

LIST="$OUT/files.txt"
find "$CORPUS" -type f \( -iname '*.cu' -o -iname '*.cuh' -o -iname '*.hip' -o -iname '*.cpp' \
    -o -iname '*.h' -o -iname '*.hpp' \) -not -path '*/.*' | LC_ALL=C sort > "$LIST"
echo "corpus: $CORPUS: $(wc -l < "$LIST") files, $(tr '\n' '\0' < "$LIST" | xargs -0 cat | wc -c) bytes; base $BASE"
(cd "$OUT/ws" && CARGO_TARGET_DIR="$OUT/target" cargo build --release --offline -q -p parsecost)
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$OUT/target/release/parsecost" "$LIST" "$ROUNDS" > "$OUT/rounds.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$OUT/rounds.txt" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
b = [float(r[0]) for r in rows]; w = [float(r[1]) for r in rows]
assert all(r[2] == r[3] for r in rows), "the two frontends found different functions"
ratios = [y / x for x, y in zip(b, w)]
print(f"rounds: {len(rows)}; functions: {rows[0][2]}; address uses: {rows[0][4]}")
print(f"base median {statistics.median(b):.3f} s, new median {statistics.median(w):.3f} s")
print(f"NEW/BASE per round: median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
EOF
