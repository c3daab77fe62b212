// hip-unroll-test: loop=6 factor=4 mode=manual expect=unseen-macro
// An include was not found, and the body calls `skip_bad`, defined nowhere visible: it may be
// a function-like macro of that header.
#include "headers/not_there.h"
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; i++) { skip_bad(a[i]); a[i] += 1.0f; }
}
