#!/bin/sh
# The "application" of the rocprofv3 test: reports the hot kernel at 10 ms, or 5 ms once its
# loop carries an unroll pragma, with up to 65 us of jitter.
j=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
if grep -q '#pragma unroll' hot.cu; then t=5000000; else t=10000000; fi
echo "hot $((t + j))"
