// hip-unroll-test: loop=4 factor=4 mode=manual
// Constant trip count 10, not divisible by 4: general form with a remainder loop.
__global__ void ten(float* a) {
    for (int i = 0; i < 10; ++i) {
        a[i] += 1.0f;
    }
}
