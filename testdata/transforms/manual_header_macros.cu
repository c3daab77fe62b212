// hip-unroll-test: loop=6 factor=4 mode=manual
// Macros and helpers of a header that copies may repeat: a constant step, a pure macro, a
// macro that accumulates into a local, a helper that takes a local by reference.
#include "headers/tu_macros.h"
__global__ void k(float* a, const float* b, int n) {
    for (int i = 0; i < n; i += TU_TILE) {
        float acc = 0.0f;
        TU_ACC(TU_SCALE(b[i]));
        tu_accumulate(acc, tu_twice(b[i]));
        a[i] = acc;
    }
}
