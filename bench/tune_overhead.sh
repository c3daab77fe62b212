#!/usr/bin/env bash
# The tuner's own overhead, measured against a baseline in the same run:
#  1. `tune` over a generated tree of K kernels (one loop each, factors 2,4 x pragma,manual:
#     4 variants per loop), with `true` as --build and `echo t 1.0` as --run (a constant
#     figure: every comparison stops at the first look, 10 pairs). The baseline is the same
#     number of `sh -c` invocations of the same commands, run by a shell loop: the difference
#     is what hip-unroll adds (working copies, rewrites, ledger, statistics, process handling).
#     The code-object gates are skipped here ([compile] command = false, the baseline does not
#     compile) so that hipcc's time is not counted; run 2 counts it.
#  2. The same with the real gates (hipcc, gfx90a): the compile share.
#  3. A second `tune` over the unchanged tree (--dry-run keeps it unchanged): it compiles and
#     builds nothing; its time against run 2's.
#  4. The time a tune spends on necessary work: the command backend with a run of RUN_MS
#     (default 60) ms (`sleep`, then a constant figure) over the tree of K kernels with the real
#     gates (a fresh compile cache), against the runs' own time (every sample as the lane timed
#     it) plus the distinct gate compiles (the wall time during which they ran, in parallel),
#     from the report's `timing` object; target: wall <= 1.3 x (runs + compiles).
# Usage: bench/tune_overhead.sh [K]   (default 8). Needs a release build and hipcc.
set -euo pipefail
K=${1:-8}
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$repo/target/release/hip-unroll
[ -x "$bin" ] || (cd "$repo" && cargo build --release --quiet)
work=$(mktemp -d "${TMPDIR:-/tmp}/tune-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
mk_tree() { # dir
    mkdir -p "$1"
    for i in $(seq 1 "$K"); do
        cat > "$1/k$i.cu" <<CU
#include <hip/hip_runtime.h>
__global__ void k$i(float* a, const float* b, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < n; ++j) {
        s += a[j] * b[(t + j) % n];
    }
    a[t] = s;
}
CU
    done
}
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "kernels: $K, variants per loop: 4 (factors 2,4 x pragma,manual)"

# 1. Overhead without compiles: R rounds, tune (fresh state) and the bare commands alternating,
# so that the machine's load hits both; the median of the per-round ratios.
R=${ROUNDS:-5}
mk_tree "$work/a"
printf '[compile]\ncommand = "false {src} -o {out}"\n' > "$work/a/hip-unroll.toml"
cd "$work/a"
rows=""
for r in $(seq 1 "$R"); do
    rm -rf "$work/state-a"
    t0=$(now)
    "$bin" tune --build true --run 'echo t 1.0' --time-regex 't ([0-9.]+)' --factors 2,4 \
        --state "$work/state-a" --dry-run --format json -o "$work/a.json" 2>/dev/null
    t1=$(now)
    cands=$(python3 -c "import json;r=json.load(open('$work/a.json'));print(sum(1 for c in r['candidates'] if c['runs']))")
    read builds runs < <(sqlite3 "$work/state-a/ledger.db" \
        "SELECT (SELECT count(*) FROM builds), (SELECT count(*) FROM samples) + (SELECT count(*) FROM builds WHERE outcome='ok');" | tr '|' ' ')
    t2=$(now)
    for _ in $(seq 1 "$builds"); do sh -c true; done
    for _ in $(seq 1 "$runs"); do sh -c 'echo t 1.0' >/dev/null; done
    t3=$(now)
    rows="$rows $t0,$t1,$t2,$t3,$cands,$builds,$runs"
done
python3 - $rows <<'PY'
import statistics, sys
rows = [list(map(float, a.split(","))) for a in sys.argv[1:]]
tune = [r[1] - r[0] for r in rows]
bare = [r[3] - r[2] for r in rows]
ratio = [t / b for t, b in zip(tune, bare)]
cands, builds, runs = map(int, rows[0][4:7])
per = [(t - b) / cands * 1000 for t, b in zip(tune, bare)]
print(f"1. tune over {cands} measured candidates ({builds} builds, {runs} runs of --run), {len(rows)} rounds:")
print(f"   tune median {statistics.median(tune):.2f} s, the same {builds + runs} commands from a shell loop median {statistics.median(bare):.2f} s")
print(f"   ratio tune / bare commands: median {statistics.median(ratio):.2f} (rounds: {', '.join(f'{x:.2f}' for x in ratio)})")
print(f"   tuner overhead per candidate: median {statistics.median(per):.0f} ms")
PY

# 2. With the real code-object gates (hipcc).
mk_tree "$work/b"
cd "$work/b"
t0=$(now)
"$bin" tune --build true --run 'echo t 1.0' --time-regex 't ([0-9.]+)' --factors 2,4 \
    --state "$work/state-b" --dry-run > "$work/b.txt" 2>/dev/null
t1=$(now)
grep -E "compiles" "$work/b.txt" | sed 's/^/   /'
# 3. Second tune over the unchanged tree.
t2=$(now)
"$bin" tune --build true --run 'echo t 1.0' --time-regex 't ([0-9.]+)' --factors 2,4 \
    --state "$work/state-b" --dry-run > "$work/c.txt" 2>/dev/null
t3=$(now)
python3 - "$t0" "$t1" "$t2" "$t3" "$work/c.txt" <<'PY'
import sys
t0, t1, t2, t3 = map(float, sys.argv[1:5])
first, second = t1 - t0, t3 - t2
text = open(sys.argv[5]).read()
line = [l for l in text.splitlines() if "compile" in l or "nothing compiled" in l]
print(f"2. with hipcc gates: {first:.2f} s")
print(f"3. second tune, unchanged tree: {second*1000:.0f} ms = {second / first:.4f} of the first ({line[0] if line else ''})")
PY

# 4. Necessary work: the runs' own time and the distinct compiles, against the wall time.
RUN_MS=${RUN_MS:-60}
mk_tree "$work/d"
cd "$work/d"
run_s=$(python3 -c "print($RUN_MS / 1000)")
"$bin" tune --build true --run "sleep $run_s; echo t $RUN_MS" --time-regex 't ([0-9.]+)' \
    --factors 2,4 --state "$work/state-d" --dry-run --format json -o "$work/d.json" 2>/dev/null
python3 - "$work/d.json" "$RUN_MS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["timing"]
w = t["work"]
# The distinct gate compiles as they ran (in parallel, `--jobs` at a time): the wall time
# during which a compile ran and nothing was measured (`compile`); their sum over threads is
# `work.compile`.
need = w["samples"] + t["compile"]
print(f"4. command backend, {sys.argv[2]} ms runs, {t['counts']['samples']} samples, {t['counts']['compiles']} compiles, {t['counts']['builds']} builds:")
print(f"   wall {t['wall']:.2f} s; runs' own time {w['samples']:.2f} s + the compiles' wall time {t['compile']:.2f} s = {need:.2f} s (the compiles summed over threads: {w['compile']:.2f} s)")
print(f"   wall / (runs + compiles) = {t['wall'] / need:.3f} (target <= 1.3); the rest: {t['wall'] - need:.2f} s")
print(f"   phases: measure {t['measure']:.2f}, compile {t['compile']:.2f}, prepare {t['prepare']:.2f}, gates {t['gates']:.2f}, waiting {t['waiting']:.2f}, other {t['other']:.2f} (s)")
PY
