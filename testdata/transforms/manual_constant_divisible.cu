// hip-unroll-test: loop=5 factor=4 mode=manual
// Constant trip count 16, divisible by 4: no remainder loop and no guard.
#define TILE 16
__global__ void tile(float* a) {
    for (int i = 0; i < TILE; ++i) {
        a[i] += 1.0f;
    }
}
