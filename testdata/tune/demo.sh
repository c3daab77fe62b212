#!/usr/bin/env bash
# The README's first command: `hip-unroll tune` on the example repository (testdata/tune), run
# on a scratch copy so that this repository stays clean; the ledger and the working copies go
# under target/tune-demo (a second run reuses every decision and compiles nothing). Prints the
# diff of the accepted edits on stdout and the report on stderr.
# Needs clang++-19 (the example's build) and, for the code-object gates, hipcc; as root it
# installs them the way .ci/run does. Extra arguments go to `tune` (e.g. --format markdown).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if ! command -v clang++-19 >/dev/null 2>&1 || ! command -v hipcc >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq clang-19 hipcc libamdhip64-dev rocm-device-libs >/dev/null
    else
        echo "demo: needs clang++-19 and hipcc; run as root to install them (as .ci/run does)" >&2
        exit 2
    fi
fi
(cd "$repo" && cargo build --release --quiet)
work=$(mktemp -d "${TMPDIR:-/tmp}/hip-unroll-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$here"/*.cu "$here"/driver.cpp "$here"/build.sh "$here"/expected.txt "$here"/.gitignore "$work"/
cd "$work"
# --max-noise 50: shared machines (CI, laptops with a browser) are noisy; the statistics
# still control false accepts, they only need more runs.
"$repo/target/release/hip-unroll" tune \
    --build "HIP_HOST_DIR=$repo/testdata/transforms sh build.sh" \
    --run ./app \
    --check 'cmp -s out.txt expected.txt' \
    --time-regex 'time: ([0-9.]+)' --time-unit ms \
    --factors 4 --max-noise 50 \
    --state "$repo/target/tune-demo" \
    --diff "$@"
