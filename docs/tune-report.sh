#!/usr/bin/env bash
# Regenerates docs/tune-report.png, the README's screenshot of `tune --format html`: runs the
# README's demo tune (testdata/tune/demo.sh, real timings on this machine) with the report as
# HTML, then screenshots the page with Debian's headless Chromium (the browser tests/tune_html.rs
# drives; `.ci/run` installs it). The page is also kept as target/tune-demo/tune.html.
# Usage: bash docs/tune-report.sh [WIDTHxHEIGHT] (default 1280x1700).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-1280x1700}
if ! command -v chromium >/dev/null 2>&1; then
    echo "tune-report: needs chromium (apt-get install chromium, as .ci/run does)" >&2
    exit 2
fi
mkdir -p "$repo/target/tune-demo"
page="$repo/target/tune-demo/tune.html"
bash "$repo/testdata/tune/demo.sh" --format html -o "$page" >/dev/null
profile=$(mktemp -d "${TMPDIR:-/tmp}/hip-unroll-chromium.XXXXXX")
trap 'rm -rf "$profile"' EXIT
# As root Chromium needs --no-sandbox; the rest keeps a machine without network quiet.
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$profile" --window-size="${size/x/,}" \
    --screenshot="$repo/docs/tune-report.png" "file://$page" 2>/dev/null
echo "wrote docs/tune-report.png ($size) from $page"
