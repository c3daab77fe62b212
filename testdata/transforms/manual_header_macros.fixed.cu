// hip-unroll-test: loop=6 factor=4 mode=manual
// Macros and helpers of a header that copies may repeat: a constant step, a pure macro, a
// macro that accumulates into a local, a helper that takes a local by reference.
#include "headers/tu_macros.h"
__global__ void k(float* a, const float* b, int n) {
    {
        int i = 0;
        const unsigned long long hu_unroll_6_step = (unsigned long long)(TU_TILE);
        for (; hu_unroll_6_step <= 4294967295ull && (long long)(i) + (long long)(3ull * hu_unroll_6_step) <= 2147483647ll && ((int)((long long)(i) + (long long)(3ull * hu_unroll_6_step))) < n; i += TU_TILE) {
            {
                float acc = 0.0f;
                TU_ACC(TU_SCALE(b[i]));
                tu_accumulate(acc, tu_twice(b[i]));
                a[i] = acc;
            }
            i += TU_TILE;
            {
                float acc = 0.0f;
                TU_ACC(TU_SCALE(b[i]));
                tu_accumulate(acc, tu_twice(b[i]));
                a[i] = acc;
            }
            i += TU_TILE;
            {
                float acc = 0.0f;
                TU_ACC(TU_SCALE(b[i]));
                tu_accumulate(acc, tu_twice(b[i]));
                a[i] = acc;
            }
            i += TU_TILE;
            {
                float acc = 0.0f;
                TU_ACC(TU_SCALE(b[i]));
                tu_accumulate(acc, tu_twice(b[i]));
                a[i] = acc;
            }
        }
        for (; i < n; i += TU_TILE) {
            float acc = 0.0f;
            TU_ACC(TU_SCALE(b[i]));
            tu_accumulate(acc, tu_twice(b[i]));
            a[i] = acc;
        }
    }
}
