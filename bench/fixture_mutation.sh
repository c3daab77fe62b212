#!/bin/sh
# Mutation check of issue 26's fixtures (items 1-3): every fixture added for them must pass with
# the binary of this branch and FAIL with the binary built before the fixes (main at 320f6ce),
# and every loop they expect blocked that the old binary let `unroll` rewrite is refused now.
#
# Usage: bench/fixture_mutation.sh [BASE_BIN] [NEW_BIN]
#   BASE_BIN  default /work/wt/reach-base/target/release/hip-unroll, built once with
#               git worktree add --detach /work/wt/reach-base 320f6ce
#               cp -a target /work/wt/reach-base/target   # its own copy of the build cache
#               (cd /work/wt/reach-base && cargo build --release --bin hip-unroll)
#   NEW_BIN   default target/release/hip-unroll of this tree (cargo build --release first)
# Prints one line per fixture and binary, the counts, and exits 1 when a new fixture passes with
# the old binary (it would check nothing) or fails with the new one.
set -eu
cd "$(dirname "$0")/.."
BASE=${1:-/work/wt/reach-base/target/release/hip-unroll}
NEW=${2:-target/release/hip-unroll}
FIXTURES="
testdata/check/barrier/member_templates.cu
testdata/check/barrier/functors.cu
testdata/check/barrier/raii.cu
testdata/check/barrier/receiver_types.cu
testdata/check/barrier/namespaces.cu
testdata/check/barrier/macro_specifiers.cu
testdata/check/barrier/macro_kernels.cu
testdata/check/barrier/pragma_macros.cu
testdata/check/barrier/asm_reach.cu
testdata/check/atomic/inline_asm.cu
testdata/check/dynamic-lds/returned_pointers.cu
testdata/check/tu/unresolved_callees.cu
testdata/check/barrier/template_parameters.cu
testdata/check/barrier/template_lambdas.cu
testdata/check/dynamic-lds/template_lambdas.cu
testdata/check/atomic/operators.cu
testdata/check/barrier/virtual_and_fields.cu
testdata/check/dynamic-lds/held_objects.cu
testdata/check/barrier/block_collectives.cu
testdata/check/atomic/function_pointers.cu
testdata/check/barrier/member_pointers.cu
testdata/check/candidate/indirect_unresolved.cu
testdata/check/tu/namespace_macros.cu
testdata/check/tu/header_specifiers.cu
testdata/check/dynamic-lds/shared_macros.cu
testdata/check/barrier/function_template_arguments.cu
testdata/check/barrier/cutlass_barriers.cu
testdata/check/barrier/library_wrappers.cu
testdata/check/atomic/unseen_wrappers.cu
testdata/check/barrier/range_for.cu
testdata/check/barrier/conversions.cu
testdata/check/barrier/function_results.cu
testdata/check/barrier/specialisations.cu
testdata/check/barrier/host_code.cu
testdata/check/barrier/pointer_members.cu
testdata/check/barrier/global_objects.cu
testdata/check/tu/typed_specifier_macros.cu
testdata/check/barrier/conditional_braces.cu
testdata/check/barrier/target_macros.cu
testdata/check/barrier/alternative_heads.cu
"
for b in "$BASE" "$NEW"; do
    [ -x "$b" ] || { echo "no binary at $b (see the usage at the top of $0)" >&2; exit 2; }
done
status=0
echo "== new binary ($NEW): every fixture must pass"
python3 bench/fixture_check.py "$NEW" $FIXTURES || status=1
echo "== base binary ($BASE): every fixture must fail"
out=$(python3 bench/fixture_check.py "$BASE" $FIXTURES || true)
echo "$out"
if echo "$out" | grep -q '^PASS '; then
    echo "a new fixture passes with the base binary: it checks nothing the fixes changed"
    status=1
fi
echo "== loops each fixture expects blocked: unroll --factor 4 (pragma mode), base vs new"
python3 - "$BASE" "$NEW" $FIXTURES <<'EOF' || status=1
import json, subprocess, sys
base, new, files = sys.argv[1], sys.argv[2], sys.argv[3:]
rewritten = refused_now = total = bad = 0
for path in files:
    out = json.loads(subprocess.run([new, "check", "--format", "json", "--fail-on", "error", path],
                                    capture_output=True, text=True).stdout)
    ids = [l["id"] for f in out["files"] for fn in f["functions"] for l in fn["loops"]
           if l["blockers"]]
    for i in dict.fromkeys(ids):
        total += 1
        old = subprocess.run([base, "unroll", path, "--loop", i, "--factor", "4"],
                             capture_output=True, text=True)
        cur = subprocess.run([new, "unroll", path, "--loop", i, "--factor", "4"],
                             capture_output=True, text=True)
        if old.returncode == 0:
            rewritten += 1
            print(f"  {path} {i}: base rewrote it (exit 0); new: exit {cur.returncode}")
        if cur.returncode == 1 and "[guard-blocked]" in cur.stderr:
            refused_now += 1
        else:
            bad += 1
            print(f"  {path} {i}: NEW DOES NOT REFUSE: exit {cur.returncode} {cur.stderr.strip()[:160]}")
print(f"blocked loops: {total}; rewritten by base with exit 0: {rewritten}; "
      f"refused (exit 1, guard-blocked) by new: {refused_now}")
sys.exit(1 if bad else 0)
EOF
exit $status
