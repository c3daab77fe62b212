// hip-unroll-test: loop=4 factor=4 mode=manual
// Constant trip count 10, not divisible by 4: general form with a remainder loop.
__global__ void ten(float* a) {
    {
        int i = 0;
        for (; i <= 2147483644 && (i + 3) < 10; i += 4) {
            {
                a[i] += 1.0f;
            }
            {
                a[(i + 1)] += 1.0f;
            }
            {
                a[(i + 2)] += 1.0f;
            }
            {
                a[(i + 3)] += 1.0f;
            }
        }
        for (; i < 10; ++i) {
            a[i] += 1.0f;
        }
    }
}
