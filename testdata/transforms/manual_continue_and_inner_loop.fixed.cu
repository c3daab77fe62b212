// hip-unroll-test: loop=5 factor=4 mode=manual
// `continue` of the unrolled loop becomes a jump to the next copy; the inner loop's stays.
__global__ void sum_pos(const float* a, float* out, int n) {
    float acc = 0.0f;
    {
        int i = 0;
        for (; i <= 2147483644 && (i + 3) < n; i += 4) {
            {
                if (a[i] < 0.0f) goto hu_unroll_5_next0;
                for (int k = 0; k < 4; ++k) {
                    if (k == 2) continue;
                    acc += a[i] * (float)k;
                }
            }
            hu_unroll_5_next0: ;
            {
                if (a[(i + 1)] < 0.0f) goto hu_unroll_5_next1;
                for (int k = 0; k < 4; ++k) {
                    if (k == 2) continue;
                    acc += a[(i + 1)] * (float)k;
                }
            }
            hu_unroll_5_next1: ;
            {
                if (a[(i + 2)] < 0.0f) goto hu_unroll_5_next2;
                for (int k = 0; k < 4; ++k) {
                    if (k == 2) continue;
                    acc += a[(i + 2)] * (float)k;
                }
            }
            hu_unroll_5_next2: ;
            {
                if (a[(i + 3)] < 0.0f) continue;
                for (int k = 0; k < 4; ++k) {
                    if (k == 2) continue;
                    acc += a[(i + 3)] * (float)k;
                }
            }
        }
        for (; i < n; ++i) {
            if (a[i] < 0.0f) continue;
            for (int k = 0; k < 4; ++k) {
                if (k == 2) continue;
                acc += a[i] * (float)k;
            }
        }
    }
    out[0] = acc;
}
