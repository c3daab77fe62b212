#!/usr/bin/env bash
# False accepts of `tune` measured for real (issue 21): an A/A experiment on the CPU example
# (testdata/tune) under generated background load (bench/load.py: a spinning hog per core plus
# random bursts of extra processes).
#
# MODE=aa (default): the tuned loop is in `aa.cu`, a kernel file that the example's build never
# reads (driver.cpp includes chain/rowsum/scale/tile only). Every variant therefore builds a
# program byte-identical to the baseline's (checked after each tune: every working copy's `app`
# has the same sha256), so every accept is false. Factors 2,4,8 x pragma,manual: 6 comparisons
# per tune, each against a fresh baseline measurement.
# MODE=layout: the tuned loop is scale:0 (testdata/tune/scale.cu), a kernel of microseconds in a
# run of ~35 ms: its variants change the program's code, not its speed. Accepts here are what
# code layout (or anything else the variant moves) does to the timings.
#
# Usage: bench/aa_false_accepts.sh [TUNES]   (default 100)
# Env: MODE=aa|layout, LOAD=1|0 (default 1), SEED, OUT (results directory), FACTORS (2,4,8),
#      EXTRA (more tune arguments), BIN (hip-unroll binary; default: a copy of target/release).
# Prints one line per tune and a summary; OUT/comparisons.tsv has one row per comparison.
# Needs clang++-19 (the example's build) and hipcc (the gates; objects are cached in OUT).
set -euo pipefail
N=${1:-100}
MODE=${MODE:-aa}
LOAD=${LOAD:-1}
SEED=${SEED:-1}
FACTORS=${FACTORS:-2,4,8}
repo=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/aa-$MODE.XXXXXX")}
mkdir -p "$OUT"
if [ -z "${BIN:-}" ]; then
    (cd "$repo" && cargo build --release --quiet)
    # A private copy: a rebuild of the worktree during a long experiment must not change it.
    cp "$repo/target/release/hip-unroll" "$OUT/hip-unroll"
    BIN=$OUT/hip-unroll
fi
work=$OUT/tree
rm -rf "$work" && mkdir -p "$work"
cp "$repo"/testdata/tune/*.cu "$repo"/testdata/tune/driver.cpp "$repo"/testdata/tune/build.sh \
    "$repo"/testdata/tune/expected.txt "$repo"/testdata/tune/.gitignore "$work"/
case "$MODE" in
aa)
    # scale.cu's kernel under another name, in a file no build reads.
    sed 's/void scale(/void aa_scale(/' "$repo/testdata/tune/scale.cu" > "$work/aa.cu"
    paths=(aa.cu)
    ;;
layout) paths=(scale.cu) ;;
*) echo "MODE must be aa or layout" >&2; exit 2 ;;
esac
printf '[compile]\ncache-dir = "%s"\n' "$OUT/objects" > "$work/hip-unroll.toml"

loadpid=
cleanup() {
    if [ -n "$loadpid" ]; then kill "$loadpid" 2>/dev/null || true; wait "$loadpid" 2>/dev/null || true; fi
}
trap cleanup EXIT
{
    echo "date: $(date -Is)"
    echo "binary: $BIN ($(cd "$repo" && git rev-parse --short HEAD))"
    echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "mode: $MODE, tunes: $N, factors: $FACTORS, load: $LOAD, seed: $SEED"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "processes visible here, by CPU (other sessions may share the cores unseen: see the load average):"
    top -b -n1 -o %CPU | sed -n '8,13p' | sed 's/^/  /'
} | tee "$OUT/setup.txt"
if [ "$LOAD" = 1 ]; then
    python3 "$repo/bench/load.py" --seed "$SEED" 2>>"$OUT/setup.txt" &
    loadpid=$!
    sleep 1
fi

cd "$work"
printf 'tune\tloop\tmode\tfactor\tstatus\tspeedup\tp_value\truns\treason\n' > "$OUT/comparisons.tsv"
: > "$OUT/tunes.tsv"
for i in $(seq 1 "$N"); do
    state=$OUT/state
    rm -rf "$state"
    t0=$(date +%s.%N)
    set +e
    "$BIN" tune \
        --build "HIP_HOST_DIR=$repo/testdata/transforms sh build.sh" \
        --run ./app --check 'cmp -s out.txt expected.txt' \
        --time-regex 'time: ([0-9.]+)' --time-unit ms \
        --factors "$FACTORS" --max-noise 50 --dry-run \
        --state "$state" --format json ${EXTRA:-} "${paths[@]}" \
        > "$OUT/report.json" 2> "$OUT/stderr.txt"
    rc=$?
    set -e
    secs=$(echo "$(date +%s.%N) - $t0" | bc)
    mkdir -p "$OUT/ledgers"
    cp "$state/ledger.db" "$OUT/ledgers/$i.db" 2>/dev/null || true
    sqlite3 "$OUT/ledgers/$i.db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null 2>&1 || true
    apps=$(sha256sum "$state"/slots/*/tree/app 2>/dev/null | cut -d' ' -f1 | sort -u | wc -l)
    python3 - "$OUT" "$i" "$rc" "$secs" "$apps" "$MODE" <<'PY'
import json, sys
out, i, rc, secs, apps, mode = sys.argv[1:]
line = f"{i}\trc={rc}\t{float(secs):.0f}s\tapps={apps}\tload={open('/proc/loadavg').read().split()[0]}"
if rc == "0":
    r = json.load(open(f"{out}/report.json"))
    with open(f"{out}/comparisons.tsv", "a") as f:
        for c in r["candidates"]:
            if c["status"] in ("accepted", "rejected"):
                f.write("\t".join(str(x) for x in [i, c["loop"], c.get("mode"), c.get("factor"),
                    c["status"], c.get("speedup"), c.get("p_value"), c.get("runs"),
                    c.get("reason") or ""]) + "\n")
        st = [f"{c.get('mode')}x{c.get('factor')}:{c['status'][:3]}" for c in r["candidates"]]
    line += f"\tbaseline={r['baseline']['figure']:.2f}\t" + " ".join(st)
else:
    line += "\t" + open(f"{out}/stderr.txt").read().strip().splitlines()[-1][:200]
print(line)
with open(f"{out}/tunes.tsv", "a") as f:
    f.write(line + "\n")
PY
    if [ "$MODE" = aa ] && [ "$rc" = 0 ] && [ "$apps" != 1 ]; then
        echo "A/A broken: the working copies' programs differ ($apps distinct)" >&2
        exit 1
    fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/setup.txt"
python3 "$repo/bench/aa_summary.py" "$OUT" | tee "$OUT/summary.txt"
