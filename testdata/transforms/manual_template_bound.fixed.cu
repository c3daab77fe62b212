// hip-unroll-test: loop=5 factor=4 mode=manual
// A template parameter bound is a constant of the kernel.
template <int BLOCK>
__global__ void tmpl(float* a) {
    {
        int i = 0;
        for (; i <= 2147483644 && (i >= 0 || (i + 3) < 0) && (i + 3) < BLOCK; i += 4) {
            {
                a[i] *= 2.0f;
            }
            {
                a[(i + 1)] *= 2.0f;
            }
            {
                a[(i + 2)] *= 2.0f;
            }
            {
                a[(i + 3)] *= 2.0f;
            }
        }
        for (; i < BLOCK; ++i) {
            a[i] *= 2.0f;
        }
    }
}
template __global__ void tmpl<64>(float*);
