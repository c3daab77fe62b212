#!/usr/bin/env bash
# Transform every candidate loop of corpus files that hipcc compiles as-is for gfx90a, in both
# modes (pragma and manual) with factor 4, and check that each variant still compiles
# (hipcc --offload-arch=gfx90a --genco -O3). Prints counts: loops, guard-blocked loops,
# transformed, refused by reason, compiled, compile failures.
#
# Usage: bench/transform_corpus.sh [MAX_FILES]   (default: every file of the list)
# Env:   HIP_UNROLL (default target/release/hip-unroll), CORPUS_LIST
#        (default /work/corpus/compiles_gfx90a.txt), OUT_DIR (default: a new temp dir; per-variant
#        results in results.tsv, compiler logs of failures in logs/), FACTOR (default 4),
#        FORCE=1 (also transform guard-blocked loops, with --force).
# Nothing is written next to the corpus files: variants go to OUT_DIR and are compiled with
# -I <the original's directory> so that their quoted includes still resolve.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${HIP_UNROLL:-target/release/hip-unroll}
LIST=${CORPUS_LIST:-/work/corpus/compiles_gfx90a.txt}
FACTOR=${FACTOR:-4}
MAX=${1:-0}
OUT=${OUT_DIR:-$(mktemp -d /tmp/transform-corpus.XXXXXX)}
mkdir -p "$OUT/logs" "$OUT/variants"
[ -x "$BIN" ] || { echo "build first: cargo build --release (missing $BIN)" >&2; exit 2; }
# Run a private copy, so that a rebuild during the run cannot change or remove it.
cp "$BIN" "$OUT/hip-unroll"
BIN="$OUT/hip-unroll"
[ -r "$LIST" ] || { echo "cannot read corpus list $LIST" >&2; exit 2; }
command -v hipcc >/dev/null || { echo "hipcc not found" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq not found" >&2; exit 2; }

RES="$OUT/results.tsv"
printf 'file\tloop\tline\tmode\tstatus\tdetail\n' >"$RES"
files=0
n=0
while IFS= read -r f; do
  [ -n "$f" ] || continue
  if [ "$MAX" -gt 0 ] && [ "$files" -ge "$MAX" ]; then break; fi
  files=$((files + 1))
  json=$("$BIN" check --format json --no-hints "$f" 2>/dev/null || true)
  # id, line, verdict, blockers (comma-separated) per loop
  while IFS=$'\t' read -r id line verdict blockers; do
    [ -n "$id" ] || continue
    force=()
    if [ "$verdict" = blocked ] && [ "${FORCE:-0}" = 1 ]; then
      printf '%s\t%s\t%s\t-\tblocked\t%s\n' "$f" "$id" "$line" "$blockers" >>"$RES"
      force=(--force)
    elif [ "$verdict" = blocked ]; then
      printf '%s\t%s\t%s\t-\tblocked\t%s\n' "$f" "$id" "$line" "$blockers" >>"$RES"
      continue
    fi
    for mode in pragma manual; do
      n=$((n + 1))
      ext="${f##*.}"
      var="$OUT/variants/v$n.$ext"
      err=$("$BIN" unroll "$f" --loop "$id" --factor "$FACTOR" --mode "$mode" "${force[@]}" -o "$var" 2>&1 >/dev/null) && rc=0 || rc=$?
      if [ "$rc" -eq 1 ]; then
        reason=$(printf '%s' "$err" | grep -o '\[[a-z0-9-]*\]$' | tr -d '[]' | head -1)
        printf '%s\t%s\t%s\t%s\trefused\t%s\n' "$f" "$id" "$line" "$mode" "${reason:-guard}" >>"$RES"
        continue
      elif [ "$rc" -ne 0 ]; then
        printf '%s\t%s\t%s\t%s\terror\t%s\n' "$f" "$id" "$line" "$mode" "$(printf '%s' "$err" | head -1)" >>"$RES"
        continue
      fi
      if cmp -s "$f" "$var"; then
        printf '%s\t%s\t%s\t%s\tunchanged\t-\n' "$f" "$id" "$line" "$mode" >>"$RES"
        continue
      fi
      if timeout 120 hipcc --offload-arch=gfx90a --genco -O3 -I "$(dirname "$f")" "$var" -o "$OUT/variants/v$n.hsaco" \
        >"$OUT/logs/v$n.log" 2>&1; then
        printf '%s\t%s\t%s\t%s\tcompiled\t-\n' "$f" "$id" "$line" "$mode" >>"$RES"
        rm -f "$OUT/logs/v$n.log" "$OUT/variants/v$n.hsaco"
      else
        printf '%s\t%s\t%s\t%s\tcompile-failed\tlogs/v%s.log\n' "$f" "$id" "$line" "$mode" "$n" >>"$RES"
      fi
    done
  done < <(printf '%s' "$json" | jq -r '.files[].functions[].loops[] | [.id, (.line|tostring), .verdict, (.blockers|join(","))] | @tsv' 2>/dev/null)
done <"$LIST"

echo "files: $files   results: $RES"
awk -F'\t' 'NR > 1 {
  if ($5 == "blocked") { blocked++; split($6, b, ","); for (i in b) by_rule[b[i]]++; next }
  loops[$1 SUBSEP $2] = 1
  tried[$4]++
  if ($5 == "refused") { refused[$4]++; reasons[$4 " " $6]++ }
  else if ($5 == "error") { errors[$4]++ }
  else if ($5 == "unchanged") { unchanged[$4]++; transformed[$4]++ }
  else { transformed[$4]++; if ($5 == "compiled") compiled[$4]++; else failed[$4]++ }
}
END {
  n = 0; for (k in loops) n++
  printf "loops tried: %d   guard-blocked loops: %d", n, blocked
  for (r in by_rule) printf "  [%s: %d]", r, by_rule[r]
  printf "\n"
  for (m in tried) {
    printf "%s x'"$FACTOR"': tried %d, transformed %d (unchanged %d), compiled %d, compile-failed %d, refused %d, errors %d\n", \
      m, tried[m], transformed[m], unchanged[m], compiled[m], failed[m], refused[m], errors[m]
  }
  for (r in reasons) printf "  refused %s: %d\n", r, reasons[r]
}' "$RES"
