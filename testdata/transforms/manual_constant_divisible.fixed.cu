// hip-unroll-test: loop=5 factor=4 mode=manual
// Constant trip count 16, divisible by 4: no remainder loop and no guard.
#define TILE 16
__global__ void tile(float* a) {
    for (int i = 0; i < TILE; i += 4) {
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
}
