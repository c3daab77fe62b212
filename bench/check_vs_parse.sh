#!/usr/bin/env bash
# Benchmark: `hip-unroll check --format json` (all cores) against a bare single-threaded
# tree-sitter-cuda parse (bench/bare-parse) of the same files, in one run; plus the latency of a
# single-file check (process start included) against a no-op process.
#
# Usage: bench/check_vs_parse.sh [CORPUS_DIR]   (default /work/corpus)
# Environment: RUNS (default 5) timed runs per command, WARMUP (default 1), LAT_RUNS (default
#   200) for the single-file latency, LAT_FILE (default: testdata/examples/*.hip or *.cu, else the corpus
#   file nearest the median size), OUT (default /tmp/check_vs_parse) for hyperfine's JSON and the
#   summary, SKIP_BUILD=1 to use the binaries already in target/release, BARE_ONLY=1 to time only
#   the bare parse (before `check` exists), BARE_BIN / CHECK_BIN to time other binaries.
# Needs hyperfine (Debian: apt-get install -y hyperfine) and python3.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=$(cd "${1:-/work/corpus}" && pwd)
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
LAT_RUNS=${LAT_RUNS:-200}
OUT=${OUT:-/tmp/check_vs_parse}
BARE=${BARE_BIN:-"$ROOT/target/release/bare-parse"}
CHECK=${CHECK_BIN:-"$ROOT/target/release/hip-unroll"}
mkdir -p "$OUT"

command -v hyperfine >/dev/null || { echo "hyperfine not found (apt-get install -y hyperfine)" >&2; exit 2; }

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    if [ "${BARE_ONLY:-0}" = 1 ]; then
        (cd "$ROOT" && cargo build --release -q -p bare-parse)
    else
        (cd "$ROOT" && cargo build --release -q -p bare-parse -p hip-unroll)
    fi
fi

# The file list: what a directory walk of `check` picks up (src/cli/check.rs EXTENSIONS, any case).
LIST="$OUT/files.txt"
find "$CORPUS" -type f \( -iname '*.cu' -o -iname '*.cuh' -o -iname '*.hip' -o -iname '*.cpp' \
    -o -iname '*.cc' -o -iname '*.cxx' -o -iname '*.c++' -o -iname '*.cp' -o -iname '*.h' \
    -o -iname '*.hh' -o -iname '*.hpp' -o -iname '*.hxx' -o -iname '*.h++' -o -iname '*.inl' \
    -o -iname '*.ipp' -o -iname '*.tpp' -o -iname '*.tcc' -o -iname '*.txx' \) \
    -not -path '*/.*' | LC_ALL=C sort > "$LIST"
FILES=$(wc -l < "$LIST")
BYTES=$(tr '\n' '\0' < "$LIST" | xargs -0 cat | wc -c)
echo "corpus: $CORPUS: $FILES files, $BYTES bytes; $(nproc) cores"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before: $LOAD_BEFORE"

"$BARE" --list "$LIST"

CMDS=(-n bare-parse "$BARE --quiet --list $LIST")
if [ "${BARE_ONLY:-0}" != 1 ]; then
    # `check` gets the directory (its own parallel walk is part of its cost); first make sure
    # it sees exactly the same files and neither crashes nor exits 2.
    set +e
    "$CHECK" check --format json --no-ignore "$CORPUS" > "$OUT/check.json" 2> "$OUT/check.stderr"
    rc=$?
    set -e
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        echo "check exited $rc on the corpus; stderr:" >&2
        head -20 "$OUT/check.stderr" >&2
        exit 1
    fi
    python3 - "$OUT/check.json" "$LIST" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
seen = {f["path"] for f in doc["files"]}
want = {l.strip() for l in open(sys.argv[2]) if l.strip()}
if seen != want:
    print(f"check saw {len(seen)} files, the list has {len(want)}; "
          f"only check: {sorted(seen - want)[:3]}, only list: {sorted(want - seen)[:3]}", file=sys.stderr)
    sys.exit(1)
parsed = sum(1 for f in doc["files"] if f.get("parsed", True))
print(f"check reports the same {len(seen)} files; it parses {parsed} of them by default "
      f"({len(seen) - parsed} have no __global__/__device__/__launch_bounds__ and are skipped)")
EOF
    CMDS+=(-n check "$CHECK check --format json --no-ignore $CORPUS > /dev/null")
    # The same work as bare-parse (every file parsed), when this check has --parse-all.
    if "$CHECK" check --help 2>/dev/null | grep -q -- '--parse-all'; then
        CMDS+=(-n check-parse-all "$CHECK check --format json --no-ignore --parse-all $CORPUS > /dev/null")
    fi
fi

hyperfine --style basic --ignore-failure --warmup "$WARMUP" --runs "$RUNS" \
    --export-json "$OUT/corpus.json" "${CMDS[@]}"

LAT_SUMMARY=""
if [ "${BARE_ONLY:-0}" != 1 ]; then
    if [ -z "${LAT_FILE:-}" ]; then
        LAT_FILE=$(ls "$ROOT"/testdata/examples/*.hip "$ROOT"/testdata/examples/*.cu 2>/dev/null | head -1 || true)
    fi
    if [ -z "${LAT_FILE:-}" ]; then
        LAT_FILE=$(tr '\n' '\0' < "$LIST" | xargs -0 wc -c | grep -v ' total$' | sort -n \
            | awk '{a[NR]=$2} END {print a[int((NR+1)/2)]}')
    fi
    echo "single-file latency on $LAT_FILE ($(wc -c < "$LAT_FILE") bytes)"
    hyperfine --style basic -N --ignore-failure --warmup 20 --runs "$LAT_RUNS" \
        --export-json "$OUT/single.json" \
        -n noop "true" -n check-one-file "$CHECK check --format json $LAT_FILE"
    LAT_SUMMARY="$OUT/single.json"
fi
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT/corpus.json" "$LAT_SUMMARY" "$FILES" "$BYTES" "$LOAD_BEFORE" "$LOAD_AFTER" \
    "$(nproc)" <<'EOF' | tee "$OUT/summary.txt"
import json, sys
corpus, single, files, nbytes, load_before, load_after, cores = sys.argv[1:8]
files, nbytes = int(files), int(nbytes)
res = {r["command"]: r for r in json.load(open(corpus))["results"]}
print(f"files={files} bytes={nbytes} cores={cores} load_before={load_before} load_after={load_after}")
for name, r in res.items():
    print(f"{name:11s} median {r['median']:.3f} s (min {r['min']:.3f}, max {r['max']:.3f}, "
          f"{len(r['times'])} runs; user {r['user']:.2f} s, sys {r['system']:.2f} s)  "
          f"{files / r['median']:.0f} files/s  {nbytes / r['median'] / 1e6:.1f} MB/s")
for name in ("check", "check-parse-all"):
    if name not in res:
        continue
    ratio = res[name]["median"] / res["bare-parse"]["median"]
    best = res[name]["min"] / res["bare-parse"]["min"]
    print(f"ratio {name}/bare-parse: medians {ratio:.3f}, minima {best:.3f}  (target <= 0.6): "
          f"{'MET' if ratio <= 0.6 else 'NOT MET'}")
    cpu = lambda r: r["user"] + r["system"]
    cpu_ratio = cpu(res[name]) / cpu(res["bare-parse"])
    print(f"  CPU (user+sys) {name}/bare-parse: {cpu_ratio:.3f}; on {cores} idle cores with perfect "
          f"scaling the wall ratio would be {cpu_ratio / int(cores):.3f} (steadier under load)")
if single:
    s = {r["command"]: r for r in json.load(open(single))["results"]}
    noop, one = s["noop"], s["check-one-file"]
    print(f"single-file check: median {one['median'] * 1e3:.2f} ms (mean {one['mean'] * 1e3:.2f}, "
          f"max {one['max'] * 1e3:.2f}); no-op process: median {noop['median'] * 1e3:.2f} ms "
          f"(target well under 20 ms): {'MET' if one['median'] < 0.020 else 'NOT MET'}")
EOF
