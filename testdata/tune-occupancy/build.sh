#!/bin/sh
# The "build" of the occupancy example (tests/tune_policy.rs): a CPU harness whose figure the
# test controls. The GPU kernel occ.cu is only compiled, by the code-object gates (hipcc,
# gfx90a); this build writes the time the "run" (`cat time.txt`) reports, from the kernel's
# text: 5.0 ms for the loop unrolled by `#pragma unroll 4`, 10.0 ms for anything else.
if grep -q '^ *#pragma unroll 4$' occ.cu; then
    echo 'time: 5.0 ms' > time.txt
else
    echo 'time: 10.0 ms' > time.txt
fi
