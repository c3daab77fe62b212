#!/usr/bin/env bash
# Regenerates docs/tune-report.png, the README's screenshot of `tune --format html`: runs the
# README's demo tune (testdata/tune, as testdata/tune/demo.sh does: real timings on this
# machine, on a scratch copy) with the report as HTML, then screenshots the page with Debian's
# headless Chromium (the browser tests/tune_html.rs drives; `.ci/run` installs it). The page is
# kept as target/tune-report/tune.html, the ledger in target/tune-report (a second run reuses
# every decision). Needs clang++-19 and hipcc (.ci/run installs them).
# Usage: bash docs/tune-report.sh [WIDTHxHEIGHT] (default 1280x1800).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-1280x1800}
for tool in chromium clang++-19 hipcc; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "tune-report: needs $tool (bash .ci/run installs it)" >&2
        exit 2
    fi
done
(cd "$repo" && cargo build --release --quiet)
out="$repo/target/tune-report"
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/hip-unroll-report.XXXXXX")
trap 'rm -rf "$work"' EXIT
src="$repo/testdata/tune"
cp "$src"/*.cu "$src"/driver.cpp "$src"/build.sh "$src"/expected.txt "$src"/.gitignore "$work"/
# --max-noise 100: a shared machine is noisy; the statistics still control false accepts, they
# only need more runs. --dry-run: the scratch copy is thrown away anyway.
(cd "$work" && "$repo/target/release/hip-unroll" tune \
    --build "HIP_HOST_DIR=$repo/testdata/transforms sh build.sh" \
    --run ./app \
    --check 'cmp -s out.txt expected.txt' \
    --time-regex 'time: ([0-9.]+)' --time-unit ms \
    --factors 4 --max-noise 100 --dry-run \
    --state "$out/state" \
    --format html -o "$out/tune.html")
# As root Chromium needs --no-sandbox; the rest keeps a machine without network quiet.
mkdir -p "$work/profile"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$work/profile" --window-size="${size/x/,}" \
    --screenshot="$repo/docs/tune-report.png" "file://$out/tune.html" 2>/dev/null
echo "wrote docs/tune-report.png ($size) from target/tune-report/tune.html"
