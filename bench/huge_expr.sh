#!/usr/bin/env bash
# Benchmark: `hip-unroll check` on one huge expression (issue 26: "a 10 MB expression under
# 200 MB and 3 s"), for a base binary and this one, interleaved, in one run: wall time and peak
# RSS (GNU time) per input, and the load average before and after.
#
# Usage: bench/huge_expr.sh BASE_BIN [NEW_BIN]   (NEW_BIN default target/release/hip-unroll)
# Environment: RUNS (default 3) runs per binary and input, MB (default 10) expression size.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=${1:?usage: bench/huge_expr.sh BASE_BIN [NEW_BIN]}
NEW=${2:-"$ROOT/target/release/hip-unroll"}
RUNS=${RUNS:-3}
MB=${MB:-10}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

python3 - "$DIR" "$MB" <<'PY'
import sys
d, mb = sys.argv[1], int(sys.argv[2])
n = mb << 20
k = "__global__ void k(float* a, float x, int* c, int n) {\n  for (int i = 0; i < n; ++i) {\n    a[i] = %s;\n  }\n}\n"
half = "x" + " + x" * (n // 8)
open(f"{d}/sum.cu", "w").write(k % (half + " + threadIdx.x % 32 + atomicAdd(c, 1) + " + half))
open(f"{d}/nest.cu", "w").write(k % ("(" * (n // 2) + "x % 32" + ")" * (n // 2)))
open(f"{d}/flat.cu", "w").write(k % ("x" + " + x" * (n // 4)))
PY
echo "inputs: $(ls -l "$DIR"/*.cu | awk '{printf "%s %d bytes; ", $9, $5}')"
echo "$(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for input in sum nest flat; do
    for i in $(seq 1 "$RUNS"); do
        for which in base new; do
            bin=$BASE; [ "$which" = new ] && bin=$NEW
            # One analysis thread where the binary has the option (one file: one thread anyway).
            threads=(); "$bin" check --help | grep -q -- --threads && threads=(--threads 1)
            set +e
            /usr/bin/time -f "$input $which %e s %M KB %x" "$bin" check --format json "${threads[@]}" \
                "$DIR/$input.cu" > /dev/null 2>> "$DIR/times.txt"
            set -e
        done
    done
done
grep -E '^(sum|nest|flat) ' "$DIR/times.txt" | python3 -c '
import sys, statistics, collections
t = collections.defaultdict(list)
for line in sys.stdin:
    inp, which, secs, _, kb, _, code = line.split()
    if code not in ("0", "1"):
        sys.exit(f"{which} exited {code} on {inp}")
    t[(inp, which)].append((float(secs), int(kb)))
for inp in ("sum", "nest", "flat"):
    for which in ("base", "new"):
        r = t[(inp, which)]
        print(f"{inp:5s} {which:4s} wall median {statistics.median(x[0] for x in r):6.2f} s, "
              f"peak RSS median {statistics.median(x[1] for x in r) / 1024:7.1f} MB ({len(r)} runs)")
'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
