// hip-unroll-test: loop=6 factor=4 mode=manual expect=unseen-macro
// `STEP_CHECK` is defined nowhere the tool can see (a system header or the command line): it
// could hide a jump or read `i`.
#include <hip/hip_runtime.h>
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; i++) { STEP_CHECK(a[i]); a[i] += 1.0f; }
}
