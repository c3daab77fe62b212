// hip-unroll-test: loop=6 factor=4 mode=manual expect=macro-in-body
// Issue 17: `SKIP_IF` comes from a header and hides a `continue` (the copies' `continue` would
// skip the rest of the unrolled group).
#include "headers/tu_macros.h"
__global__ void scale_skip(float* a, int n) {
    for (int i = 0; i < n; i++) { SKIP_IF(a[i] > 3); a[i] = a[i] * 2; }
}
