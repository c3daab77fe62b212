// hip-unroll-test: loop=5 factor=4 mode=manual expect=macro-in-body
// Issue 17: `BAIL_OUT` comes from a header and hides a `break` (the remainder would restart).
#include "headers/tu_macros.h"
__global__ void scale_bail(float* a, int n) {
    for (int i = 0; i < n; i++) { if (a[i] > 3) BAIL_OUT; a[i] = a[i] * 2; }
}
