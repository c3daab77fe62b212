// hip-unroll-test: loop=5 factor=2
// do-while loop.
__global__ void k(float* a, int n) {
    int i = 0;
    do {
        a[i] = 1.0f;
    } while (++i < n);
}
